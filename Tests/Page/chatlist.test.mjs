// The chat list following new messages (Public/js/chatlist.js), with Node's own test runner.
import assert from "node:assert/strict";
import { test } from "node:test";
import { withChatsOfNewMessages } from "../../Public/js/chatlist.js";

const chat = (id, unread, messageCount = 10) => ({ id, name: `Room ${id}`, unread, messageCount, lastMessageAt: null });

test("the chats new messages changed come first, with their new counts, and none is listed twice", () => {
  const list = [chat(1, 0), chat(2, 4), chat(3, 1)];
  assert.deepEqual(withChatsOfNewMessages(list, [chat(3, 2, 11)]), [chat(3, 2, 11), chat(1, 0), chat(2, 4)]);
  assert.deepEqual(withChatsOfNewMessages(list, [chat(2, 5, 11), chat(1, 1, 11)]), [chat(2, 5, 11), chat(1, 1, 11), chat(3, 1)]);
});

test("a chat heard of for the first time is added; an event without chats leaves the list", () => {
  const list = [chat(1, 0)];
  assert.deepEqual(withChatsOfNewMessages(list, [chat(9, 1, 1)]), [chat(9, 1, 1), chat(1, 0)]);
  assert.equal(withChatsOfNewMessages(list, []), list);
  assert.equal(withChatsOfNewMessages(list, undefined), list);
});

test("the list is in the order of activity: a chat whose newest message is older does not rise", () => {
  const at = (id, time) => ({ id, name: `Room ${id}`, unread: 0, messageCount: 1, lastMessageAt: `2026-12-06T08:00:0${time}.000Z` });
  const list = [at(1, 5), at(2, 3)];
  // Older history of chat 3 arrives: it takes its place below the newer ones.
  assert.deepEqual(withChatsOfNewMessages(list, [at(3, 1)]).map((chat) => chat.id), [1, 2, 3]);
  // A new message in chat 2 lifts it.
  assert.deepEqual(withChatsOfNewMessages(list, [at(2, 9)]).map((chat) => chat.id), [2, 1]);
});
