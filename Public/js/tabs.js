// The dashboard's tabs agree through a BroadcastChannel: each says whether it is visible (on
// change and on a heartbeat), where the person last acted (a click or a key), and goes away with
// a word; localStorage keeps which messages were announced, and a summary for later, across
// reloads. The rules are tabrules.js; this module only carries what they need.

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

function heard({ data }) {
  if (!data || typeof data.tabId !== "string" || data.tabId === tabId) return;
  if (data.type === "bye") {
    peers.delete(data.tabId);
    return;
  }
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
  say("hello");
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

function readStored(key) {
  try {
    const value = JSON.parse(localStorage.getItem(key) ?? "null");
    return value?.epoch === epoch ? value : null;
  } catch {
    return null;
  }
}

function writeStored(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify({ ...value, epoch }));
  } catch {
    // Storage refused (private mode, full): each tab then decides on what it heard over the channel.
  }
}

/** What this tab does about notifying messages (`"toast"`, `"notify"` or `"none"`) and which of
 *  `ids` were not announced yet; what it takes on is marked announced for every tab. */
export function decideNotice(account, ids) {
  const announced = readStored(ANNOUNCED_KEY)?.marks ?? {};
  const decision = noticeFor({ tabId, visible: visibleHere(), peers, now: Date.now(), announced, account, ids });
  if (decision.action !== "none") writeStored(ANNOUNCED_KEY, { marks: markAnnounced(announced, account, decision.fresh) });
  return decision;
}

/** Where an alert shows in this tab: `"dialog"` or `"note"` (tabrules.js `alertPlacement`). */
export function placeAlert({ causedHere, attemptRunningHere, attemptRunningElsewhere }) {
  return alertPlacement({ tabId, visible: visibleHere(), now: Date.now(), causedHere, attemptRunningHere, attemptRunningElsewhere, lastActor });
}

/** Keeps messages nobody could be told of (no tab visible, no notification permission) for a
 *  summary in whichever tab the person sees next. */
export function keepForLater(count, last) {
  const kept = readStored(KEPT_KEY) ?? { count: 0, last: null };
  writeStored(KEPT_KEY, { count: kept.count + count, last: last ? { sender: last.sender, text: last.text } : kept.last });
}

/** The summary kept for later, taken (so no other tab shows it too); null when there is none. */
export function takeKept() {
  const kept = readStored(KEPT_KEY);
  if (!kept?.count) return null;
  writeStored(KEPT_KEY, { count: 0, last: null });
  return kept;
}
