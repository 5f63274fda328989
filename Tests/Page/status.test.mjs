// The one status the page shows (Public/js/status.js): every connection state, with and without
// an error, the process not answering, a refused access; and the tab's title.
import assert from "node:assert/strict";
import { test } from "node:test";
import { initialState, reduce } from "../../Public/js/pagestate.js";
import { CONNECTING_AFTER_MS, countdownText, OFFLINE_AFTER_MS, pageStatus, pageTitle } from "../../Public/js/status.js";

const t0 = 1_800_000_000_000;
const connection = (state, extra = {}) => ({ state, attempt: 3, retryAt: null, lastSuccessAt: null, activeCycles: 1, upstream: "u", holdSeconds: 25, ...extra });
const error = (id, type, presentation = "banner") => ({ id, type, title: `Title ${id}`, detail: `Detail ${id}.`, suggestion: "Suggestion.", presentation, options: [] });
const withState = (name, { errors = [], extra = {}, since = t0 } = {}) => {
  let state = reduce(initialState(since), { type: "snapshot", now: since, snapshot: {
    epoch: "e", seq: 0, connection: connection(name, extra), accounts: { primary: null, linked: null }, storage: null, errors, messages: {},
  } });
  state = { ...state, lastAnswerAt: since };
  return state;
};

test("live: up to date, or slow after a hold of silence, or carrying an open connection problem", () => {
  const live = pageStatus(withState("live"), t0 + 1000);
  assert.equal(live.label, "Live");
  assert.equal(live.tone, "ok");
  assert.deepEqual(live.toggle, { label: "Stop syncing", start: false });
  assert.equal(live.stale, false);
  const slow = pageStatus(withState("live"), t0 + 28_000);
  assert.equal(slow.kind, "slow");
  assert.match(slow.sentence, /has not answered for 28 s/);
  assert.equal(pageStatus(withState("live"), t0 + 27_000).kind, "live", "within the hold and its slack");
  const trouble = pageStatus(withState("live", { errors: [error("a", "/problems/another-poller")] }), t0);
  assert.equal(trouble.error.id, "a");
  assert.equal(trouble.errorActions, true);
});

test("connecting: quiet at first, then reconnecting; with a problem, its words and 'Trying again now'", () => {
  assert.equal(pageStatus(withState("connecting"), t0 + CONNECTING_AFTER_MS - 1).kind, "connecting");
  assert.equal(pageStatus(withState("connecting"), t0 + CONNECTING_AFTER_MS).kind, "reconnecting");
  const retrying = pageStatus(withState("connecting", { errors: [error("a", "/problems/upstream-error")] }), t0);
  assert.equal(retrying.sentence, "Title a. Detail a.");
  assert.equal(retrying.progress, "Trying again now…");
});

test("waiting: the countdown, its problem's words, and never an attempt number", () => {
  const retryAt = new Date(t0 + 7_400).toISOString();
  const plain = pageStatus(withState("waiting", { extra: { retryAt } }), t0);
  assert.deepEqual(plain.actions, ["retry-engine"]);
  assert.equal(countdownText(plain, t0), "Trying again in 8 s");
  assert.equal(countdownText(plain, t0 + 7_500), "Trying again now…");
  assert.doesNotMatch(plain.label + plain.sentence, /attempt/i);
  const failing = pageStatus(withState("waiting", { extra: { retryAt }, errors: [error("a", "/problems/upstream-unreachable")] }), t0);
  assert.equal(failing.error.id, "a");
  assert.deepEqual(failing.actions, [], "the error's own buttons instead");
});

test("an alert shown as a dialog is said in the bar without its buttons (they are in the dialog)", () => {
  let state = withState("waiting", { errors: [error("a", "/problems/token-refused", "alert")] });
  state = reduce(state, { type: "placed", id: "a", placement: "dialog" });
  const status = pageStatus(state, t0);
  assert.equal(status.sentence, "Title a. Detail a.", "the same words as the dialog, not 'interrupted'");
  assert.equal(status.errorActions, false);
  state = reduce(state, { type: "placed", id: "a", placement: "banner" });
  assert.equal(pageStatus(state, t0).errorActions, true, "after Escape the bar has them");
});

test("offline: 'Reconnecting' for 15 s, then 'Offline'; nothing claims to be trying", () => {
  const soon = pageStatus(withState("offline"), t0 + OFFLINE_AFTER_MS - 1);
  assert.equal(soon.label, "Reconnecting…");
  assert.equal(soon.progress, "");
  const later = pageStatus(withState("offline"), t0 + OFFLINE_AFTER_MS);
  assert.equal(later.label, "Offline");
  assert.equal(later.tone, "bad");
  const withError = pageStatus(withState("offline", { errors: [error("n", "/problems/no-internet")] }), t0);
  assert.equal(withError.error.id, "n");
});

test("paused: why, in the storage problem's own words; its options in the bar only once its view is set aside", () => {
  const view = pageStatus(withState("paused", { errors: [{ ...error("s", "/problems/out-of-space", "view"), title: "New messages don't fit in your storage" }] }), t0);
  assert.equal(view.label, "Paused");
  assert.equal(view.sentence, "Syncing is paused: what to do is below. Nothing is lost: new messages wait on the server.",
    "the view says what stands in the way; the bar does not say it twice");
  assert.equal(view.errorActions, false, "the view has them");
  const asideSpace = { ...error("s", "/problems/out-of-space", "banner"), title: "New messages don't fit in your storage" };
  assert.match(pageStatus(withState("paused", { errors: [asideSpace] }), t0).sentence, /^Syncing is paused: new messages don't fit in your storage\. Nothing is lost/);
  const banner = pageStatus(withState("paused", { errors: [error("s", "/problems/out-of-space", "banner")] }), t0);
  assert.equal(banner.errorActions, true);
  assert.deepEqual(banner.except, ["not-now"], "not Not now again");
  assert.equal(pageStatus(withState("paused"), t0).sentence, "Syncing is paused: it waits for you.");
});

test("stopped offers Start; the process not answering and a refused access are said over everything", () => {
  const stopped = pageStatus(withState("stopped"), t0);
  assert.deepEqual(stopped.toggle, { label: "Start syncing", start: true });
  const gone = pageStatus({ ...withState("live"), reachable: false, unreachableRetryAt: t0 + 2000 }, t0);
  assert.equal(gone.kind, "unreachable");
  assert.deepEqual(gone.toggle, { label: "Stop syncing", start: false }, "the toggle stays, off, saying what it would do");
  assert.equal(gone.stale, true);
  assert.deepEqual(gone.actions, ["retry-process"]);
  const locked = pageStatus({ ...withState("live"), accessRefused: true }, t0);
  assert.equal(locked.kind, "locked");
  assert.match(locked.sentence, /new access token/);
  assert.match(locked.sentence, /messages here stay/);
  assert.equal(pageStatus(initialState(t0), t0).kind, "loading");
});

test("every state has a label, a tone and a sentence, and the title carries the unread count", () => {
  for (const name of ["stopped", "connecting", "live", "waiting", "offline", "paused"]) {
    const status = pageStatus(withState(name), t0 + 30_000);
    assert.ok(status.label && status.tone && status.sentence, name);
    assert.doesNotMatch(status.sentence, /undefined|null|\/problems\//, name);
  }
  assert.equal(pageTitle({ label: "Offline" }, 3), "(3) Offline · Chat dashboard");
  assert.equal(pageTitle({ label: "Live" }, 0), "Live · Chat dashboard");
});
