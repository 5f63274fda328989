// Where syncing stands, shown from the one status value (status.js): the header's label, the
// status bar under it (always there, at a fixed height, so nothing below moves when the state
// changes), the tab's title, and the connection's recent history with a legend and words.

import { formatWhen } from "./dates.js";
import { $, element, replaceIfChanged, setText } from "./dom.js";
import { countdownText, pageTitle } from "./status.js";

let shown = null; // the status last rendered, for the once-a-second countdown

/**
 * Renders `status`. `parts` are what app.js makes for it: `actions` (buttons, replaced only when
 * `actionsKey` changes), `note` (what the last attempt said), `details` (the error's Details
 * disclosure, replaced when `detailsKey` changes), `errorId` (whose attempts the busy note
 * follows), `toggle` (show the Start/Stop syncing control) and `unread` (for the title).
 */
export function renderStatus(status, { actions = [], actionsKey = "", note = "", details = null, detailsKey = "", errorId = "", unread = 0 } = {}) {
  shown = status;
  const pill = $("#connection");
  pill.dataset.state = status.tone;
  pill.dataset.kind = status.kind;
  setText($("#connection-text"), status.label);

  const bar = $("#banner");
  bar.dataset.tone = status.tone;
  bar.dataset.kind = status.kind;
  setText($("#banner-text"), status.sentence);
  const age = $("#connection-age");
  setText(age, status.age);
  age.hidden = !status.age;
  replaceIfChanged($("#banner-actions"), actions, actionsKey);
  const noteNode = $("#banner-note");
  setText(noteNode, note);
  noteNode.hidden = !note;
  const busy = $("#banner-busy");
  if (errorId) busy.dataset.busyFor = errorId; else delete busy.dataset.busyFor;
  if (!errorId) busy.hidden = true;
  replaceIfChanged($("#banner-details"), details ? [details] : [], detailsKey);
  const toggle = $("#engine-toggle");
  toggle.hidden = !status.toggle;
  if (status.toggle) setText(toggle, status.toggle.label);
  document.body.classList.toggle("stale", status.stale);
  updateCountdown();
  const title = pageTitle(status, unread);
  if (document.title !== title) document.title = title;
}

/** The countdown in whole seconds from the wall clock (called every second), or what happens instead. */
export function updateCountdown(now = Date.now()) {
  if (!shown) return;
  setText($("#banner-countdown"), countdownText(shown, now));
}

// The connection's recent history: a tick per change, coloured by tone, with a legend and words.

const history = [];
const TONE_WORDS = { ok: "live", busy: "connecting", warn: "reconnecting", bad: "offline, paused or not answering", off: "stopped" };

export function recordHistory(status, now = Date.now()) {
  if (history.at(-1)?.label === status.label) return;
  history.push({ label: status.label, tone: status.tone, at: now });
  while (history.length > 30) history.shift();
  const strip = $("#history");
  strip.replaceChildren(...history.map((entry) => element("li", {
    attributes: { "data-tone": entry.tone, title: `${entry.label}, ${formatWhen(entry.at, now)} (${TONE_WORDS[entry.tone] ?? entry.tone})` },
  })));
  // The words for the colours: the last few changes, newest first.
  const recent = history.slice(-3).reverse().map((entry, index) => `${index === 0 ? "" : "before that "}${entry.label.replace(/…$/, "")} `
    + `${index === 0 ? "since" : "from"} ${formatWhen(entry.at, now)}`);
  setText($("#history-words"), `${recent.join("; ")}.`);
}
