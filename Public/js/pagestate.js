// What the page knows, as one plain value, and how each thing it hears changes it: a snapshot,
// the feed's events, whether the dashboard process answers, the tab being shown or hidden. A
// pure reducer (no DOM, no timers, no network), so every event type and every connection state
// is tested with Node's runner; app.js feeds it and renders what status.js derives from it.

import { PANE_PROBLEMS } from "./vocabulary.js";

/** How long the upstream holds a poll when the connection does not say. */
export const DEFAULT_HOLD_SECONDS = 25;
/** How many resolved error ids are remembered (a late attempt answer must not bring one back). */
const RESOLVED_KEPT = 200;

export function initialState(now = Date.now()) {
  return {
    epoch: null,
    connection: null,
    /** When the connection's state last changed. */
    stateSince: now,
    /** Whether the dashboard process answers the page's poll. */
    reachable: true,
    unreachableRetryAt: null,
    /** When the page last heard from the process. */
    lastHeardAt: now,
    /** The process answers but refuses this page's access (it started with a new token). */
    accessRefused: false,
    accounts: { primary: null, linked: null },
    storage: null,
    /** Open errors, oldest first. */
    errors: [],
    /** Ids the feed said were resolved. */
    resolved: [],
    /** Alert-presented errors: shown here as a `dialog`, a quiet `note`, or in the `banner` (after Escape). */
    placements: {},
    /** When the page last saw the engine get an answer (a messages event is one too). */
    lastAnswerAt: 0,
    /** The connection has been in trouble since it was last live. */
    inTrouble: false,
    /** The built-in simulator's settings, when there is one. */
    simulator: null,
    /** Whether this tab is shown, and since when it is hidden. */
    visible: true,
    hiddenSince: null,
  };
}

/** The page's state after `action`. Actions: `snapshot`, `events`, `reachability`, `access-refused`,
 *  `placed`, `attempt-answer`, `visibility`. */
export function reduce(state, action) {
  const now = action.now ?? Date.now();
  switch (action.type) {
    case "snapshot":
      return snapshot(state, action.snapshot, now, action.first ?? true);
    case "events":
      return action.events.reduce((current, event) => applyEvent(current, event, now), state);
    case "reachability":
      return {
        ...state,
        reachable: action.reachable,
        unreachableRetryAt: action.reachable ? null : action.retryAt ?? null,
        lastHeardAt: action.reachable ? now : state.lastHeardAt,
        accessRefused: action.reachable ? false : state.accessRefused,
      };
    case "access-refused":
      return { ...state, accessRefused: true };
    case "placed":
      return { ...state, placements: { ...state.placements, [action.id]: action.placement } };
    case "attempt-answer":
      // An answer's error is the registry's own (open now); one the feed closed meanwhile stays closed.
      if (!action.error || state.resolved.includes(action.error.id)) return state;
      return withError(state, action.error);
    case "visibility":
      return { ...state, visible: action.visible, hiddenSince: action.visible ? null : state.hiddenSince ?? now };
    default:
      return state;
  }
}

/** `first`: the page's first load (or a reload). A later snapshot (the feed had to start over)
 *  keeps where this page put its alerts, and leaves one it has not seen to be placed by whose it
 *  is, as an `error.raised` would be: another window's declined purchase is a note here. */
function snapshot(state, fresh, now, first) {
  const placements = {};
  for (const error of fresh.errors) {
    if (error.presentation !== "alert") continue;
    // A page that opens (or reloads) with an alert open shows it: the person is here.
    const placement = state.placements[error.id] ?? (first ? "dialog" : undefined);
    if (placement) placements[error.id] = placement;
  }
  return withConnection({
    ...state,
    epoch: fresh.epoch,
    accounts: fresh.accounts,
    storage: fresh.storage,
    errors: [...fresh.errors],
    placements,
    simulator: fresh.simulator ?? state.simulator,
  }, fresh.connection, now);
}

function applyEvent(state, { type, data }, now) {
  switch (type) {
    case "connection":
      return withConnection(state, data, now);
    case "messages":
      return { ...state, lastAnswerAt: now, storage: data.storage ?? state.storage };
    case "storage":
      return { ...state, storage: data };
    case "messages.removed":
      return { ...state, storage: data.storage ?? state.storage };
    case "error.raised":
      return withTrouble(withError(state, data));
    case "error.resolved": {
      const placements = { ...state.placements };
      delete placements[data.id];
      return {
        ...state,
        errors: state.errors.filter((error) => error.id !== data.id),
        resolved: [...state.resolved, data.id].slice(-RESOLVED_KEPT),
        placements,
      };
    }
    case "account.linked":
      return { ...state, accounts: { ...state.accounts, linked: { userId: data.userId, cursor: null } } };
    case "account.unlinked":
      return { ...state, accounts: { ...state.accounts, linked: null } };
    case "account.changed":
      return { ...state, accounts: { primary: { userId: data.userId, cursor: null }, linked: null } };
    case "account.resynced": {
      // Its stored messages were set aside; it syncs from the server's first message again.
      const synced = state.accounts[data.account];
      const accounts = synced ? { ...state.accounts, [data.account]: { ...synced, cursor: null } } : state.accounts;
      return { ...state, accounts, storage: data.storage ?? state.storage };
    }
    case "simulator":
      return { ...state, simulator: data };
    default:
      // chat.read, attempt: nothing the page's state holds (the chats and the buttons follow them).
      return state;
  }
}

/** `error` opened, or updated in place where it is already open. */
function withError(state, error) {
  const index = state.errors.findIndex((open) => open.id === error.id);
  const errors = index < 0 ? [...state.errors, error] : state.errors.map((open, at) => (at === index ? error : open));
  return { ...state, errors };
}

function withConnection(state, connection, now) {
  const changed = state.connection?.state !== connection.state;
  const success = Date.parse(connection.lastSuccessAt ?? "");
  return withTrouble({
    ...state,
    connection,
    stateSince: changed ? now : state.stateSince,
    lastAnswerAt: Number.isNaN(success) ? state.lastAnswerAt : Math.max(state.lastAnswerAt, success),
  });
}

/** Trouble lasts from a failure until the connection is live again (or the person stopped it). */
function withTrouble(state) {
  const name = state.connection?.state;
  if (["waiting", "offline"].includes(name) || connectionError(state)) return state.inTrouble ? state : { ...state, inTrouble: true };
  if (["live", "stopped", "paused"].includes(name)) return state.inTrouble ? { ...state, inTrouble: false } : state;
  return state;
}

/** The open error the connection is about: the latest connection problem not shown as a dialog
 *  elsewhere on the page (out of space and an upstream gone back have their own place). */
export function connectionError(state, { includingDialogs = false } = {}) {
  return [...state.errors].reverse().find((error) => {
    if (PANE_PROBLEMS.includes(error.type)) return false;
    if (error.presentation === "banner") return true;
    return error.presentation === "alert" && (includingDialogs || state.placements[error.id] !== "dialog");
  });
}

/** The open error of this type, if any. */
export function openError(state, type) {
  return state.errors.find((error) => error.type === type);
}
