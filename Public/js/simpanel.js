// The Simulator panel: the built-in demo chat server's controls, in words (what each fault does),
// and the simulator as it is now, kept true in every window from the feed's `simulator` events.

import { $, element, setText } from "./dom.js";
import { formatBytes } from "./view.js";

/** Each fault in words: its name in the list, and what it does. */
export const FAULTS = {
  none: { name: "No fault", does: "Everything works." },
  offline: { name: "Server offline", does: "Refuses new connections and cuts the ones held open." },
  error500: { name: "Server errors", does: "Answers every call with an error (500)." },
  slow: { name: "Slow answers", does: "Each answer waits 2 s before it comes." },
  malformed: { name: "Broken answers", does: "Answers with cut-off data or a web page instead." },
  drop: { name: "Cut connections", does: "Cuts the connection in the middle of an answer." },
  decline: { name: "Payments declined", does: "Buy more space is turned down." },
  unauthorized: { name: "Sign-in refused", does: "Turns down every new session." },
  conflict: { name: "Another poller", does: "Another client takes over fetching messages." },
  "refuse-send": { name: "Sends refused", does: "Refuses every message written in a chat (403), as a chat one may not write in." },
};

const RATES = { 1: "every call", 0.5: "half of the calls", 0.2: "one call in five" };

/** How often messages come by themselves, in words. */
export function autoWords(perSecond) {
  if (!perSecond) return "no messages by themselves";
  if (perSecond < 1) return `a new message about every ${Math.round(1 / perSecond)} s`;
  return `${perSecond} new ${perSecond === 1 ? "message" : "messages"} a second`;
}

/** The panel's "Now" line: the simulator as it is. */
export function simulatorWords(stats) {
  const fault = stats.faultMode === "none" ? "no fault"
    : `${FAULTS[stats.faultMode]?.name ?? stats.faultMode} on ${RATES[stats.faultRate] ?? `${Math.round(stats.faultRate * 100)} % of the calls`}`;
  return `Now: ${fault}, ${autoWords(stats.autoPerSecond)}, storage ${formatBytes(stats.quotaBytes)}.`;
}

/** Shows the simulator's settings; a field the person is changing right now is left alone. */
export function renderSimulator(stats) {
  if (!stats) return;
  const field = (selector, value) => {
    const node = $(selector);
    if (document.activeElement === node) return;
    const wanted = String(value);
    if ([...(node.options ?? [])].some((option) => option.value === wanted) || node.tagName === "INPUT") node.value = wanted;
  };
  field("#sim-fault", stats.faultMode);
  field("#sim-fault-rate", stats.faultRate);
  field("#sim-rate", stats.autoPerSecond);
  setText($("#sim-now"), simulatorWords(stats));
  setText($("#sim-fault-does"), FAULTS[$("#sim-fault").value]?.does ?? "");
  $("#demo-stop").hidden = !(stats.autoPerSecond > 0);
}

/** Wires the panel: `send(action, body)` posts to the simulator through the dashboard and
 *  resolves true when it was done. */
export function wireSimulator(send) {
  $("#demo").hidden = false;
  const value = (selector) => $(selector).value;
  $("#sim-publish").addEventListener("submit", (event) => {
    event.preventDefault();
    send("messages", { account: value("#sim-account"), count: Number(value("#sim-count")) });
  });
  $("#sim-auto").addEventListener("change", () => send("auto", { perSecond: Number(value("#sim-rate")) }));
  $("#sim-fault").addEventListener("change", () => setText($("#sim-fault-does"), FAULTS[value("#sim-fault")]?.does ?? ""));
  $("#sim-faults").addEventListener("submit", (event) => {
    event.preventDefault();
    send("faults", { mode: value("#sim-fault"), rate: Number(value("#sim-fault-rate")) });
  });
  $("#sim-link").addEventListener("click", () => send("linked", { linked: true }));
  $("#sim-unlink").addEventListener("click", () => send("linked", { linked: false }));
  $("#sim-expire").addEventListener("click", () => send("expire-token", {}));
  $("#sim-fill").addEventListener("click", () => send("fill", {}));
  $("#demo-stop").addEventListener("click", () => send("auto", { perSecond: 0 }));
}

/** The newest messages the simulator received from the accounts (`/api/simulator/written`). */
export function renderWritten(messages, shown = 5) {
  const list = $("#sim-written");
  const newest = (messages ?? []).slice(-shown);
  list.replaceChildren(...newest.map((message) => element("li", {
    text: `${message.chatName ?? `Chat ${message.chatId}`} (${message.account}): ${message.text}`,
  })));
  $("#sim-written-none").hidden = newest.length > 0;
}
