// What the page knows of unsent messages (Public/js/outbox.js), with Node's own test runner.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  composerRule, echoWords, emptyOutbox, keyAction, notSentCounts, outboxFrom, pendingIn, sendableText,
  withAccepted, withNotTaken, withOutboxEvent, withoutWriting, withRetrying, withSentMessages, withWriting,
} from "../../Public/js/outbox.js";

const entry = (outboxId, state = "queued", { account = "primary", chatId = 1, error = null } = {}) => ({
  outboxId, account, chatId, text: `m${outboxId}`, state, createdAt: "2026-12-03T08:00:00.000Z", error,
});

test("the snapshot's outbox is kept oldest first, and what is not an entry is left out", () => {
  const outbox = outboxFrom([entry(3), entry(1, "failed"), { outboxId: "x" }, null]);
  assert.deepEqual(outbox.entries.map((item) => item.outboxId), [1, 3]);
  assert.deepEqual(outboxFrom(undefined), emptyOutbox());
});

test("an entry's state changes in place, and one that was sent or deleted leaves", () => {
  let outbox = outboxFrom([entry(1), entry(2)]);
  outbox = withOutboxEvent(outbox, entry(1, "sending"));
  assert.deepEqual(outbox.entries.map((item) => [item.outboxId, item.state]), [[1, "sending"], [2, "queued"]]);
  outbox = withOutboxEvent(outbox, { outboxId: 1, account: "primary", chatId: 1, state: "sent" });
  assert.deepEqual(outbox.entries.map((item) => item.outboxId), [2]);
  outbox = withOutboxEvent(outbox, { outboxId: 2, account: "primary", chatId: 1, state: "deleted" });
  assert.deepEqual(outbox.entries, []);
  const same = outboxFrom([entry(5)]);
  assert.deepEqual(withOutboxEvent(same, { outboxId: 9, state: "deleted" }).entries, same.entries, "an entry it never had changes nothing");
  assert.equal(withOutboxEvent(same, { state: "queued" }), same);
});

test("a message that came with outboxId takes the place of its echo; others change nothing", () => {
  const outbox = outboxFrom([entry(1), entry(2)]);
  assert.deepEqual(withSentMessages(outbox, [{ id: 40, outboxId: 2 }]).entries.map((item) => item.outboxId), [1]);
  assert.equal(withSentMessages(outbox, [{ id: 41 }]), outbox);
  assert.equal(withSentMessages(outbox, undefined), outbox);
});

test("the answer to a message written here shows it at once, once, whichever of the answer and its event comes first", () => {
  const accepted = { outboxId: 7, account: "primary", chatId: 3, text: "hi", createdAt: "t" };
  let outbox = withAccepted(emptyOutbox(), accepted);
  assert.deepEqual(outbox.entries.map((item) => [item.outboxId, item.state]), [[7, "queued"]]);
  outbox = withOutboxEvent(outbox, { ...entry(7, "sending", { chatId: 3 }), text: "hi" });
  assert.equal(withAccepted(outbox, accepted), outbox, "the event's state stays");
  assert.equal(outbox.entries.length, 1);
});

test("an answer that comes after its message was sent or deleted brings nothing back", () => {
  const accepted = { outboxId: 8, account: "primary", chatId: 1, text: "gone", createdAt: "t" };
  const deleted = withOutboxEvent(outboxFrom([entry(8, "failed")]), { outboxId: 8, account: "primary", chatId: 1, state: "deleted" });
  assert.deepEqual(withAccepted(deleted, accepted).entries, []);
  const sent = withSentMessages(emptyOutbox(), [{ id: 3, outboxId: 8 }]);
  assert.deepEqual(withAccepted(sent, accepted).entries, []);
  assert.deepEqual(withOutboxEvent(sent, entry(8, "queued")).entries, [], "nor a late event");
  assert.deepEqual(outboxFrom([], sent).left, [8], "a new snapshot keeps what it knows left");
});

test("a chat's echoes and each chat's not-sent count", () => {
  const outbox = outboxFrom([entry(1, "failed"), entry(2, "queued"), entry(3, "failed", { chatId: 2 }), entry(4, "failed", { chatId: 2 }),
    entry(5, "failed", { account: "linked" })]);
  assert.deepEqual(pendingIn(outbox, "primary", 1).map((item) => item.outboxId), [1, 2]);
  assert.deepEqual([...notSentCounts(outbox, "primary")], [[1, 1], [2, 2]]);
  assert.deepEqual([...notSentCounts(outbox, "linked")], [[1, 1]]);
});

test("an echo says Sending… until the server has it, and Not sent with the error's words when refused", () => {
  assert.deepEqual(echoWords(entry(1, "queued")), { mark: "Sending…", reason: "" });
  assert.deepEqual(echoWords(entry(1, "sending")), { mark: "Sending…", reason: "" });
  const error = { detail: "The chat server refused it as too large.", suggestion: "Shorten it and send it again, or delete it." };
  assert.deepEqual(echoWords(entry(1, "failed", { error })),
    { mark: "Not sent", reason: "The chat server refused it as too large. Shorten it and send it again, or delete it." });
  assert.equal(echoWords(entry(1, "failed")).mark, "Not sent");
});

test("the message box is off, with a reason, in a chat left, an encrypted room, or where nothing can be sent", () => {
  assert.deepEqual(composerRule({ membership: "join", encrypted: false }), { enabled: true, reason: "" });
  assert.equal(composerRule({ membership: "leave" }).enabled, false);
  assert.match(composerRule({ membership: "leave" }).reason, /left this chat/);
  assert.equal(composerRule({ membership: "join", encrypted: true, unreadable: true }).enabled, false);
  assert.equal(composerRule({ membership: "join", encrypted: true, unreadable: false }).enabled, false, "never in the clear into an encrypted room");
  assert.equal(composerRule({ membership: "join" }, { canSend: false }).enabled, false);
  assert.equal(composerRule(null).enabled, true, "a chat not listed yet");
});

test("Enter sends, Shift+Enter and Enter while composing a character are a new line", () => {
  assert.equal(keyAction({ key: "Enter" }), "send");
  assert.equal(keyAction({ key: "Enter", shiftKey: true }), "type");
  assert.equal(keyAction({ key: "Enter", isComposing: true }), "type");
  assert.equal(keyAction({ key: "a" }), "type");
});

test("only text with something in it is sent, as typed", () => {
  assert.equal(sendableText("  "), null);
  assert.equal(sendableText("\n\t"), null);
  assert.equal(sendableText(" hi "), " hi ");
  assert.equal(sendableText(undefined), null);
});

test("a message sent from here shows at once, and its entry takes its place whichever of the answer and the event comes first", () => {
  const written = { requestKey: "k1", account: "primary", chatId: 3, text: "hi", createdAt: "t" };
  const writing = withWriting(emptyOutbox(), written);
  assert.deepEqual(pendingIn(writing, "primary", 3).map((item) => [item.outboxId, item.requestKey, item.state]), [[undefined, "k1", "queued"]]);
  assert.deepEqual(pendingIn(writing, "primary", 4), [], "only in its own chat");
  assert.equal(withWriting(writing, written), writing, "once");

  const answeredFirst = withAccepted(writing, { ...written, outboxId: 7 });
  assert.deepEqual(pendingIn(answeredFirst, "primary", 3).map((item) => [item.outboxId, item.text]), [[7, "hi"]]);
  const thenEvent = withOutboxEvent(answeredFirst, { ...entry(7, "sending", { chatId: 3 }), text: "hi", requestKey: "k1" });
  assert.deepEqual(pendingIn(thenEvent, "primary", 3).map((item) => [item.outboxId, item.state]), [[7, "sending"]]);
  assert.equal(thenEvent.entries[0].requestKey, undefined, "the key is not kept on the entry");

  const eventFirst = withOutboxEvent(writing, { ...entry(7, "queued", { chatId: 3 }), text: "hi", requestKey: "k1" });
  assert.deepEqual(pendingIn(eventFirst, "primary", 3).map((item) => item.outboxId), [7], "shown once");
  const sentBeforeAnswer = withSentMessages(eventFirst, [{ id: 50, outboxId: 7 }]);
  assert.deepEqual(pendingIn(withAccepted(sentBeforeAnswer, { ...written, outboxId: 7 }), "primary", 3), [], "a late answer brings nothing back");
});

test("another page's entry leaves this page's echo alone; one edited or deleted here loses its echo", () => {
  const written = { requestKey: "mine", account: "primary", chatId: 1, text: "same", createdAt: "t" };
  const outbox = withOutboxEvent(withWriting(emptyOutbox(), written), { ...entry(4), text: "same", requestKey: "theirs" });
  assert.deepEqual(pendingIn(outbox, "primary", 1).map((item) => item.outboxId ?? item.requestKey), [4, "mine"]);
  assert.deepEqual(pendingIn(withoutWriting(outbox, "mine"), "primary", 1).map((item) => item.outboxId), [4]);
});

test("a message the dashboard did not take stays, saying why, until it is tried again", () => {
  const written = { requestKey: "k1", account: "primary", chatId: 1, text: "hello", createdAt: "t" };
  const refused = withNotTaken(withWriting(emptyOutbox(), written), "k1", "The dashboard process does not answer.");
  const [echo] = pendingIn(refused, "primary", 1);
  assert.deepEqual([echo.requestKey, echo.text, echo.state], ["k1", "hello", "not-taken"]);
  assert.deepEqual(echoWords(echo), { mark: "Not sent", reason: "The dashboard did not take it: The dashboard process does not answer." });
  assert.equal(pendingIn(withRetrying(refused, "k1"), "primary", 1)[0].state, "queued", "sending again");
  const fromEarlierPage = withWriting(emptyOutbox(), { ...written, notTaken: "No answer." });
  assert.equal(pendingIn(fromEarlierPage, "primary", 1)[0].state, "not-taken");
  assert.equal(withAccepted(refused, { ...written, outboxId: 3 }).writing.length, 0, "taken on a later try: its entry in its place");
});

test("an entry left behind by an account that went leaves the page's outbox", () => {
  const outbox = withOutboxEvent(outboxFrom([entry(1, "failed"), entry(2)]), { outboxId: 1, state: "left-behind" });
  assert.deepEqual(outbox.entries.map((item) => item.outboxId), [2]);
  assert.equal(withOutboxEvent(outbox, entry(1, "failed")), outbox, "a late event does not bring it back");
});
