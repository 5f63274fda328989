// The dashboard's tabs agree through a BroadcastChannel: each says whether it is visible (on
// change and on a heartbeat), where the person last acted (a click or a key), and goes away with
// a word; sharedvalues.js keeps which messages were announced, and a summary for later, across
// reloads, read and written by one tab at a time. The rules are tabrules.js; this module only carries what they need.

import { updateShared } from "./sharedvalues.js";
import { actedIsSaid, alertPlacement, markAnnounced, noticeFor } from "./tabrules.js";

const CHANNEL = "lp-dashboard";
const HEARTBEAT_MS = 5000;
const ANNOUNCED_KEY = "lp-announced";
const KEPT_KEY = "lp-kept-notices";

/** This tab, for as long as the page lives. */
export const tabId = crypto.randomUUID();

const peers = new Map(); // tab id -> { visible, seenAt }
let lastActor = null; // where and when the person last acted: { tabId, at }
let channel = null;
let epoch = "";
let lastActedSaid = 0;

const visibleHere = () => document.visibilityState === "visible";

function say(type) {
  channel?.postMessage({ type, tabId, visible: visibleHere(), at: Date.now() });
}

// Each tab holds a Web Lock named after it for as long as it lives; the browser lets it go when
// the tab closes or crashes, so a tab waiting for a peer's lock learns at once that the peer is
// gone (its "bye", said while the page unloads, is not always delivered).
const lifeLock = (id) => `lp-tab/${id}`;

function holdLifeLock() {
  if (!navigator.locks) return Promise.resolve();
  return new Promise((held) => {
    navigator.locks.request(lifeLock(tabId), () => {
      held();
      return new Promise(() => {});
    }).catch(held);
  });
}

function watchPeer(id) {
  navigator.locks?.request(lifeLock(id), () => peerGone(id)).catch(() => {});
}

const actorGoneListeners = [];

/** Calls `listener` when the window where the person last acted closes: what was placed as a
 *  note because they were there may be this window's to show now. */
export function onActorGone(listener) {
  actorGoneListeners.push(listener);
}

function peerGone(id) {
  peers.delete(id);
  if (lastActor?.tabId === id) for (const listener of actorGoneListeners) listener();
}

function heard({ data }) {
  if (!data || typeof data.tabId !== "string" || data.tabId === tabId) return;
  if (data.type === "bye") {
    peerGone(data.tabId);
    return;
  }
  if (!peers.has(data.tabId)) watchPeer(data.tabId);
  peers.set(data.tabId, { visible: Boolean(data.visible), seenAt: Date.now() });
  if (data.type === "acted") lastActor = { tabId: data.tabId, at: Date.now() };
  if (data.type === "hello") say("here");
}

/** Joins the other tabs of this dashboard process (`epoch`). Safe to call again after a restart. */
export function startTabs(currentEpoch) {
  epoch = currentEpoch;
  if (channel || typeof BroadcastChannel === "undefined") return;
  channel = new BroadcastChannel(CHANNEL);
  channel.onmessage = heard;
  // Said once this tab's life lock is held, so a peer that starts watching it never finds it free.
  holdLifeLock().then(() => say("hello"));
  const acted = () => {
    const now = Date.now();
    const said = actedIsSaid({ tabId, lastActor, now, lastSaidAt: lastActedSaid });
    lastActor = { tabId, at: now };
    if (!said) return;
    lastActedSaid = now;
    say("acted");
  };
  for (const type of ["pointerdown", "keydown"]) document.addEventListener(type, acted, { capture: true });
  // A tab the person turns to is where they are now.
  document.addEventListener("visibilitychange", () => {
    if (visibleHere()) {
      lastActedSaid = -Infinity;
      acted();
    } else {
      say("beat");
    }
  });
  setInterval(() => say("beat"), HEARTBEAT_MS);
  window.addEventListener("pagehide", () => say("bye"));
}

/** The stored value for this dashboard process (`epoch`): what an earlier process kept is of
 *  no use to this one, whose ids may start again. */
const current = (stored) => (stored?.epoch === epoch ? stored : null);

/** What this tab does about notifying messages (`"toast"`, `"notify"` or `"none"`) and which of
 *  `ids` were not announced yet; what it takes on is marked announced for every tab in the same
 *  step, so no other tab takes them too. */
export function decideNotice(account, ids) {
  return updateShared(ANNOUNCED_KEY, (stored) => {
    const announced = current(stored)?.marks ?? {};
    const decision = noticeFor({ tabId, visible: visibleHere(), peers, now: Date.now(), announced, account, ids });
    const value = decision.action === "none" ? undefined : { epoch, marks: markAnnounced(announced, account, decision.fresh) };
    return { result: decision, value };
  });
}

/** Forgets which messages of `account` were announced: its copy was made again from the server,
 *  whose ids may be lower than those told before, and each new one is news. */
export function forgetAnnounced(account) {
  return updateShared(ANNOUNCED_KEY, (stored) => {
    const marks = { ...(current(stored)?.marks ?? {}) };
    delete marks[account];
    return { result: undefined, value: { epoch, marks } };
  });
}

/** Where an alert shows in this tab: `"dialog"` or `"note"` (tabrules.js `alertPlacement`). */
export function placeAlert({ causedHere, attemptRunningHere, attemptRunningElsewhere }) {
  return alertPlacement({ tabId, visible: visibleHere(), now: Date.now(), causedHere, attemptRunningHere, attemptRunningElsewhere, lastActor, peers });
}

/** Keeps messages nobody could be told of (no tab visible, no notification permission) for a
 *  summary in whichever tab the person sees next. */
export function keepForLater(count, last) {
  return updateShared(KEPT_KEY, (stored) => {
    const kept = current(stored) ?? { count: 0, last: null };
    return { result: undefined, value: { epoch, count: kept.count + count, last: last ? { sender: last.sender, text: last.text } : kept.last } };
  });
}

/** The summary kept for later, taken (so no other tab shows it too); null when there is none. */
export function takeKept() {
  return updateShared(KEPT_KEY, (stored) => {
    const kept = current(stored);
    if (!kept?.count) return { result: null, value: undefined };
    return { result: kept, value: { epoch, count: 0, last: null } };
  });
}
