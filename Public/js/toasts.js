// Toasts: short notices in the strip at the bottom of the page, which has a place of its own
// there (on a wide window a row of the layout; on a narrow one a bar whose height the page keeps
// free below its end), so they never cover a control. At most three at once (the oldest goes
// first), each can be dismissed, none takes focus; a notice that counts (new messages) counts
// for COUNTING_LIFETIME_MS at most, then leaves. Dialogs open in the top layer, above them.

import { element } from "./dom.js";
import { COUNTING_LIFETIME_MS } from "./notices.js";

const MAX_TOASTS = 3;
const region = () => document.querySelector("#toasts");

/** Shows a toast. A toast with the same `key` that is still shown is updated in place instead
 *  (its time to leave stays what it was). Returns its node. */
export function toast(text, { detail, actions = [], seconds = 6, key } = {}) {
  const place = region();
  let node = key ? place.querySelector(`.toast[data-key="${CSS.escape(key)}"]`) : null;
  if (node) {
    node.querySelector(".toast-text").textContent = text;
    const detailNode = node.querySelector(".toast-detail");
    detailNode.textContent = detail ?? "";
    detailNode.hidden = !detail;
    return node;
  }
  const dismiss = element("button", { text: "×", className: "toast-dismiss", attributes: { type: "button", "aria-label": "Dismiss" } });
  node = element("div", { className: "toast", attributes: key ? { "data-key": key } : {} }, [
    element("p", { className: "toast-text", text }),
    element("p", { className: "toast-detail muted", text: detail ?? "" }),
    ...(actions.length ? [element("div", { className: "actions" }, actions)] : []),
    dismiss,
  ]);
  node.querySelector(".toast-detail").hidden = !detail;
  node.shownAt = Date.now();
  dismiss.addEventListener("click", () => leave(node));
  place.append(node);
  while (place.children.length > MAX_TOASTS) leave(place.firstElementChild);
  const expire = () => {
    // Not while the pointer or the keyboard is on it: someone is reading or about to click.
    if (node.matches(":hover, :focus-within")) node.timer = setTimeout(expire, 1000);
    else leave(node);
  };
  node.timer = setTimeout(expire, seconds * 1000);
  keepRoom();
  return node;
}

function leave(node) {
  clearTimeout(node.timer);
  node.remove();
  keepRoom();
}

/** On a narrow window the strip floats over the page's end: the page keeps that much room free. */
function keepRoom() {
  const place = region();
  const floating = getComputedStyle(place).position === "fixed";
  document.body.style.paddingBottom = floating && place.children.length ? `${place.getBoundingClientRect().height + 8}px` : "";
}

const counts = new Map(); // key -> { count, node }

/** A notice about new messages (notices.js): a counting toast per kind and `episode` (one
 *  interruption, one time away: two of them are never added up), which stops counting and leaves
 *  COUNTING_LIFETIME_MS after it first showed; what comes after that is a new toast. */
export function messagesToast(notice, count, episode = "") {
  const key = `messages-${notice.kind}-${episode}`;
  const current = counts.get(key);
  const alive = current && current.node.isConnected && Date.now() - current.node.shownAt < COUNTING_LIFETIME_MS;
  const total = alive ? current.count + count : count;
  if (current && !alive && current.node.isConnected) leave(current.node);
  const text = notice.kind === "live" && total > 1 ? `${total} new messages`
    : notice.kind === "summary" ? (total === 1 ? "1 message arrived while syncing was interrupted" : `${total} messages arrived while syncing was interrupted`)
      : notice.kind === "away" ? (total === 1 ? "1 new message while you were away" : `${total} new messages while you were away`)
        : notice.text;
  const node = toast(text, { detail: notice.quote, seconds: COUNTING_LIFETIME_MS / 1000, key });
  counts.set(key, { count: total, node });
  return node;
}

/** A message a toast quotes (`quoted`: "account/id") was edited (`text`) or deleted (null):
 *  the quote follows, or goes. */
export function quotedMessageChanged(quoted, text) {
  for (const node of document.querySelectorAll(`#toasts .toast[data-quoted="${CSS.escape(quoted)}"]`)) {
    const detail = node.querySelector(".toast-detail");
    detail.textContent = text ?? "";
    detail.hidden = !text;
    if (text === null) delete node.dataset.quoted;
  }
}
