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
