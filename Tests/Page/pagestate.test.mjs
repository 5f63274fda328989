// The page's state reducer (Public/js/pagestate.js): every event type the feed carries, the
// snapshot, reachability, a refused access and the tab's visibility.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connectionError, initialState, reduce } from "../../Public/js/pagestate.js";

const t0 = 1_800_000_000_000;
const connection = (state, extra = {}) => ({ state, attempt: 0, retryAt: null, lastSuccessAt: null, activeCycles: 1, upstream: "u", holdSeconds: 25, ...extra });
const error = (id, type, presentation = "banner", extra = {}) => ({ id, type, title: `T ${id}`, detail: "D", suggestion: "S", presentation, options: [], ...extra });
const snapshot = (extra = {}) => ({
  epoch: "e1", seq: 1, connection: connection("live"), accounts: { primary: { userId: 1, cursor: "3" }, linked: null },
  storage: { usedBytes: 10, quotaBytes: 100 }, errors: [], messages: { primary: [], linked: [] }, ...extra,
});
const events = (state, list, now = t0) => reduce(state, { type: "events", events: list.map(([type, data]) => ({ type, data })), now });
const loaded = (extra) => reduce(initialState(t0), { type: "snapshot", snapshot: snapshot(extra), now: t0 });

test("a snapshot sets everything it carries and opens its alerts as dialogs", () => {
  const state = loaded({ errors: [error("a", "/problems/token-refused", "alert"), error("b", "/problems/upstream-error")] });
  assert.equal(state.epoch, "e1");
  assert.equal(state.connection.state, "live");
  assert.deepEqual(state.accounts.primary, { userId: 1, cursor: "3" });
  assert.deepEqual(state.errors.map((e) => e.id), ["a", "b"]);
  assert.deepEqual(state.placements, { a: "dialog" });
});

test("a later snapshot keeps this page's placements and leaves an alert it has not seen unplaced", () => {
  let state = loaded({ errors: [error("a", "/problems/token-refused", "alert")] });
  state = reduce(state, { type: "placed", id: "a", placement: "note" });
  const fresh = snapshot({ errors: [error("a", "/problems/token-refused", "alert"), error("c", "/problems/purchase-declined", "alert")] });
  const reset = reduce(state, { type: "snapshot", snapshot: fresh, first: false, now: t0 });
  assert.deepEqual(reset.placements, { a: "note" }, "a note stays a note; the new one is placed by whose it is, not here");
  assert.deepEqual(reset.errors.map((e) => e.id), ["a", "c"]);
  const reopened = reduce(state, { type: "snapshot", snapshot: fresh, first: true, now: t0 });
  assert.deepEqual(reopened.placements, { a: "note", c: "dialog" }, "a page opened with an alert open shows it");
});

test("connection: the state's start is noted only when it changes, and an answer's time moves forward", () => {
  let state = loaded();
  state = events(state, [["connection", connection("live", { lastSuccessAt: new Date(t0 + 5000).toISOString() })]], t0 + 6000);
  assert.equal(state.stateSince, t0, "still live: the same stretch");
  assert.equal(state.lastAnswerAt, t0 + 5000);
  state = events(state, [["connection", connection("waiting", { retryAt: new Date(t0 + 9000).toISOString() })]], t0 + 7000);
  assert.equal(state.stateSince, t0 + 7000);
  assert.equal(state.inTrouble, true, "waiting is trouble until live again");
  state = events(state, [["connection", connection("connecting")]], t0 + 9000);
  assert.equal(state.inTrouble, true);
  state = events(state, [["connection", connection("live")]], t0 + 9500);
  assert.equal(state.inTrouble, false);
});

test("every connection state is taken as it comes", () => {
  for (const name of ["stopped", "connecting", "live", "waiting", "offline", "paused"]) {
    const state = events(loaded(), [["connection", connection(name)]], t0 + 1);
    assert.equal(state.connection.state, name);
    assert.equal(state.inTrouble, ["waiting", "offline"].includes(name), name);
  }
});

test("messages, storage and removals keep the storage figures and count as an answer", () => {
  let state = events(loaded(), [["messages", { account: "primary", messages: [], notify: true, storage: { usedBytes: 20, quotaBytes: 100 } }]], t0 + 100);
  assert.equal(state.lastAnswerAt, t0 + 100);
  assert.deepEqual(state.storage, { usedBytes: 20, quotaBytes: 100 });
  state = events(state, [["storage", { usedBytes: 20, quotaBytes: 200 }]]);
  assert.equal(state.storage.quotaBytes, 200);
  state = events(state, [["messages.removed", { primary: [1], linked: [], storage: { usedBytes: 5, quotaBytes: 200 } }]]);
  assert.equal(state.storage.usedBytes, 5);
});

test("errors open, update in place, close, and a late answer does not bring a closed one back", () => {
  let state = events(loaded(), [["error.raised", error("a", "/problems/upstream-error")], ["error.raised", error("b", "/problems/no-internet")]]);
  assert.deepEqual(state.errors.map((e) => e.id), ["a", "b"]);
  state = events(state, [["error.raised", error("a", "/problems/upstream-error", "banner", { title: "Updated" })]]);
  assert.deepEqual(state.errors.map((e) => [e.id, e.title]), [["a", "Updated"], ["b", "T b"]], "same place, new words");
  state = reduce(state, { type: "placed", id: "b", placement: "note" });
  state = events(state, [["error.resolved", { id: "b", type: "/problems/no-internet" }]]);
  assert.deepEqual(state.errors.map((e) => e.id), ["a"]);
  assert.equal(state.placements.b, undefined);
  assert.equal(reduce(state, { type: "attempt-answer", error: error("b", "/problems/no-internet") }), state, "closed stays closed");
  assert.equal(reduce(state, { type: "attempt-answer", error: null }), state);
  const answered = reduce(state, { type: "attempt-answer", error: error("c", "/problems/purchase-declined", "alert") });
  assert.deepEqual(answered.errors.map((e) => e.id), ["a", "c"]);
});

test("accounts follow linked, unlinked and changed", () => {
  let state = events(loaded(), [["account.linked", { userId: 2, firstSync: false }]]);
  assert.deepEqual(state.accounts.linked, { userId: 2, cursor: null });
  state = events(state, [["account.unlinked", { userId: 2 }]]);
  assert.equal(state.accounts.linked, null);
  state = events(state, [["account.changed", { previousUserId: 1, userId: 7, removedMessages: 3 }]]);
  assert.deepEqual(state.accounts, { primary: { userId: 7, cursor: null }, linked: null });
});

test("an account synced again from the server starts from its first message, with the storage after it", () => {
  const state = events(loaded(), [["account.resynced", { account: "primary", setAside: 5, storage: { usedBytes: 12, quotaBytes: 100 } }]]);
  assert.deepEqual(state.accounts.primary, { userId: 1, cursor: null });
  assert.deepEqual(state.storage, { usedBytes: 12, quotaBytes: 100 });
  const unknown = events(loaded(), [["account.resynced", { account: "linked", setAside: 0 }]]);
  assert.equal(unknown.accounts.linked, null, "no linked account: nothing to start again");
  assert.deepEqual(unknown.storage, { usedBytes: 10, quotaBytes: 100 });
});

test("the simulator's settings are kept; chat.read and attempt change nothing here", () => {
  let state = events(loaded(), [["simulator", { faultMode: "error500", faultRate: 1, autoPerSecond: 0 }]]);
  assert.equal(state.simulator.faultMode, "error500");
  const before = state;
  state = events(state, [["chat.read", { account: "primary", chatId: 1, unread: 0 }], ["attempt", { errorId: "a", status: "running" }]]);
  assert.deepEqual(state, before);
});

test("reachability, a refused access and the tab's visibility", () => {
  let state = reduce(loaded(), { type: "reachability", reachable: false, retryAt: t0 + 3000, now: t0 + 1000 });
  assert.equal(state.reachable, false);
  assert.equal(state.unreachableRetryAt, t0 + 3000);
  assert.equal(state.lastHeardAt, t0, "heard from last before it went");
  state = reduce(state, { type: "access-refused" });
  assert.equal(state.accessRefused, true);
  state = reduce(state, { type: "reachability", reachable: true, now: t0 + 5000 });
  assert.equal(state.accessRefused, false, "an answer with access ends it");
  assert.equal(state.lastHeardAt, t0 + 5000);
  state = reduce(state, { type: "visibility", visible: false, now: t0 + 6000 });
  assert.equal(state.hiddenSince, t0 + 6000);
  state = reduce(state, { type: "visibility", visible: false, now: t0 + 7000 });
  assert.equal(state.hiddenSince, t0 + 6000, "hidden since the first time");
  state = reduce(state, { type: "visibility", visible: true, now: t0 + 8000 });
  assert.equal(state.hiddenSince, null);
});

test("the connection's error is the latest connection problem not shown as a dialog", () => {
  let state = events(loaded(), [["error.raised", error("a", "/problems/upstream-error")], ["error.raised", error("b", "/problems/token-refused", "alert")],
    ["error.raised", error("c", "/problems/out-of-space", "view")]]);
  assert.equal(connectionError(state).id, "b", "an alert not placed yet shows in the bar");
  state = reduce(state, { type: "placed", id: "b", placement: "dialog" });
  assert.equal(connectionError(state).id, "a");
  assert.equal(connectionError(state, { includingDialogs: true }).id, "b");
  assert.equal(reduce(state, { type: "nonsense" }), state, "an unknown action changes nothing");
});
