// Threads on the page (Public/js/threads.js) and their place in the outbox, with Node's own test runner.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inTimeline, placeOf, threadSummaryWords, threadUnreadWords, threadWantsReading, withThreadReplies } from "../../Public/js/threads.js";
import { emptyOutbox, outboxFrom, pendingIn, withAccepted, withWriting } from "../../Public/js/outbox.js";

test("a reply in a thread is read in its thread, every other message in the chat's timeline", () => {
  assert.equal(inTimeline({ id: 1 }), true);
  assert.equal(inTimeline({ id: 2, threadId: null }), true);
  assert.equal(inTimeline({ id: 3, threadId: 1 }), false);
});

test("a thread's first message counts its replies in words, and a message without any says nothing", () => {
  assert.equal(threadSummaryWords({ replies: 1, lastReplyAt: "x" }), "1 reply");
  assert.equal(threadSummaryWords({ replies: 12, lastReplyAt: "x" }), "12 replies");
  assert.equal(threadSummaryWords(undefined), "");
  assert.equal(threadSummaryWords({ replies: 0 }), "");
  assert.equal(threadSummaryWords({ replies: "3" }), "", "a count that is no number is none");
});

test("what is unread in a thread reads as a count, with its mentions, and a read thread says nothing", () => {
  assert.equal(threadUnreadWords({ replies: 3, unread: 2, highlights: 0 }), "2 unread");
  assert.equal(threadUnreadWords({ replies: 3, unread: 3, highlights: 1 }), "3 unread, 1 mention");
  assert.equal(threadUnreadWords({ replies: 3, unread: 2, highlights: 2 }), "2 unread, 2 mentions");
  assert.equal(threadUnreadWords({ replies: 3, unread: 0, highlights: 1 }), "1 unread, 1 mention", "a mention is unread even where the rules count no notification");
  assert.equal(threadUnreadWords({ replies: 3, unread: 0, highlights: 0 }), "");
  assert.equal(threadUnreadWords({ replies: 3 }), "", "a server that counts nothing: nothing unread");
  assert.equal(threadUnreadWords(undefined), "");
});

test("an open thread is marked read only when it has something unread and the person can see it", () => {
  const unread = { id: 1, thread: { replies: 2, unread: 1, highlights: 0 } };
  assert.equal(threadWantsReading(unread, { open: true, visible: true }), true);
  assert.equal(threadWantsReading(unread, { open: true, visible: false }), false, "a tab out of view reads nothing");
  assert.equal(threadWantsReading(unread, { open: false, visible: true }), false, "a closed view reads nothing");
  assert.equal(threadWantsReading({ id: 1, thread: { replies: 2, unread: 0, highlights: 0 } }, { open: true, visible: true }), false,
    "read already: no request");
  assert.equal(threadWantsReading(null, { open: true, visible: true }), false);
});

test("a search result in a thread opens the chat at the thread's first message and the thread at the reply", () => {
  assert.deepEqual(placeOf({ id: 40, chatId: 2, threadId: 31 }), { chatAt: 31, thread: { root: 31, at: 40 } });
  assert.deepEqual(placeOf({ id: 40, chatId: 2 }), { chatAt: 40, thread: null });
});

test("an open thread takes in the new replies of its own root once each, in order", () => {
  const replies = [{ id: 5, threadId: 1 }, { id: 8, threadId: 1 }];
  const next = withThreadReplies(replies, 1, [{ id: 9, threadId: 1 }, { id: 7, threadId: 1 }, { id: 8, threadId: 1 }, { id: 10, threadId: 2 }, { id: 11 }]);
  assert.deepEqual(next.map((reply) => reply.id), [5, 7, 8, 9]);
  assert.equal(withThreadReplies(replies, 1, [{ id: 12, threadId: 3 }]), replies, "nothing of its own: the same replies");
});

test("what is written in a thread is echoed in that thread, not in its chat's timeline", () => {
  let outbox = outboxFrom([
    { outboxId: 1, account: "primary", chatId: 4, text: "in the room", state: "queued", createdAt: "t", error: null, action: "message" },
    { outboxId: 2, account: "primary", chatId: 4, text: "in the thread", state: "failed", createdAt: "t", error: null, action: "message", threadId: 30 },
  ], emptyOutbox());
  outbox = withWriting(outbox, { requestKey: "k1", account: "primary", chatId: 4, threadId: 30, text: "typed in the thread", createdAt: "t" });
  outbox = withWriting(outbox, { requestKey: "k2", account: "primary", chatId: 4, text: "typed in the room", createdAt: "t" });
  assert.deepEqual(pendingIn(outbox, "primary", 4).map((item) => item.text), ["in the room", "typed in the room"]);
  assert.deepEqual(pendingIn(outbox, "primary", 4, 30).map((item) => item.text), ["in the thread", "typed in the thread"]);
  assert.deepEqual(pendingIn(outbox, "primary", 4, 31), [], "another thread has none of them");
  const accepted = withAccepted(outbox, { requestKey: "k1", outboxId: 3, account: "primary", chatId: 4, threadId: 30, text: "typed in the thread", createdAt: "t" });
  assert.deepEqual(pendingIn(accepted, "primary", 4, 30).map((item) => [item.outboxId, item.text]), [[2, "in the thread"], [3, "typed in the thread"]],
    "the answer's entry stays in its thread");
});
