// The thread view: one thread of a chat (a Matrix `m.thread`), its first message at the top and
// its replies oldest first below, older ones a click away, and a message box that answers in the
// thread. It opens over the chat view, from a first message's "2 replies" or a search result in a
// thread; new replies come in as they are stored. Rules in threads.js; writing in composer.js.

import { getJSON, post, reasonFor, UnreadableAnswer } from "./api.js";
import { editedMark, element, mentionMark, messageClass, messageText, senderOf, setText, timeElement } from "./dom.js";
import { makeComposer } from "./composer.js";
import { reactionsRow } from "./reactionchips.js";
import { threadWantsReading, withThreadReplies } from "./threads.js";
import { showReadFailure } from "./view.js";

const $ = (selector) => document.querySelector(selector);
const PAGE = 50;

/** The open thread, if any: `{ account, chatId, root, replies (oldest first), nextBefore, at, opener, loading }`. */
let thread = null;
let composer = null;
let chatOf = () => null;

/** `chat()` is the open chat's summary (whether it can be written in); the rest is what the
 *  chat view's composer shares (composer.js): the outbox, whether the upstream takes messages,
 *  an unsent entry's error and what its options do. */
export function wireThreads({ chat, outbox, canSend, errorOf, handlers }) {
  chatOf = chat;
  composer = makeComposer({
    form: $("#thread-composer"), box: $("#thread-text"), sendButton: $("#thread-send"), note: $("#thread-composer-note"), echoes: $("#thread-outbox"),
    place: () => (thread ? { account: thread.account, chatId: thread.chatId, threadId: thread.root.id } : null),
    outbox, canSend, errorOf, handlers,
    written: () => {
      const scroller = $("#thread-scroll");
      scroller.scrollTop = scroller.scrollHeight;
    },
  });
  $("#thread-close").addEventListener("click", () => $("#thread-view").close());
  $("#thread-view").addEventListener("close", threadClosed);
  $("#thread-older").addEventListener("click", () => loadReplies({ older: true, clicked: true }));
  document.addEventListener("visibilitychange", readIfSeen);
}

/** Marks the open thread read when it has something unread and can be seen (threads.js): the
 *  server answers with a change of its first message, which shows it read. */
function readIfSeen() {
  const shown = thread;
  if (!threadWantsReading(shown?.root, { open: $("#thread-view").open, visible: document.visibilityState === "visible" })) return;
  if (shown.reading) return;
  shown.reading = true;
  post(`/api/chats/${encodeURIComponent(shown.chatId)}/read?account=${shown.account}`, { thread: shown.root.id })
    .catch(() => {}) // not reached: it stays unread, which is still true, and the next change asks again
    .finally(() => { shown.reading = false; });
}

/** Opens the thread under `root` (a stored message of the open chat); `at` a reply to show (a
 *  search result), `opener` what gets the focus back when it closes. */
export async function openThread(account, chatId, root, { at = null, opener = null } = {}) {
  thread = { account, chatId, root, replies: [], nextBefore: null, at, opener, loading: false };
  $("#thread-view-title").textContent = `Thread: ${senderOf(root)}`;
  $("#thread-messages").replaceChildren();
  $("#thread-error").replaceChildren();
  render();
  composer.render(chatOf());
  composer.renderEchoes();
  const dialog = $("#thread-view");
  if (!dialog.open) dialog.showModal();
  $("#thread-view-title").focus();
  await loadReplies();
  if (!thread || thread.root.id !== root.id) return;
  readIfSeen();
  const found = at == null ? null : $(`#thread-messages [data-id="${at}"]`);
  if (found) {
    found.scrollIntoView({ block: "center" });
    found.focus();
  } else {
    $("#thread-scroll").scrollTop = $("#thread-scroll").scrollHeight;
  }
}

/** Closes the thread view, if open (its chat closed). */
export function closeThread() {
  if ($("#thread-view").open) $("#thread-view").close();
}

async function loadReplies({ older = false, clicked = false } = {}) {
  const shown = thread;
  if (!shown || shown.loading) return;
  shown.loading = true;
  render();
  const query = new URLSearchParams({ account: shown.account, thread: String(shown.root.id), limit: String(PAGE) });
  if (older && shown.nextBefore != null) query.set("before", String(shown.nextBefore));
  const scroller = $("#thread-scroll");
  const fromBottom = scroller.scrollHeight - scroller.scrollTop;
  let page;
  try {
    page = await getJSON(`/api/messages?${query}`);
    if (!Array.isArray(page.messages)) throw new UnreadableAnswer("/api/messages");
  } catch (failure) {
    if (thread !== shown) return;
    shown.loading = false;
    const retry = showReadFailure($("#thread-error"), "The thread could not be loaded", reasonFor(failure), () => loadReplies({ older, clicked: true }));
    render();
    if (clicked) retry.focus();
    return;
  }
  if (thread !== shown) return;
  shown.loading = false;
  $("#thread-error").replaceChildren();
  shown.replies = withThreadReplies(shown.replies, shown.root.id, page.messages);
  shown.nextBefore = page.nextBefore;
  render();
  // The replies read so far stay where they were; older ones appear above them.
  if (older) scroller.scrollTop = scroller.scrollHeight - fromBottom;
}

/** New messages were stored: those of the open thread come in below, as the chat view does. */
export function threadMessagesHeard(account, messages) {
  if (!thread || thread.account !== account) return;
  const replies = withThreadReplies(thread.replies, thread.root.id, messages);
  if (replies === thread.replies) return;
  const scroller = $("#thread-scroll");
  const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
  thread.replies = replies;
  render();
  if (atBottom) scroller.scrollTop = scroller.scrollHeight;
}

/** A stored message changed (edited, its reactions, its thread's count): the open thread shows it. */
export function threadMessageChanged(account, message) {
  if (!thread || thread.account !== account) return;
  if (message.id === thread.root.id) {
    thread.root = { ...thread.root, ...message };
    readIfSeen(); // a reply came while it is open: read as it is seen
  } else if (thread.replies.some((reply) => reply.id === message.id)) {
    thread.replies = thread.replies.map((reply) => (reply.id === message.id ? { ...reply, ...message } : reply));
  } else return;
  render();
}

/** What was written in the thread and is not sent yet changed. */
export function threadOutboxChanged() {
  composer?.renderEchoes();
}

function row(message, { first = false } = {}) {
  return element("li", {
    className: messageClass(message, `${first ? " thread-root" : ""}${message.id === thread.at ? " found" : ""}`),
    attributes: { "data-id": String(message.id), tabindex: "-1" },
  }, [
    element("div", { className: "meta" }, [document.createTextNode(`${senderOf(message)} · `), timeElement(message.sentAt), ...editedMark(message), ...mentionMark(message)]),
    messageText(message),
    ...reactionsRow(message, thread.account, [], { interactive: false }),
  ]);
}

function render() {
  if (!thread) return;
  // The first message counts every reply; fewer may be loaded.
  const count = Math.max(thread.replies.length, thread.root.thread?.replies ?? 0);
  $("#thread-root").replaceChildren(row(thread.root, { first: true }));
  const heading = element("li", { className: "day" }, [element("h3", {
    text: thread.loading && count === 0 ? "Loading the replies…" : count === 0 ? "No replies stored yet" : count === 1 ? "1 reply" : `${count} replies`,
  })]);
  $("#thread-messages").replaceChildren(heading, ...thread.replies.map((reply) => row(reply)));
  const older = $("#thread-older");
  older.hidden = thread.nextBefore == null;
  setText(older, thread.loading ? "Loading older replies…" : "Show older replies");
}

function threadClosed() {
  const closed = thread;
  thread = null;
  if (!closed) return;
  // Back to where the person came from: the first message's button, drawn again meanwhile.
  const opener = closed.opener?.isConnected ? closed.opener : $(`#chat-messages button[data-thread="${closed.root.id}"]`);
  opener?.focus();
}
