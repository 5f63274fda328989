// How the chat list follows new messages: a plain function of the list and the chats a `messages`
// event says those messages changed (as /api/chats gives them), tested with Node's own runner.

/** The list's order, as Element's and as /api/chats gives it: the chat whose newest message was
 *  sent last first. Chats that say no time keep their places (the sort is stable). */
export function byActivity(a, b) {
  const at = (chat) => (typeof chat.lastMessageAt === "string" ? chat.lastMessageAt : "");
  if (at(a) === at(b)) return 0;
  return at(a) < at(b) ? 1 : -1;
}

/** The list after new messages: the chats they changed, as they stand now, take their places by
 *  activity (a page of older history does not lift its chat above newer ones); none is listed
 *  twice. */
export function withChatsOfNewMessages(list, changed) {
  if (!Array.isArray(changed) || changed.length === 0) return list;
  const ids = new Set(changed.map((chat) => chat.id));
  return [...changed, ...list.filter((chat) => !ids.has(chat.id))].sort(byActivity);
}
