// The one story the page tells about where syncing stands, derived from the page's state
// (pagestate.js) and the time: the header's label, the status bar's sentence, countdown and
// actions, the tab's title, and whether what is shown may be out of date. Every surface reads
// this one value, so no two parts of the page can say different things about the same state.

import { connectionError, DEFAULT_HOLD_SECONDS, openError } from "./pagestate.js";
import { OPTION, PROBLEM } from "./vocabulary.js";

/** "Reconnecting" for this long after the network went, then "Offline" (nothing is tried meanwhile). */
export const OFFLINE_AFTER_MS = 15_000;
/** A connection that is starting only says so after this long (no flash for a quick one). */
export const CONNECTING_AFTER_MS = 1000;
/** Slack over the hold before a live connection that heard nothing is called slow. */
const SLOW_SLACK_SECONDS = 2;

export const PRODUCT = "Chat dashboard";

/**
 * @returns {{
 *   kind: string, label: string, tone: "ok"|"busy"|"warn"|"bad"|"off", sentence: string,
 *   countdownTo: number|null, progress: string, error: object|null, errorActions: boolean, except: string[],
 *   actions: string[], toggle: {label: string, start: boolean}|null, stale: boolean, age: string
 * }}
 * `error`: the error the status bar speaks for, with its options as buttons when `errorActions`
 * (not while the same error is a dialog or a view that has them), less the options in `except`. `actions`: the status bar's own
 * buttons, of `retry-process`, `recheck-access`, `retry-engine`. `toggle`: Start or Stop syncing.
 */
export function pageStatus(state, now = Date.now()) {
  const base = { countdownTo: null, progress: "", error: null, errorActions: false, except: [], actions: [], toggle: null, stale: false, age: "" };
  // While the process does not answer, the toggle stays where it is (off, as every control that
  // needs the process), saying what it would do.
  const keptToggle = state.connection?.state === "stopped" ? { label: "Start syncing", start: true } : { label: "Stop syncing", start: false };
  if (state.accessRefused) {
    return {
      ...base, kind: "locked", label: "Needs the new address", tone: "bad", stale: true, actions: ["recheck-access"], toggle: keptToggle,
      sentence: "The dashboard restarted with a new access token. Open the address it printed in the terminal "
        + "(it ends in ?token=…) to go on; the messages here stay as they were.",
    };
  }
  if (!state.reachable) {
    return {
      ...base, kind: "unreachable", label: "Not answering", tone: "bad", stale: true, actions: ["retry-process"], toggle: keptToggle,
      countdownTo: state.unreachableRetryAt,
      sentence: "The dashboard process does not answer. Is it still running? Buttons that need it are off, and what you see may be out of date.",
    };
  }
  const connection = state.connection;
  if (!connection) return { ...base, kind: "loading", label: "Connecting…", tone: "busy", sentence: "Connecting to the dashboard…" };
  const since = now - state.stateSince;
  const stop = { label: "Stop syncing", start: false };
  const start = { label: "Start syncing", start: true };
  const trouble = connectionError(state, { includingDialogs: true });
  const inDialog = trouble && state.placements[trouble.id] === "dialog";
  const speakFor = (error) => ({ error, errorActions: !inDialog || error !== trouble });
  switch (connection.state) {
    case "live": {
      const quietSeconds = Math.floor((now - state.lastAnswerAt) / 1000);
      const hold = connection.holdSeconds ?? DEFAULT_HOLD_SECONDS;
      const quiet = state.lastAnswerAt > 0 && quietSeconds > hold + SLOW_SLACK_SECONDS;
      if (trouble) {
        return { ...base, ...speakFor(trouble), kind: "live-trouble", label: "Live", tone: "warn", toggle: stop,
                 sentence: `${trouble.title}. ${trouble.suggestion}` };
      }
      if (quiet) {
        return { ...base, kind: "slow", label: "Live, but slow", tone: "warn", toggle: stop, age: `Updated ${quietSeconds} s ago`,
                 sentence: `Connected, but the chat server has not answered for ${quietSeconds} s. New messages may be late.` };
      }
      return { ...base, kind: "live", label: "Live", tone: "ok", toggle: stop, sentence: "Up to date: new messages arrive as they are sent." };
    }
    case "connecting":
      if (trouble) {
        return { ...base, ...speakFor(trouble), kind: "retrying", label: "Reconnecting…", tone: "warn", toggle: stop,
                 sentence: `${trouble.title}. ${trouble.detail}`, progress: "Trying again now…" };
      }
      if (state.inTrouble || since >= CONNECTING_AFTER_MS) {
        return { ...base, kind: "reconnecting", label: "Reconnecting…", tone: "busy", toggle: stop, progress: "Reconnecting…",
                 sentence: "Connecting to the chat server…" };
      }
      return { ...base, kind: "connecting", label: "Connecting…", tone: "busy", toggle: stop, sentence: "Connecting to the chat server…" };
    case "waiting": {
      const retryAt = connection.retryAt ? Date.parse(connection.retryAt) : null;
      if (trouble) {
        return { ...base, ...speakFor(trouble), kind: "waiting", label: "Reconnecting…", tone: "warn", toggle: stop, countdownTo: retryAt,
                 sentence: `${trouble.title}. ${trouble.detail}` };
      }
      return { ...base, kind: "waiting", label: "Reconnecting…", tone: "warn", toggle: stop, countdownTo: retryAt, actions: ["retry-engine"],
               sentence: "The connection to the chat server was interrupted." };
    }
    case "offline": {
      const early = since < OFFLINE_AFTER_MS;
      const offline = openError(state, PROBLEM.noInternet);
      return { ...base, ...(offline ? speakFor(offline) : {}), kind: early ? "offline-soon" : "offline", label: early ? "Reconnecting…" : "Offline",
               tone: early ? "warn" : "bad", toggle: stop,
               sentence: "This computer is offline. Syncing goes on by itself as soon as the network is back." };
    }
    case "paused": {
      const space = openError(state, PROBLEM.outOfSpace);
      const behind = openError(state, PROBLEM.upstreamBehind);
      const cause = space ?? behind;
      // The view in the pane has the options; once it is set aside (Not now), they are here.
      const hasOwnPlace = cause && cause.presentation === "view";
      // While the view in the pane says what stands in the way, the bar does not say it again.
      const why = hasOwnPlace ? "what to do is below. Nothing is lost: new messages wait on the server."
        : space ? `${space.title.toLowerCase()}. Nothing is lost: new messages wait on the server.`
          : behind ? `${behind.title.toLowerCase()}.` : "it waits for you.";
      // Not now is what set the view aside: the bar offers the ways out, not that again.
      return { ...base, error: cause ?? null, errorActions: Boolean(cause) && !hasOwnPlace, except: [OPTION.notNow], kind: "paused", label: "Paused",
               tone: "bad", toggle: stop, sentence: `Syncing is paused: ${why}` };
    }
    case "stopped":
    default:
      return { ...base, kind: "stopped", label: "Stopped", tone: "off", toggle: start,
               sentence: "Syncing is stopped: no new messages are fetched until you start it." };
  }
}

/** The tab's title: the unread count, where syncing stands, the product. */
export function pageTitle(status, unread = 0) {
  return `${unread > 0 ? `(${unread}) ` : ""}${status.label} · ${PRODUCT}`;
}

/** "Retrying in 7 s", in whole seconds from the wall clock, or what is happening instead. */
export function countdownText(status, now = Date.now()) {
  if (!status.countdownTo) return status.progress;
  const seconds = Math.max(0, Math.ceil((status.countdownTo - now) / 1000));
  return seconds > 0 ? `Trying again in ${seconds} s` : "Trying again now…";
}
