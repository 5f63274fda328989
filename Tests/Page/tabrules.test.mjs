// The tabs' rules (Public/js/tabrules.js) with Node's own test runner: one notice per message
// across tabs, and the alert in the tab where the person acted.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ACTED_REPEAT_MS, actedIsSaid, alertPlacement, HIDDEN_CLAIM_MS, livePeers, markAnnounced, noticeFor, RECENT_ACTION_MS, VISIBLE_CLAIM_MS,
} from "../../Public/js/tabrules.js";

const now = 1_000_000;
const peers = (entries) => new Map(entries.map(([id, visible, age = 0]) => [id, { visible, seenAt: now - age }]));
const decide = (options) => noticeFor({ tabId: "b", visible: false, peers: peers([]), now, announced: {}, account: "primary", ids: [1, 2], ...options });

test("a visible tab shows the toast; a hidden one says nothing while another tab is visible", () => {
  assert.equal(decide({ visible: true }).action, "toast");
  assert.equal(decide({ peers: peers([["a", true]]) }).action, "none");
});

test("with no tab visible exactly one tab notifies: the lowest id among the live ones", () => {
  const hidden = peers([["a", false], ["c", false]]);
  const actions = ["a", "b", "c"].map((tabId) => noticeFor({
    tabId, visible: false, now, announced: {}, account: "primary", ids: [1],
    peers: new Map([...hidden, ["b", { visible: false, seenAt: now }]].filter(([id]) => id !== tabId)),
  }).action);
  assert.deepEqual(actions, ["notify", "none", "none"]);
  assert.equal(decide({ peers: peers([["c", false]]) }).action, "notify", "b is lower than c");
});

test("what was announced is never announced again, by any tab, after a reload too", () => {
  assert.deepEqual(decide({ visible: true, announced: { primary: 2 } }), { action: "none", fresh: [] });
  assert.deepEqual(decide({ visible: true, announced: { primary: 1 } }), { action: "toast", fresh: [2] });
  assert.deepEqual(decide({ visible: true, announced: { linked: 9 } }).fresh, [1, 2], "marks are per account");
  assert.deepEqual(markAnnounced({ primary: 3 }, "primary", [5, 4]), { primary: 5 });
  assert.deepEqual(markAnnounced({ primary: 3 }, "linked", [1]), { primary: 3, linked: 1 });
  assert.deepEqual(markAnnounced({ primary: 3 }, "primary", []), { primary: 3 });
});

test("a tab that went away without a word stops counting: visible claims soon, hidden ones later", () => {
  const stale = peers([["a", true, VISIBLE_CLAIM_MS + 1], ["c", false, HIDDEN_CLAIM_MS - 1], ["d", false, HIDDEN_CLAIM_MS + 1]]);
  assert.deepEqual([...livePeers(stale, now).keys()], ["c"]);
  assert.equal(decide({ peers: stale }).action, "notify", "a's visibility claim expired, and b is lower than c");
  assert.equal(decide({ tabId: "e", peers: stale }).action, "none", "c is lower than e");
});

test("an alert opens where it was caused or where the person acted; the others get a note", () => {
  const open = new Map([["a", { visible: true, seenAt: now - 1000 }]]);
  const base = { tabId: "b", visible: true, now, causedHere: false, attemptRunningHere: false, attemptRunningElsewhere: false, lastActor: null, peers: open };
  const acted = (tabId, ago) => ({ tabId, at: now - ago });
  assert.equal(alertPlacement({ ...base, causedHere: true, lastActor: acted("a", 0) }), "dialog", "its own attempt's answer");
  assert.equal(alertPlacement({ ...base, lastActor: acted("a", 500) }), "note", "Expire token clicked in a just now");
  assert.equal(alertPlacement({ ...base, lastActor: acted("b", 500), visible: false }), "dialog", "the person acted here just now");
  assert.equal(alertPlacement({ ...base, attemptRunningHere: true, lastActor: acted("a", 500) }), "note",
    "the person acted elsewhere since this tab's attempt began");
  assert.equal(alertPlacement({ ...base, attemptRunningHere: true, lastActor: acted("a", RECENT_ACTION_MS + 1) }), "dialog");
  assert.equal(alertPlacement({ ...base, attemptRunningElsewhere: true, lastActor: acted("b", RECENT_ACTION_MS + 1) }), "note",
    "another window's attempt, the person's action here long ago");
  assert.equal(alertPlacement({ ...base, lastActor: acted("a", RECENT_ACTION_MS + 1) }), "note", "nobody acts now: where they did last");
  assert.equal(alertPlacement({ ...base, lastActor: null }), "dialog", "nobody acted: every visible tab");
  assert.equal(alertPlacement({ ...base, lastActor: null, visible: false }), "note");
});

test("a closed tab no longer counts as where the person acted", () => {
  const base = { tabId: "b", visible: true, now, causedHere: false, attemptRunningHere: false, attemptRunningElsewhere: false };
  const actedInA = { tabId: "a", at: now - 500 };
  assert.equal(alertPlacement({ ...base, lastActor: actedInA, peers: new Map() }), "dialog", "a said goodbye: every visible tab shows it");
  const silent = new Map([["a", { visible: true, seenAt: now - VISIBLE_CLAIM_MS - 1 }]]);
  assert.equal(alertPlacement({ ...base, lastActor: actedInA, peers: silent }), "dialog", "a went without a word and its claim ran out");
  assert.equal(alertPlacement({ ...base, lastActor: actedInA, peers: silent, visible: false }), "note", "a hidden tab still shows no dialog");
  assert.equal(alertPlacement({ ...base, lastActor: { tabId: "b", at: now - 500 }, peers: new Map() }), "dialog", "this tab is always present");
});

test("an action is told to the other tabs at once when the person comes from another tab, else once a second", () => {
  const here = (lastActor, lastSaidAt) => actedIsSaid({ tabId: "a", lastActor, now, lastSaidAt });
  assert.equal(here({ tabId: "b", at: now - 10 }, now - 10), true,
    "the person acted in b since this tab last said so (two windows used within a second)");
  assert.equal(here(null, now - 10), true, "nobody acted yet as far as this tab knows");
  assert.equal(here({ tabId: "a", at: now - 10 }, now - 10), false, "typing on in this tab: said a moment ago");
  assert.equal(here({ tabId: "a", at: now - 10 }, now - ACTED_REPEAT_MS), true, "and again once a second");
});
