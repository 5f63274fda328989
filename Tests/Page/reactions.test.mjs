// What a message's reactions show (Public/js/reactions.js), with Node's own test runner.
import assert from "node:assert/strict";
import { test } from "node:test";
import { chipLabel, chipsFor, isReactionEntry, reactionEchoText, toggleOf, whoReacted } from "../../Public/js/reactions.js";
import { outboxFrom, pendingIn, reactionEntries } from "../../Public/js/outbox.js";

const message = (reactions) => ({ id: 7, chatId: 1, text: "lunch?", reactions });
const entry = (outboxId, action, text, state = "queued", { messageId = 7, account = "primary" } = {}) => ({
  outboxId, account, chatId: 1, text, state, createdAt: "2026-12-06T08:00:00.000Z", error: null, action, messageId,
});
const thumbs = { key: "👍", count: 2, mine: false, senders: ["Carol", "Dan"] };

test("stored reactions show as they are counted, in their order", () => {
  const chips = chipsFor(message([thumbs, { key: "🎉", count: 1, mine: true, senders: ["Me"] }]), "primary");
  assert.deepEqual(chips.map((chip) => [chip.key, chip.count, chip.mine, chip.sending]), [["👍", 2, false, false], ["🎉", 1, true, false]]);
});

test("a reaction given here shows at once, counted once, and a new key is added at the end", () => {
  const chips = chipsFor(message([thumbs]), "primary", [entry(1, "react", "👍"), entry(2, "react", "👀"), entry(3, "react", "👍")]);
  assert.deepEqual(chips.map((chip) => [chip.key, chip.count, chip.mine, chip.sending]), [["👍", 3, true, true], ["👀", 1, true, true]]);
});

test("taking back shows at once, and a chip with nobody left goes", () => {
  const mine = { key: "🎉", count: 1, mine: true, senders: ["Me"] };
  const chips = chipsFor(message([{ ...thumbs, mine: true, count: 3 }, mine]), "primary", [entry(1, "unreact", "👍"), entry(2, "unreact", "🎉")]);
  assert.deepEqual(chips.map((chip) => [chip.key, chip.count, chip.mine]), [["👍", 2, false]]);
});

test("a refused entry, another message's or another account's changes nothing shown", () => {
  const entries = [entry(1, "react", "👍", "failed"), entry(2, "react", "👍", "queued", { messageId: 8 }), entry(3, "react", "👍", "queued", { account: "linked" })];
  assert.deepEqual(chipsFor(message([thumbs]), "primary", entries).map((chip) => [chip.count, chip.mine]), [[2, false]]);
});

test("what a click asks: give a key that is not the person's, take back one that is", () => {
  const chips = chipsFor(message([thumbs, { key: "🎉", count: 1, mine: true, senders: ["Me"] }]), "primary");
  assert.equal(toggleOf(chips, "👍"), "give");
  assert.equal(toggleOf(chips, "🎉"), "take-back");
  assert.equal(toggleOf(chips, "🚀"), "give");
});

test("who reacted is said in words, with the rest counted", () => {
  assert.equal(whoReacted({ key: "👍", count: 5, mine: false, senders: ["Carol", "Dan"], sending: false }), "Carol, Dan and 3 others");
  assert.equal(whoReacted({ key: "👍", count: 2, mine: true, senders: ["Carol"], sending: true }), "Carol and you");
  assert.equal(chipLabel({ key: "👍", count: 1, mine: true, senders: ["Me"], sending: false }), "👍: 1 reaction, yours among them, from Me");
  assert.equal(whoReacted({ key: "👍", count: 1, mine: false, senders: ["bob"], sending: false }), "bob", "a name stays as the chat gives it");
  assert.equal(whoReacted({ key: "👍", count: 1, mine: true, senders: [], sending: true }), "You");
});

test("a malformed reactions field shows nothing and breaks nothing", () => {
  assert.deepEqual(chipsFor(message("no"), "primary"), []);
  assert.deepEqual(chipsFor(message([{ key: 3 }, null, { key: "👍", count: "2" }]), "primary"), []);
});

test("a reaction on its way is not an unsent message of the chat; a refused one is, in its own words", () => {
  const outbox = outboxFrom([entry(1, "react", "👍"), entry(2, "react", "🎉", "failed"), { ...entry(3, "message", "hi"), action: "message", messageId: undefined }]);
  assert.deepEqual(pendingIn(outbox, "primary", 1).map((item) => item.outboxId), [2, 3]);
  assert.deepEqual(reactionEntries(outbox, "primary").map((item) => item.outboxId), [1, 2]);
  assert.ok(isReactionEntry(outbox.entries[0]) && !isReactionEntry(outbox.entries[2]));
  assert.equal(reactionEchoText(outbox.entries[1]), "Your reaction 🎉");
});
