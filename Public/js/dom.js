// What every page module shares for the DOM: finding, making and updating nodes, and moments
// said the one way the page says them (dates.js). Upstream text is untrusted: it only ever goes
// in through textContent.

import { exactTime, formatWhen } from "./dates.js";

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

export function element(tag, { text, className, attributes } = {}, children = []) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attributes ?? {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

/** Sets a node's text only when it changes (no needless mutation, no re-announcement). */
export function setText(node, text) {
  if (node && node.textContent !== text) node.textContent = text;
}

/** Replaces `container`'s children with `nodes` unless they are the same already (by `key`, or
 *  by the nodes' own keys and texts). The focused control keeps the focus in its replacement. */
export function replaceIfChanged(container, nodes, key) {
  const signature = key ?? nodes.map((node) => `${node.dataset?.key ?? ""}:${node.textContent}`).join("|");
  if (container.dataset.key === signature) return;
  const focused = container.contains(document.activeElement) ? document.activeElement.dataset?.key : undefined;
  container.dataset.key = signature;
  container.replaceChildren(...nodes);
  if (focused) container.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
}

/** A moment as the page says it, kept true as time passes (`refreshTimes`); the exact time on hover. */
export function timeElement(iso) {
  return element("time", { text: formatWhen(iso), attributes: { datetime: String(iso ?? ""), "data-when": "", title: exactTime(iso) } });
}

/** Says every shown moment again ("5 min ago" becomes "6 min ago"): only what is in the DOM. */
export function refreshTimes(now = Date.now()) {
  for (const node of document.querySelectorAll("time[data-when]")) {
    const text = formatWhen(node.getAttribute("datetime"), now);
    if (node.textContent !== text) node.textContent = text;
  }
}

/** " (edited)" after the time of a message its sender changed, with when in its title. */
export function editedMark(message) {
  if (!message.editedAt) return [];
  const mark = element("span", { className: "edited", text: " (edited)" });
  const when = new Date(message.editedAt);
  if (!Number.isNaN(when.getTime())) mark.title = `Edited ${when.toLocaleString()}`;
  return [mark];
}

/** The sender as the chat names them (a Matrix display name), else their id. */
export function senderOf(message) {
  return message.senderName || message.sender;
}

/** The text row of a message, by its kind: an emote as "* name text", an encrypted one as a
 *  plain note (its text is the server's placeholder, never the message). */
export function messageText(message) {
  const kind = message.kind ?? "text";
  const text = kind === "emote" ? `* ${senderOf(message)} ${message.text}` : message.text;
  return element("div", { className: `text kind-${kind}`, text });
}
