// How the chat list follows new messages: a plain function of the list and the chats a `messages`
// event says those messages changed (as /api/chats gives them), tested with Node's own runner.

/** The list after new messages: the chats they changed, as they stand now, go first (they hold
 *  the newest messages, newest activity first, as the event lists them); the others keep their
 *  order. */
export function withChatsOfNewMessages(list, changed) {
  if (!Array.isArray(changed) || changed.length === 0) return list;
  const ids = new Set(changed.map((chat) => chat.id));
  return [...changed, ...list.filter((chat) => !ids.has(chat.id))];
}
