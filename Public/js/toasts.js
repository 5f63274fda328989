// Toasts: transient notices in the corner. At most three at once (the oldest goes first), a
// burst of the same kind is one toast that counts up, each can be dismissed, and none ever
// takes focus. Dialogs open in the top layer, above them.

import { element } from "./view.js";

const MAX_TOASTS = 3;
const $ = (selector) => document.querySelector(selector);

/** Shows a toast. A toast with the same `key` that is still shown is updated in place instead. */
export function toast(text, { detail, actions = [], seconds = 6, key } = {}) {
  const region = $("#toasts");
  let node = key ? region.querySelector(`.toast[data-key="${CSS.escape(key)}"]`) : null;
  if (node) {
    node.querySelector(".toast-text").textContent = text;
    const detailNode = node.querySelector(".toast-detail");
    detailNode.textContent = detail ?? "";
    detailNode.hidden = !detail;
  } else {
    const dismiss = element("button", { text: "×", className: "toast-dismiss", attributes: { type: "button", "aria-label": "Dismiss" } });
    node = element("div", { className: "toast", attributes: key ? { "data-key": key } : {} }, [
      element("p", { className: "toast-text", text }),
      element("p", { className: "toast-detail muted", text: detail ?? "" }),
      ...(actions.length ? [element("div", { className: "actions" }, actions)] : []),
      dismiss,
    ]);
    node.querySelector(".toast-detail").hidden = !detail;
    dismiss.addEventListener("click", () => node.remove());
    region.append(node);
    while (region.children.length > MAX_TOASTS) region.firstElementChild.remove();
  }
  clearTimeout(node.timer);
  const expire = () => {
    // Not while the pointer or the keyboard is on it: someone is reading or about to click.
    if (node.matches(":hover, :focus-within")) node.timer = setTimeout(expire, 1000);
    else node.remove();
  };
  node.timer = setTimeout(expire, seconds * 1000);
  return node;
}

const bursts = new Map(); // key -> { count, node }

/** New messages as one counting toast per kind of news: `away` for what arrived while syncing
 *  was interrupted or the tab was hidden, live news otherwise. */
export function messagesToast(count, last, { away = false } = {}) {
  const key = away ? "messages-away" : "messages-live";
  const burst = bursts.get(key);
  const total = (burst && burst.node.isConnected ? burst.count : 0) + count;
  let text;
  if (away) text = total === 1 ? "1 new message while you were away" : `${total} new messages while you were away`;
  else text = total === 1 ? `New message from ${last.sender}` : `${total} new messages`;
  const quote = last?.text && last.text.length > 160 ? `${last.text.slice(0, 160)}…` : last?.text;
  const node = toast(text, { detail: quote, seconds: 5, key });
  bursts.set(key, { count: total, node });
}
