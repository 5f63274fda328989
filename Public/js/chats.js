// The chats card and the chat view: each account's chats, newest activity first, with how many
// live messages are unread; one chat's messages oldest at the top with a heading for each day,
// scroll-back, marking read when it is opened; downloads of an account or a chat as JSON Lines;
// and writing in a chat: the message box, and the local echoes of what is not sent yet.

import { getJSON, HttpError, post, reasonFor, remove, UnreadableAnswer } from "./api.js";
import { confirmOption } from "./errors.js";
import { withProgress } from "./progress.js";
import { dayHeading, formatWhen } from "./dates.js";
import { editedMark, element, mentionMark, messageClass, messageText, oncePerFrame, senderOf, setText, timeElement } from "./dom.js";
import { historyWords } from "./historywords.js";
import { withChatsOfNewMessages } from "./chatlist.js";
import { composerRule, emptyOutbox, notSentCounts, outboxFrom, reactionEntries, withOutboxEvent, withSentMessages } from "./outbox.js";
import { makeComposer } from "./composer.js";
import { showReadFailure } from "./view.js";
import { wireReactions } from "./chatreactions.js";
import { reactionsRow } from "./reactionchips.js";
import { inTimeline, threadSummaryWords, threadUnreadWords } from "./threads.js";
import { closeThread, openThread, threadMessagesHeard, threadMessageChanged, threadOutboxChanged, wireThreads } from "./threadview.js";

const $ = (selector) => document.querySelector(selector);

const PAGE = 50;
const REFRESH_MS = 300;

let account = "primary";
let chats = [];
let refreshes = 0; // the newest list request: older answers that arrive late are dropped
let answered = 0; // the newest list request that has landed (or failed)
let heardWhileAsking = false; // new messages came while a list request was out: ask once more after it
let refreshTimer = null;

/** The open chat, if any: its messages oldest first. */
let open = null;
let unreadListener = () => {};

/** What the person wrote that is not sent yet (outbox.js), and whether the upstream takes messages. */
let outbox = emptyOutbox();
let canSend = false;
/** The open /problems/send-failed error of an unsent message, from the page's state (app.js). */
let errorOfEntry = () => null;
/** What an echo's Try again and Delete do with their answers: the page's own (surfaces.js). */
let echoHandlers = {};

/** `listener(count)` hears the unread count of the chats listed whenever it changes (the tab's title). */
export function onUnreadChanged(listener) {
  unreadListener = listener;
}

export function wireChats() {
  $("#chats-account").addEventListener("change", (event) => {
    account = event.target.value;
    renderExportLink();
    refreshChats();
  });
  $("#chat-close").addEventListener("click", () => $("#chat-view").close());
  $("#chat-view").addEventListener("close", chatClosed);
  $("#chat-older").addEventListener("click", () => loadOlder({ clicked: true }));
  $("#chat-newest").addEventListener("click", () => {
    if (open) openChat(open.account, open.chatId, { opener: open.opener });
  });
  renderExportLink();
  wireComposer();
  wireThreads({
    chat: () => (open && open.account === account ? chats.find((chat) => chat.id === open.chatId) : null),
    outbox: sharedOutbox, canSend: () => canSend, errorOf: (id) => errorOfEntry(id), handlers: () => echoHandlers,
  });
  $("#chat-messages").addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-thread]") : null;
    const root = button && open ? open.messages.find((message) => message.id === Number(button.dataset.thread)) : null;
    if (root) openThread(open.account, open.chatId, root, { opener: button });
  });
  refreshChats();
}

/** `errorFor(outboxId)` finds an unsent message's open error; `handlers` take its attempts' answers. */
export function wireOutbox({ errorFor, handlers }) {
  errorOfEntry = errorFor;
  echoHandlers = handlers;
}

/** The outbox as the snapshot gives it, and whether the upstream takes messages at all. */
export function setOutbox(list, sending) {
  outbox = outboxFrom(list, outbox);
  canSend = Boolean(sending);
  renderChats();
  renderOutbox();
}

/** An `outbox` event: an unsent message changed state, or left the outbox. */
export function outboxChanged(data) {
  const before = outbox;
  outbox = withOutboxEvent(outbox, data);
  renderChats();
  renderOutbox();
  // A reaction on its way shows on its message: given, sent, refused or deleted, it is drawn again.
  const reaction = (entries) => entries.some((entry) => entry.outboxId === data.outboxId && entry.messageId !== undefined);
  if (open && (data.messageId !== undefined || reaction(before.entries))) renderMessages();
}

/** Reads the chat list of the account shown again. */
export async function refreshChats() {
  clearTimeout(refreshTimer);
  refreshTimer = null;
  const asked = ++refreshes;
  const shown = account;
  let answer;
  try {
    answer = await getJSON(`/api/chats?account=${shown}`);
    if (!Array.isArray(answer.chats)) throw new UnreadableAnswer("/api/chats");
  } catch (failure) {
    if (asked === refreshes) {
      answered = asked;
      $("#chats-note").textContent = `The chats could not be loaded. ${reasonFor(failure)}`;
    }
    return;
  }
  if (asked !== refreshes) return;
  answered = asked;
  chats = answer.chats;
  renderChats();
  // The answer may have been read before those messages were stored.
  if (heardWhileAsking) {
    heardWhileAsking = false;
    refreshChats();
  }
}

/** Messages were stored: the list follows with the chats they changed (`changedChats`, as the
 *  event brings them), and an open chat shows its new ones. */
export function chatsHeard(messageAccount, messages, changedChats) {
  const before = outbox;
  outbox = withSentMessages(outbox, messages);
  if (outbox !== before) renderOutbox();
  if (messageAccount === account) {
    if (Array.isArray(changedChats)) {
      chats = withChatsOfNewMessages(chats, changedChats);
      renderChatsSoon();
      if (answered !== refreshes) heardWhileAsking = true;
    } else if (refreshTimer === null) {
      refreshTimer = setTimeout(refreshChats, REFRESH_MS);
    }
  }
  threadMessagesHeard(messageAccount, messages);
  if (!open || open.account !== messageAccount || !open.atNewest) return;
  // A reply in a thread is read there; its first message's count comes as a change.
  const fresh = messages.filter((message) => message.chatId === open.chatId && inTimeline(message) && !open.ids.has(message.id));
  if (fresh.length === 0) return;
  for (const message of fresh) open.ids.add(message.id);
  open.messages.push(...fresh);
  open.messages.sort((a, b) => a.id - b.id);
  const scroller = $("#chat-scroll");
  const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
  renderMessages();
  if (atBottom) scroller.scrollTop = scroller.scrollHeight;
  // Seen as they arrive: the chat stays read while it is open in a visible tab.
  if (document.visibilityState === "visible") markRead(open.account, open.chatId);
}

/** Somewhere (here or in another tab) a chat was marked read, all of it or up to a message
 *  (`unread` stay unread). */
export function chatMarkedRead(readAccount, chatId, unread = 0) {
  if (readAccount !== account) return;
  const chat = chats.find((item) => item.id === chatId);
  if (!chat || chat.unread === unread) return;
  chat.unread = unread;
  if (unread === 0) chat.highlights = 0;
  renderChats();
}

/** A stored message was edited: the open chat shows the new text. */
export function chatMessageChanged(changedAccount, message) {
  threadMessageChanged(changedAccount, message);
  if (!open || open.account !== changedAccount) return;
  const index = open.messages.findIndex((item) => item.id === message.id);
  if (index < 0) return;
  open.messages[index] = { ...open.messages[index], ...message };
  renderMessages();
}

/** Messages went (Free space, a deletion elsewhere) or an account changed: the list and the open chat follow. */
export function chatsChanged({ removed = null, accountGone = null } = {}) {
  if (open && accountGone === open.account) $("#chat-view").close();
  if (open && removed?.[open.account]?.length) {
    const gone = new Set(removed[open.account]);
    open.messages = open.messages.filter((message) => !gone.has(message.id));
    renderMessages();
  }
  refreshChats();
}

/** How far fetching older history is, in words under the list; quiet once it is complete. */
export function renderHistoryProgress(history) {
  const note = $("#history-progress");
  const words = historyWords(history);
  setText(note, words);
  note.hidden = !words;
}

/** A page of older messages was stored for `chatId`: the list's counts follow, and an open chat
 *  that had reached its oldest stored message can show older ones again. */
export function historyArrived(historyAccount, chatId) {
  if (chatId == null) return;
  if (open && open.account === historyAccount && open.chatId === chatId && open.nextBefore == null && open.messages.length > 0) {
    open.nextBefore = open.messages[0].id;
    renderControls();
  }
  if (historyAccount === account && refreshTimer === null) refreshTimer = setTimeout(refreshChats, REFRESH_MS);
}

/** A chat's membership changed (the account left it or came back): the list and the open chat follow. */
export function chatChanged(changedAccount, chat) {
  if (open && open.account === changedAccount && open.chatId === chat.id) renderArchived(chat);
  if (changedAccount === account) refreshChats();
}

/** An archived chat was removed (here or in another window): it closes, and the list follows. */
export function chatRemoved(removedAccount, chatId) {
  if (open && open.account === removedAccount && open.chatId === chatId) $("#chat-view").close();
  if (removedAccount === account) refreshChats();
}

/** The archive note of a chat the account left, with the way to remove it from this computer. */
function renderArchived(chat) {
  if (open) renderComposer(chat);
  const archived = chat?.membership === "leave";
  $("#chat-archived").hidden = !archived;
  $("#chat-remove-error").hidden = true;
  $("#chat-remove").onclick = archived ? () => removeChat(open.account, chat) : null;
}

async function removeChat(chatAccount, chat) {
  const count = chat.messageCount;
  const go = await confirmOption({
    title: "Remove this chat",
    confirm: `This deletes the ${count} stored ${count === 1 ? "message" : "messages"} of “${chatName(chat)}” from this computer. `
      + "It cannot be undone; the homeserver keeps what it keeps.",
  });
  if (!go) return;
  const note = $("#chat-remove-error");
  try {
    const answer = await withProgress($("#chat-remove"), () => remove(`/api/chats/${chat.id}?account=${chatAccount}`));
    if (answer.status !== 204) throw new HttpError(answer.status, answer.body);
  } catch (failure) {
    setText(note, `The chat was not removed: ${reasonFor(failure)}`);
    note.hidden = false;
  }
}

/** Whether the linked account exists: its option is offered only then. */
export function offerLinked(visible) {
  const select = $("#chats-account");
  select.hidden = !visible;
  if (!visible && account === "linked") {
    select.value = account = "primary";
    renderExportLink();
    refreshChats();
  }
}

// MARK: The list

function renderExportLink() {
  const link = $("#export-account");
  link.href = `/api/export?account=${account}`;
  link.textContent = `Export all ${account} messages`;
}

function chatName(chat) {
  return chat.name ?? `Chat ${chat.id}`;
}

/** The list as stored messages changed it, drawn in the next frame (dom.js `oncePerFrame`). */
const renderChatsSoon = oncePerFrame(() => renderChats());

function renderChats() {
  const list = $("#chats");
  const notSent = notSentCounts(outbox, account);
  const focused = document.activeElement?.closest?.("#chats [data-chat]")?.dataset.chat;
  $("#chats-note").textContent = chats.length === 0 ? "No chats stored yet."
    : `${chats.length} ${chats.length === 1 ? "chat" : "chats"}${unreadSummary()}.`;
  list.replaceChildren(...chats.map((chat) => {
    const when = chat.lastMessageAt ? shortTime(chat.lastMessageAt) : "";
    const mentions = chat.highlights > 0 ? `${chat.highlights} ${chat.highlights === 1 ? "mention" : "mentions"} of you` : "";
    const unread = chat.unread > 0 ? [`${chat.unread} unread`, mentions].filter(Boolean).join(", ") : "";
    const failed = notSent.get(chat.id) ?? 0;
    const notSentWords = failed > 0 ? `${failed} not sent` : "";
    const button = element("button", {
      className: "chat-row",
      attributes: {
        type: "button",
        "data-chat": String(chat.id),
        "aria-label": [chatName(chat), chat.membership === "leave" && "left, kept as an archive", chat.encrypted && "encrypted, cannot be read here",
          unread, notSentWords, when && `last message ${when}`]
          .filter(Boolean).join(", "),
      },
    }, [
      element("span", { className: "chat-name", text: chatName(chat) }),
      ...(chat.membership === "leave" ? [element("span", { className: "badge archived-badge", text: "Left", attributes: { "aria-hidden": "true" } })] : []),
      ...(chat.encrypted ? [element("span", { className: "badge encrypted-badge", text: "Encrypted", attributes: { "aria-hidden": "true" } })] : []),
      // A chat with mentions shows its count as Element does, in the colour of a mention.
      ...(chat.unread > 0 ? [element("span", { className: chat.highlights > 0 ? "unread mention" : "unread", text: String(chat.unread),
        attributes: { "aria-hidden": "true" } })] : []),
      ...(failed > 0 ? [element("span", { className: "badge not-sent-badge", text: notSentWords, attributes: { "aria-hidden": "true" } })] : []),
      element("span", { className: "chat-when muted", text: when, attributes: { "aria-hidden": "true" } }),
    ]);
    button.addEventListener("click", () => openChat(account, chat.id, { opener: button }));
    return element("li", {}, [button]);
  }));
  if (focused) list.querySelector(`[data-chat="${CSS.escape(focused)}"]`)?.focus();
  unreadListener(chats.reduce((sum, chat) => sum + chat.unread, 0));
}

function unreadSummary() {
  const total = chats.reduce((sum, chat) => sum + chat.unread, 0);
  return total > 0 ? `, ${total} unread ${total === 1 ? "message" : "messages"}` : "";
}

function shortTime(iso) {
  return formatWhen(iso);
}

// MARK: One chat

/** Opens a chat: its newest messages, or, `at` a message (a search result), that one and the
 *  ones before it, with the way back to the newest below; with `thread` (`{ root, at }`, a
 *  search result in a thread), at the thread's first message with the thread open over it. */
export async function openChat(chatAccount, chatId, { at = null, opener = null, name = null, thread = null } = {}) {
  const dialog = $("#chat-view");
  const known = chatAccount === account ? chats.find((chat) => chat.id === chatId) : null;
  open = {
    account: chatAccount, chatId, opener, messages: [], ids: new Set(), nextBefore: null, atNewest: at == null, at,
    loading: false, failed: false,
  };
  const title = name ?? (known ? chatName(known) : `Chat ${chatId}`);
  $("#chat-view-title").textContent = chatAccount === "linked" ? `${title} (linked account)` : title;
  $("#chat-export").href = `/api/export?account=${chatAccount}&chat=${chatId}`;
  $("#chat-messages").replaceChildren();
  $("#chat-error").replaceChildren();
  // Encrypted and unreadable here; through a decrypting proxy (pantalaimon) its messages are readable.
  $("#chat-encrypted").hidden = !(known?.encrypted && known.unreadable !== false);
  renderArchived(known);  // and the message box, on or off with its reason
  renderOutbox();
  if (!dialog.open) dialog.showModal();
  $("#chat-view-title").focus();
  await loadPage({ before: at == null ? null : at + 1 });
  if (!open || open.chatId !== chatId) return;
  const found = at == null ? null : $(`#chat-messages [data-id="${at}"]`);
  if (found) {
    found.classList.add("found");
    found.scrollIntoView({ block: "center" });
    found.focus();
  } else {
    $("#chat-scroll").scrollTop = $("#chat-scroll").scrollHeight;
  }
  // Read is what was shown: opened at a search result, only up to the newest message on screen.
  const newestShown = open?.messages.at(-1)?.id ?? null;
  if (known?.unread > 0 || !known) markRead(chatAccount, chatId, at == null ? null : newestShown);
  const root = thread ? open?.messages.find((message) => message.id === thread.root) : null;
  if (root) openThread(chatAccount, chatId, root, { at: thread.at, opener: found });
}

/** Loads a page of the open chat; `button` is the Try again clicked, which shows the progress. */
async function loadPage({ before = null, clicked = false, button = null } = {}) {
  const chat = open;
  chat.loading = true;
  renderControls();
  const query = new URLSearchParams({ account: chat.account, chat: String(chat.chatId), limit: String(PAGE) });
  if (before != null) query.set("before", String(before));
  let page;
  const fetchPage = async () => {
    const answer = await getJSON(`/api/messages?${query}`);
    if (!Array.isArray(answer.messages)) throw new UnreadableAnswer("/api/messages");
    return answer;
  };
  try {
    page = await (button ? withProgress(button, fetchPage) : fetchPage());
  } catch (failure) {
    if (open !== chat) return;
    chat.loading = false;
    chat.failed = true;
    const retry = showReadFailure($("#chat-error"), "The messages could not be loaded", reasonFor(failure),
      (again) => (chat.messages.length ? loadOlder({ clicked: true, button: again }) : loadPage({ before, clicked: true, button: again })));
    renderControls();
    if (clicked) retry.focus();
    return;
  }
  if (open !== chat) return;
  chat.loading = false;
  chat.failed = false;
  $("#chat-error").replaceChildren();
  const older = page.messages.filter((message) => !chat.ids.has(message.id)).reverse();
  for (const message of older) chat.ids.add(message.id);
  chat.messages.unshift(...older);
  chat.nextBefore = page.nextBefore;
  renderMessages();
}

async function loadOlder({ clicked = false, button = null } = {}) {
  if (!open || open.loading || open.nextBefore == null) return;
  const scroller = $("#chat-scroll");
  const fromBottom = scroller.scrollHeight - scroller.scrollTop;
  const firstShown = open.messages[0]?.id;
  await loadPage({ before: open.nextBefore, clicked, button });
  if (!open || open.failed) return;
  // The messages read so far stay where they were; the older ones appear above them.
  scroller.scrollTop = scroller.scrollHeight - fromBottom;
  if (!clicked) return;
  if (open.nextBefore == null) {
    $("#chat-start").focus();
  } else {
    $(`#chat-messages [data-id="${firstShown}"]`)?.focus();
  }
}

function dayOf(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toDateString();
}

function renderMessages() {
  const items = [];
  let day = null;
  const list = $("#chat-messages");
  // A reaction clicked keeps the focus in its redrawn chip.
  const focused = list.contains(document.activeElement) ? document.activeElement.dataset?.key : undefined;
  const known = chats.find((chat) => chat.id === open.chatId && open.account === account);
  const canReact = composerRule(known, { canSend }).enabled;
  const entries = reactionEntries(outbox, open.account);
  for (const message of open.messages) {
    const thisDay = dayOf(message.sentAt);
    if (thisDay !== day) {
      day = thisDay;
      items.push(element("li", { className: "day" }, [element("h3", { text: dayHeading(message.sentAt) || "Date unknown" })]));
    }
    items.push(element("li", {
      className: messageClass(message, message.id === open.at ? " found" : ""),
      attributes: { "data-id": String(message.id), tabindex: "-1" },
    }, [
      element("div", { className: "meta" }, [document.createTextNode(`${senderOf(message)} · `), timeElement(message.sentAt), ...editedMark(message), ...mentionMark(message)]),
      messageText(message),
      ...reactionsRow(message, open.account, entries, { interactive: canReact }),
      ...threadSummary(message),
    ]));
  }
  list.replaceChildren(...items);
  if (focused) list.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
  renderControls();
}

/** A thread's first message: "2 replies · last reply 5 min ago", and what is unread in it (as
 *  Element's thread dot), the way into the thread. */
function threadSummary(message) {
  const words = threadSummaryWords(message.thread);
  if (!words) return [];
  const last = timeElement(message.thread.lastReplyAt);
  const unread = threadUnreadWords(message.thread);
  return [element("button", {
    className: `thread-summary${unread ? " unread" : ""}${message.thread.highlights > 0 ? " mention" : ""}`,
    attributes: { type: "button", "data-thread": String(message.id),
      "aria-label": `Open the thread: ${words}${unread ? `, ${unread}` : ""}, the last ${last.textContent}` },
  }, [document.createTextNode(`${words} · last reply `), last,
    ...(unread ? [element("span", { className: "thread-unread", text: ` · ${unread}` })] : [])])];
}

function renderControls() {
  if (!open) return;
  const older = $("#chat-older");
  older.hidden = open.nextBefore == null && !(open.loading && open.messages.length > 0);
  const label = open.loading ? "Loading older messages…" : "Show older messages";
  if (older.textContent !== label) older.textContent = label;
  if (open.loading) older.setAttribute("aria-busy", "true"); else older.removeAttribute("aria-busy");
  $("#chat-start").hidden = open.loading || open.failed || open.nextBefore != null;
  $("#chat-start").textContent = open.messages.length === 0 ? "No messages of this chat are stored." : "That is the oldest stored message of this chat.";
  $("#chat-newest").hidden = open.atNewest || open.loading;
}

function chatClosed() {
  const closed = open;
  open = null;
  closeThread();
  if (!closed) return;
  // Back to where the person came from: the chat's row when the list was drawn again meanwhile.
  const opener = closed.opener?.isConnected ? closed.opener
    : $(`#chats [data-chat="${CSS.escape(String(closed.chatId))}"]`) ?? $("#chats-title");
  opener?.focus?.();
}

/** Marks the chat read: all of it, or (`through`) only up to the newest message shown. */
async function markRead(chatAccount, chatId, through = null) {
  let answer;
  try {
    answer = await post(`/api/chats/${encodeURIComponent(chatId)}/read?account=${chatAccount}`, through == null ? {} : { through });
  } catch {
    return; // not reached: the count stays as it is, which is still true
  }
  if (answer.status === 200) chatMarkedRead(chatAccount, chatId, answer.body?.chat?.unread ?? 0);
}

// MARK: Writing

/** The chat view's message box and echoes (composer.js), and its reaction clicks. */
let composer = null;

function wireComposer() {
  composer = makeComposer({
    form: $("#chat-composer"), box: $("#chat-text"), sendButton: $("#chat-send"), note: $("#chat-composer-note"), echoes: $("#chat-outbox"),
    place: () => (open ? { account: open.account, chatId: open.chatId, threadId: null } : null),
    outbox: sharedOutbox, canSend: () => canSend, errorOf: (id) => errorOfEntry(id), handlers: () => echoHandlers,
    written: () => {
      const scroller = $("#chat-scroll");
      scroller.scrollTop = scroller.scrollHeight;
    },
  });
  wireReactions({
    list: $("#chat-messages"),
    chat: () => open,
    entries: (of) => reactionEntries(outbox, of),
    accepted: (entry) => { outbox = withOutboxEvent(outbox, entry); },
    redraw: () => { if (open) renderMessages(); },
  });
}

/** The outbox every place to write shares (the chat view's, a thread's). */
const sharedOutbox = { get: () => outbox, set: (next) => { outbox = next; } };

function renderComposer(chat) {
  composer?.render(chat);
}

/** The open chat's local echoes, below its stored messages, and an open thread's. */
export function renderOutbox() {
  composer?.renderEchoes();
  threadOutboxChanged();
}
