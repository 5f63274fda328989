// What the person wrote that is not sent yet, as the page knows it: a plain value that the
// snapshot, the outbox events and the messages events go into, and that the chat view (its local
// echoes) and the chat list ("1 not sent") read. No DOM, no clock: tested under node --test.

import { isReactionEntry, reactionEchoText } from "./reactions.js";

/** How many ids of entries that left are remembered, so a late answer cannot bring one back. */
const LEFT_KEPT = 200;

/** An outbox with nothing in it. `writing`: what this page sent and the dashboard has not taken
 *  yet (no outbox id), shown at once; each leaves when its entry comes, by answer or by event. */
export function emptyOutbox() {
  return { entries: [], left: [], writing: [] };
}

/** The outbox as the snapshot (or GET /api/outbox) gives it. */
export function outboxFrom(list, before = emptyOutbox()) {
  return { ...before, entries: Array.isArray(list) ? list.filter(isEntry).sort(byId) : [] };
}

/** States in which an entry has left the outbox: sent, deleted, or left behind by an account that
 *  went (its messages are no longer this account's to send). */
const LEAVING = ["sent", "deleted", "left-behind"];

/** An `outbox` event: an entry whose state changed, or one that left (`LEAVING`). The event of an
 *  entry just written names its request key: this page's echo of it, if it wrote it. */
export function withOutboxEvent(outbox, data) {
  if (!Number.isInteger(data?.outboxId)) return outbox;
  const writing = typeof data.requestKey === "string" ? outbox.writing.filter((item) => item.requestKey !== data.requestKey) : outbox.writing;
  const others = outbox.entries.filter((entry) => entry.outboxId !== data.outboxId);
  if (LEAVING.includes(data.state)) return { entries: others, left: remembered(outbox.left, [data.outboxId]), writing };
  if (!isEntry(data) || outbox.left.includes(data.outboxId)) return writing === outbox.writing ? outbox : { ...outbox, writing };
  const { requestKey, ...entry } = data;
  return { entries: [...others, entry].sort(byId), left: outbox.left, writing };
}

/** A messages event: a message that came with `outboxId` takes the place of its local echo. */
export function withSentMessages(outbox, messages) {
  const sent = (messages ?? []).map((message) => message.outboxId).filter(Number.isInteger);
  if (sent.length === 0) return outbox;
  return { ...outbox, entries: outbox.entries.filter((entry) => !sent.includes(entry.outboxId)), left: remembered(outbox.left, sent) };
}

/** A message sent from this page, before the dashboard answers: its echo shows at once. With
 *  `notTaken`, one an earlier page sent and never heard back about (read from its draft). */
export function withWriting(outbox, { requestKey, account, chatId, threadId = null, text, createdAt, notTaken = null }) {
  if (outbox.writing.some((item) => item.requestKey === requestKey)) return outbox;
  return { ...outbox, writing: [...outbox.writing, { requestKey, account, chatId, threadId, text, createdAt, notTaken }] };
}

/** The dashboard did not take it (no answer, or a refusal): its echo stays, saying why, until the
 *  person tries again, edits or deletes it. */
export function withNotTaken(outbox, requestKey, reason) {
  return { ...outbox, writing: outbox.writing.map((item) => (item.requestKey === requestKey ? { ...item, notTaken: reason } : item)) };
}

/** The person tries a message that was not taken again: it is sending once more. */
export function withRetrying(outbox, requestKey) {
  return withNotTaken(outbox, requestKey, null);
}

/** The person edited or deleted a message the dashboard did not take: its echo goes. */
export function withoutWriting(outbox, requestKey) {
  return { ...outbox, writing: outbox.writing.filter((item) => item.requestKey !== requestKey) };
}

/** The answer to a message written here (202): its entry in place of its echo, unless its event
 *  came first; an answer that comes after the entry was sent or deleted brings nothing back. */
export function withAccepted(outbox, { requestKey, outboxId, account, chatId, threadId = null, text, createdAt }) {
  const writing = outbox.writing.filter((item) => item.requestKey !== requestKey);
  if (outbox.left.includes(outboxId) || outbox.entries.some((entry) => entry.outboxId === outboxId)) {
    return writing.length === outbox.writing.length ? outbox : { ...outbox, writing };
  }
  const entry = { outboxId, account, chatId, text, state: "queued", createdAt, error: null, ...(threadId == null ? {} : { threadId }) };
  return { entries: [...outbox.entries, entry].sort(byId), left: outbox.left, writing };
}

/** The local echoes of one chat's timeline (or, with `threadId`, of one thread in it), oldest
 *  first, shown below its stored messages: its entries, then what this page sent that the
 *  dashboard has not taken (`requestKey`, no `outboxId`): waiting for the answer (`queued`), or
 *  `not-taken` with the reason. A reaction on its way shows on its message (reactions.js), not
 *  here; one refused is here, with its Try again and Delete. */
export function pendingIn(outbox, account, chatId, threadId = null) {
  const inChat = (item) => item.account === account && item.chatId === chatId && (item.threadId ?? null) === threadId;
  const echoed = (entry) => !isReactionEntry(entry) || entry.state === "failed";
  const writing = outbox.writing.filter(inChat).map(({ notTaken, ...item }) => ({ ...item, state: notTaken ? "not-taken" : "queued", reason: notTaken, error: null }));
  return [...outbox.entries.filter((entry) => inChat(entry) && echoed(entry)), ...writing];
}

/** The entries of `account` that give or take back a reaction, oldest first. */
export function reactionEntries(outbox, account) {
  return outbox.entries.filter((entry) => entry.account === account && isReactionEntry(entry));
}

/** How many messages of each chat of `account` were not sent (failed), by chat id. */
export function notSentCounts(outbox, account) {
  const counts = new Map();
  for (const entry of outbox.entries) {
    if (entry.account === account && entry.state === "failed") counts.set(entry.chatId, (counts.get(entry.chatId) ?? 0) + 1);
  }
  return counts;
}

/** An echo's text: the message, or what an unsent reaction was to do. */
export function echoText(entry) {
  return isReactionEntry(entry) ? reactionEchoText(entry) : entry.text;
}

/** What a local echo says about itself: its mark, and for one not sent, why (the error's words). */
export function echoWords(entry) {
  if (entry.state === "not-taken") return { mark: "Not sent", reason: `The dashboard did not take it: ${entry.reason}` };
  if (entry.state === "failed") {
    const reason = entry.error ? [entry.error.detail, entry.error.suggestion].filter(Boolean).join(" ") : "The chat server refused it.";
    return { mark: "Not sent", reason };
  }
  return { mark: "Sending…", reason: "" };
}

/** Whether the person can write in `chat` here, and if not, why (said beside the disabled box). */
export function composerRule(chat, { canSend = true } = {}) {
  if (!canSend) return { enabled: false, reason: "This chat server takes no messages from the dashboard." };
  if (!chat) return { enabled: true, reason: "" };
  if (chat.membership === "leave") return { enabled: false, reason: "You left this chat, so nothing can be sent here." };
  if (chat.encrypted) {
    return { enabled: false, reason: "This room is end-to-end encrypted, and this dashboard cannot encrypt: write in Element or another Matrix app." };
  }
  return { enabled: true, reason: "" };
}

/** What a key press in the message box does: Enter sends, Shift+Enter (or Enter while composing
 *  with an input method) is a new line. */
export function keyAction({ key, shiftKey = false, isComposing = false }) {
  return key === "Enter" && !shiftKey && !isComposing ? "send" : "type";
}

/** The text as it would be sent, or null when there is nothing to send (empty or only spaces). */
export function sendableText(text) {
  return typeof text === "string" && text.trim().length > 0 ? text : null;
}

function remembered(left, ids) {
  return [...left, ...ids.filter((id) => !left.includes(id))].slice(-LEFT_KEPT);
}

function isEntry(entry) {
  return Number.isInteger(entry?.outboxId) && typeof entry.account === "string" && Number.isInteger(entry.chatId)
    && typeof entry.text === "string" && ["queued", "sending", "failed"].includes(entry.state);
}

function byId(a, b) {
  return a.outboxId - b.outboxId;
}
