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

/** `draw`, once in the next frame however often the returned function is asked before it. What
 *  the feed changes besides its rows (lists, counts, the status) is drawn this way: the row is
 *  put in place at once and the rest follows before that frame is painted, once for a burst. A
 *  hidden tab draws no frames and its title is what the person sees of it: there it is at once. */
export function oncePerFrame(draw) {
  let queued = false;
  return () => {
    if (document.hidden) return draw();
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      draw();
    });
  };
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

/** " · Mentions you" for a message the account's own rules called a mention (a highlight),
 *  as Element marks one; nothing for any other. */
export function mentionMark(message) {
  return message.attention === "mention" ? [element("span", { className: "mention-mark", text: " · Mentions you" })] : [];
}

/** " · in a thread" for a reply in a thread (`threadId`), where a stream of every chat shows it
 *  among the chats' own messages; nothing for any other. */
export function threadMark(message) {
  return message.threadId == null ? [] : [element("span", { className: "thread-mark", text: " · in a thread" })];
}

/** The class of a message's row: a mention stands out, as in Element. */
export function messageClass(message, extra = "") {
  return `message${message.attention === "mention" ? " mention" : ""}${extra}`;
}

/** The sender as the chat names them (a Matrix display name), else their id. */
export function senderOf(message) {
  return message.senderName || message.sender;
}

/** The text row of a message, by its kind: an emote as "* name text", an encrypted one as a
 *  plain note (its text is the server's placeholder, never the message). */
let replyLookup = () => undefined;

/** `lookup(account, id)` finds a loaded message, for the line a reply shows above its text. */
export function setReplyLookup(lookup) {
  replyLookup = lookup;
}

export function messageText(message) {
  const kind = message.kind ?? "text";
  const body = (kind === "image" || kind === "file") && message.media ? mediaBlock(kind, message)
    : element("div", { className: `text kind-${kind}`, text: kind === "emote" ? `* ${senderOf(message)} ${message.text}` : message.text });
  if (!("replyTo" in message)) return body;
  return element("div", { className: "reply" }, [replyNote(message), body]);
}

/** "In reply to bob: lunch at noon", or, when that message is not loaded here, that it is earlier. */
function replyNote(message) {
  const original = message.replyTo == null ? undefined : replyLookup(message.account, message.replyTo);
  const text = original ? `In reply to ${senderOf(original)}: ${original.text.slice(0, 120)}` : "In reply to an earlier message";
  return element("div", { className: "reply-note muted", text });
}

/** An image as a lazy thumbnail of a fixed height (nothing moves when it loads) that opens the
 *  file; any other file as a download link with its size; one that cannot be fetched here (an
 *  encrypted attachment) says so. The file's name is the image's alt text. */
function mediaBlock(kind, message) {
  const media = message.media;
  const name = media.name || message.text || "file";
  const caption = message.text && message.text !== name ? [element("span", { className: "media-caption", text: message.text })] : [];
  if (!media.url) {
    return element("div", { className: `text kind-${kind}`, text: `${name} (this file cannot be opened here: open it in Element)` });
  }
  if (kind === "image") {
    const image = element("img", { className: "media-thumb", attributes: { src: `${media.url}?thumbnail=1`, alt: name, loading: "lazy", decoding: "async" } });
    return element("div", { className: "text kind-image" }, [
      element("a", { attributes: { href: media.url, target: "_blank", rel: "noopener", title: `Open ${name}` } }, [image]), ...caption,
    ]);
  }
  const size = Number.isFinite(media.size) ? ` (${formatBytes(media.size)})` : "";
  return element("div", { className: "text kind-file" }, [
    element("a", { className: "media-file", text: `${name}${size}`, attributes: { href: media.url, download: name } }), ...caption,
  ]);
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
