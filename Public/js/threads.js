// Threads (a Matrix `m.thread`), as plain rules: which messages a chat's timeline shows (a reply
// in a thread is read in its thread), what a thread's first message says of it, where a search
// result opens, and how a thread's messages stand as replies come. No DOM: tested under node --test.

/** Whether `message` is read in its chat's timeline: all but the replies in a thread (`threadId`). */
export function inTimeline(message) {
  return message?.threadId == null;
}

/** What a thread's first message says of its replies: "2 replies", and when the last came (the
 *  caller says the moment in the page's words). Empty for a message that starts no thread. */
export function threadSummaryWords(thread) {
  const count = Number.isInteger(thread?.replies) ? thread.replies : 0;
  if (count <= 0) return "";
  return count === 1 ? "1 reply" : `${count} replies`;
}

/** What is unread in a thread, in words: "" when it was read, "1 unread", or "3 unread, 1
 *  mention" when some of them mention the account. */
export function threadUnreadWords(thread) {
  const unread = Number.isInteger(thread?.unread) ? thread.unread : 0;
  const mentions = Number.isInteger(thread?.highlights) ? thread.highlights : 0;
  if (unread <= 0 && mentions <= 0) return "";
  const words = `${Math.max(unread, mentions)} unread`;
  return mentions > 0 ? `${words}, ${mentions === 1 ? "1 mention" : `${mentions} mentions`}` : words;
}

/** Whether the open thread under `root` is to be marked read now: it has something unread and the
 *  person can see it (the view open, the tab in view). A thread read already asks nothing. */
export function threadWantsReading(root, { open, visible }) {
  return Boolean(open && visible && threadUnreadWords(root?.thread));
}

/** Where a search result opens: its chat at the message, or, for a reply in a thread, the chat at
 *  the thread's first message with the thread open at the reply. */
export function placeOf(message) {
  if (message?.threadId == null) return { chatAt: message?.id ?? null, thread: null };
  return { chatAt: message.threadId, thread: { root: message.threadId, at: message.id } };
}

/** An open thread's replies (oldest first) with the `messages` of a feed event that belong to it
 *  (`threadId` its root) and are not there yet; the same array when none do. */
export function withThreadReplies(replies, root, messages) {
  const known = new Set(replies.map((reply) => reply.id));
  const fresh = (messages ?? []).filter((message) => message.threadId === root && !known.has(message.id));
  if (fresh.length === 0) return replies;
  return [...replies, ...fresh].sort((a, b) => a.id - b.id);
}
