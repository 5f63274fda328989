// The dashboard page: loads the snapshot (a view with Try again when that fails), follows the
// feed through its own long-poll loop, and renders connection state, messages, storage,
// recoverable errors and the recent problems.
//
// One place per fact: a problem's words and buttons show where its presentation says (the pane's
// view, the banner, a dialog, a toast), never in two places at once; the status line and the
// storage card say the state, without buttons. The focus never falls back to the page body: after
// any action it goes to the next useful control or to the region that changed.

import { getJSON, HttpError, loadSession, post, reasonFor, UnreadableAnswer } from "./api.js";
import {
  alertIsMine, alertShowing, announce, attemptRunningHere, claimError, closeAlert, detailsDisclosure, failureText, forgetAttempts, noteAttemptEvent,
  optionButtons, refreshButtons, renderErrorView, resetRemoteAttempts, setOff, setProcessReachable, showAlert, signatureOf,
} from "./errors.js";
import { chatMarkedRead, chatsChanged, chatsHeard, offerLinked, refreshChats, wireChats } from "./chats.js";
import { attemptEnded, problemRaised, problemResolved, resetProblems } from "./history.js";
import { MessageList } from "./messagelist.js";
import { markIfBusy, withProgress } from "./progress.js";
import { startPolling } from "./poll.js";
import { wireSearch } from "./search.js";
import { decideNotice, keepForLater, startTabs, takeKept } from "./tabs.js";
import { messagesToast, toast } from "./toasts.js";
import {
  element, formatBytes, hideBanner, recordHistory, renderStorage, showAge, showBanner, showLinkedPane, showReadFailure, showStatus,
  updateCountdown,
} from "./view.js";

const ACCOUNTS = ["primary", "linked"];
/** Messages per scroll-back page. */
const OLDER_PAGE = 200;
const $ = (selector) => document.querySelector(selector);

const state = {
  connection: null,
  reachable: true,
  unreachableRetryAt: null,
  /** When this page last heard from the dashboard process (a poll answer). */
  lastHeardAt: Date.now(),
  stateSince: Date.now(),
  accounts: { primary: null, linked: null },
  storage: null,
  errors: new Map(),
  /** Ids the feed said were resolved: a late attempt answer must not bring them back. */
  resolved: new Set(),
  /** Scroll-back per account: a page is loading, or the last load failed (no automatic retry). */
  older: { primary: { loading: false, failed: false }, linked: { loading: false, failed: false } },
  /** Messages this tab told of with system notifications since it was last seen (their count). */
  notified: 0,
  /** When this page last saw the engine get an answer (a messages event is one too). */
  lastAnswerAt: 0,
  /** The connection has been in trouble since it was last live: the banner stays until then. */
  inTrouble: false,
  /** Alert-presented errors: shown as a dialog here, or as a quiet note (acted on elsewhere). */
  alertPlacement: new Map(),
  /** Where the focus goes if the control that had it goes away with the next render. */
  focusNext: null,
  lastFocused: null,
};

/** How long the upstream holds a poll (the connection says; this is the default): a live
 *  connection hears from it at least this often. */
const HOLD_SECONDS = 25;

/** The two panes' message lists (messagelist.js), made at start. */
const lists = {};
let poller = null;

// MARK: Applying what the server says

function isSnapshot(snapshot) {
  return typeof snapshot?.epoch === "string" && Number.isInteger(snapshot.seq) && typeof snapshot.connection?.state === "string"
    && Array.isArray(snapshot.errors) && typeof snapshot.messages === "object" && snapshot.messages !== null
    && typeof snapshot.accounts === "object" && snapshot.accounts !== null;
}

/** Takes in a snapshot: the first, or a new one after the process restarted. The history the
 *  reader has loaded stays when it still belongs to the same accounts. */
function applySnapshot(snapshot, { first = false } = {}) {
  const before = state.accounts;
  setConnection(snapshot.connection);
  state.accounts = snapshot.accounts;
  state.storage = snapshot.storage;
  state.errors = new Map(snapshot.errors.map((error) => [error.id, error]));
  for (const error of snapshot.errors) {
    if (error.presentation === "alert" && !state.alertPlacement.has(error.id)) state.alertPlacement.set(error.id, "dialog");
  }
  resetRemoteAttempts(snapshot.errors);
  resetProblems(snapshot.recentProblems);
  for (const account of ACCOUNTS) {
    const messages = snapshot.messages[account] ?? [];
    const list = lists[account];
    const sameAccount = before?.[account]?.userId === snapshot.accounts[account]?.userId;
    const newest = messages.reduce((highest, message) => Math.max(highest, message.id), -Infinity);
    if (first || !sameAccount || (list.size > 0 && newest < list.newestId())) {
      list.reset(messages, { hasOlder: messages.length >= 50 });
    } else {
      list.add(messages);
    }
  }
  renderAll();
}

function applyEvents(events) {
  for (const { type, data } of events) {
    switch (type) {
      case "connection":
        setConnection(data);
        break;
      case "messages":
        state.lastAnswerAt = Date.now();
        addMessages(data.account, data.messages, data.notify, data.caughtUp === true);
        chatsHeard(data.account, data.messages);
        if (data.storage) state.storage = data.storage;
        break;
      case "chat.read":
        chatMarkedRead(data.account, data.chatId);
        break;
      case "storage":
        state.storage = data;
        break;
      case "messages.removed":
        for (const account of ACCOUNTS) lists[account].remove(data[account] ?? []);
        chatsChanged({ removed: data });
        state.storage = data.storage;
        break;
      case "error.raised":
        errorRaised(data);
        break;
      case "error.resolved":
        errorResolved(data.id);
        break;
      case "attempt":
        noteAttemptEvent(data);
        if (data.status !== "running") attemptEnded(data);
        break;
      case "account.linked":
        state.accounts.linked = { userId: data.userId, cursor: null };
        lists.linked.reset([], { hasOlder: false });
        if (!data.firstSync) toast("A linked account was attached.");
        break;
      case "account.unlinked":
        state.accounts.linked = null;
        lists.linked.reset([], { hasOlder: false });
        chatsChanged({ accountGone: "linked" });
        toast("The linked account was detached; its messages were removed.");
        break;
      case "account.changed":
        state.accounts = { primary: { userId: data.userId, cursor: null }, linked: null };
        for (const account of ACCOUNTS) lists[account].reset([], { hasOlder: false });
        chatsChanged({ accountGone: "primary" });
        chatsChanged({ accountGone: "linked" });
        toast(`The chat server signed in another user (${data.userId} instead of ${data.previousUserId}).`, {
          detail: `The ${data.removedMessages} stored messages of the previous user were removed from this computer, so the two are not mixed.`,
          seconds: 20,
        });
        break;
      default:
        break;
    }
  }
  renderAll();
}

function errorRaised(error) {
  const before = state.errors.get(error.id);
  state.errors.set(error.id, error);
  problemRaised(error);
  if (error.lastAttempt && error.lastAttempt.at !== before?.lastAttempt?.at) announce(failureText(error));
  if (error.presentation === "alert" && !state.alertPlacement.has(error.id)) {
    const placement = alertIsMine(error) ? "dialog" : "note";
    state.alertPlacement.set(error.id, placement);
    if (placement === "note") quietNote(error);
  }
}

/** An alert caused by what someone did in another window: a note here, with a way to see it. */
function quietNote(error) {
  const show = element("button", { text: "Show", attributes: { type: "button" } });
  const note = toast(`In another window: ${error.title}`, { detail: error.detail, actions: [show], seconds: 12, key: `note/${error.id}` });
  show.addEventListener("click", () => {
    note.remove();
    if (!state.errors.has(error.id)) return;
    state.alertPlacement.set(error.id, "dialog");
    renderErrors();
  });
}

function errorResolved(id) {
  const wasShowing = alertShowing() === id;
  state.errors.delete(id);
  state.resolved.add(id);
  state.alertPlacement.delete(id);
  $(`.toast[data-key="${CSS.escape(`note/${id}`)}"]`)?.remove();
  forgetAttempts(id);
  closeAlert(id);
  problemResolved(id);
  if (wasShowing && !attemptRunningHere(id)) toast("That problem was dealt with in another window.", { seconds: 6 });
}

function setConnection(connection) {
  if (state.connection?.state !== connection.state) state.stateSince = Date.now();
  state.connection = connection;
  const success = Date.parse(connection.lastSuccessAt ?? "");
  if (!Number.isNaN(success)) state.lastAnswerAt = Math.max(state.lastAnswerAt, success);
}

/** Adds messages to their pane; those that notify are told once across all the dashboard's
 *  tabs (tabs.js): a toast in a visible tab, else one tab's system notification, else a summary
 *  for whichever tab the person sees next. */
function addMessages(account, messages, notify, caughtUp) {
  const fresh = messages.filter((message) => !lists[account].has(message.id));
  lists[account].add(messages.map((message) => ({ ...message, account })));
  if (!notify || fresh.length === 0) return;
  const { action, fresh: untold } = decideNotice(account, fresh.map((message) => message.id));
  const told = fresh.filter((message) => untold.includes(message.id));
  const last = told.at(-1);
  if (action === "toast") {
    messagesToast(told.length, last, { away: caughtUp });
  } else if (action === "notify") {
    if ("Notification" in window && Notification.permission === "granted") {
      state.notified += told.length;
      const count = state.notified;
      new Notification(count === 1 ? `New message from ${last.sender}` : `${count} new messages`, { body: last.text, tag: "lp-messages" });
    } else {
      keepForLater(told.length, last);
    }
  }
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState !== "visible") return;
  state.notified = 0;
  const kept = takeKept();
  if (kept) messagesToast(kept.count, kept.last, { away: true });
});

// MARK: Rendering

function renderAll() {
  renderConnection();
  for (const account of ACCOUNTS) renderPane(account);
  showLinkedPane(state.accounts.linked != null);
  offerLinked(state.accounts.linked != null);
  renderStorage(state.storage, outOfSpaceError());
  renderErrors();
  renderSyncControl();
  restoreFocus();
}

/** What the pane says around its messages: nothing yet, older ones to load, the start reached,
 *  and whether what it shows may be out of date. */
function renderPane(account) {
  const list = lists[account];
  const older = state.older[account];
  $(`[data-empty-for="${account}"]`).hidden = list.size > 0 || list.hasOlder;
  const button = $(`[data-older-for="${account}"]`);
  button.hidden = !list.hasOlder;
  const label = older.loading ? "Loading older messages…" : "Show older messages";
  if (button.textContent !== label) button.textContent = label;
  if (older.loading) button.setAttribute("aria-busy", "true"); else button.removeAttribute("aria-busy");
  $(`[data-start-for="${account}"]`).hidden = list.hasOlder || list.size === 0;
  const stale = $(`[data-stale-for="${account}"]`);
  stale.hidden = state.reachable;
  stale.textContent = state.reachable ? "" : `· as of ${new Date(state.lastHeardAt).toLocaleTimeString()}, may be out of date`;
}

function renderSyncControl() {
  const toggle = $("#engine-toggle");
  const stopped = state.connection?.state === "stopped";
  const label = stopped ? "Start syncing" : "Stop syncing";
  if (toggle.textContent !== label) toggle.textContent = label;
  const text = stopped ? "Syncing is stopped: no new messages are fetched until you start it." : "Syncing with the chat server.";
  if ($("#sync-text").textContent !== text) $("#sync-text").textContent = text;
}

/** Puts the focus where `state.focusNext` says when the control that had it went away (a
 *  render removed or hid it, a dialog closed), or on the next useful control when nothing says. */
function restoreFocus() {
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected && active.getClientRects().length) return;
  const last = state.lastFocused;
  const lost = last && (!last.isConnected || !last.getClientRects().length);
  if (!state.focusNext && !lost) return;
  // An attempt from this window is ending: where the focus goes depends on its answer.
  if (!state.focusNext && attemptRunningHere()) return;
  const target = state.focusNext?.() ?? nextUsefulControl();
  if (target && target.isConnected && target.getClientRects().length) {
    target.focus();
    state.focusNext = null;
  }
}

function nextUsefulControl() {
  const shown = (node) => (node && node.getClientRects().length ? node : null);
  return shown($('#banner-actions [data-role="default"]')) ?? shown($('[data-view-for="primary"] button[data-role="default"]'))
    ?? $("#pane-primary-title");
}

/** Remembers the control that has the focus, so that a render that takes it away can put the
 *  focus somewhere useful; what the person does next replaces any plan for the focus. */
function watchFocus() {
  document.addEventListener("focusin", (event) => { state.lastFocused = event.target; });
  // A dialog closing or a control hidden under the focus moves it to the body without a render.
  document.addEventListener("focusout", (event) => {
    if (!event.relatedTarget) queueMicrotask(restoreFocus);
  });
  for (const type of ["pointerdown", "keydown"]) {
    document.addEventListener(type, () => { state.focusNext = null; }, { capture: true });
  }
}

const handlers = { onDone: attemptDone, onEscape: alertEscaped };

/** Escape on an alert closes it and nothing more: the error goes on in the banner, with its
 *  options, where the focus goes too. */
function alertEscaped(error) {
  state.alertPlacement.set(error.id, "banner");
  closeAlert(error.id);
  renderAll();
  // After the dialog's own focus return (to what had the focus when it opened).
  const next = $("#banner").hidden ? null : $('#banner-actions [data-role="default"]') ?? $("#banner-actions button");
  next?.focus();
}

function attemptDone(error, option, answer) {
  switch (answer.status) {
    case "recovered":
      // The error leaving the page shows it; what the option did is worth saying.
      if (answer.summary) {
        toast(answer.summary, { seconds: 12 });
        const news = $("#storage-news");
        news.textContent = answer.summary;
        news.hidden = !["/problems/out-of-space", "/problems/purchase-declined"].includes(error.type);
      }
      announce(answer.summary ?? `${option.title} worked.`);
      break;
    case "dismissed":
      // Done as asked (Not now, Stop syncing): not a failure. A kept error shows in its new form.
      if (answer.error && !state.resolved.has(answer.error.id)) state.errors.set(answer.error.id, answer.error);
      announce(answer.summary ?? `${option.title}: done.`);
      break;
    case "failed":
      if (answer.error && !state.resolved.has(answer.error.id)) {
        state.errors.set(answer.error.id, answer.error);
        // Where an alert shows was decided when it was raised (the feed tells before the answer
        // comes): the person may have acted in another window since. Only one not seen yet is ours.
        if (answer.error.presentation === "alert" && !state.alertPlacement.has(answer.error.id)) {
          claimError(answer.error.id);
          state.alertPlacement.set(answer.error.id, "dialog");
        }
      }
      if (option.role !== "cancel" && answer.error?.lastAttempt) announce(failureText(answer.error));
      break;
    case "gone":
      toast("That problem was already resolved.", { seconds: 4 });
      break;
    case "busy":
      toast("Another attempt on this problem is still running.", { detail: "Its outcome shows here when it ends.", seconds: 5 });
      break;
    case "unreachable":
      processDidNotAnswer();
      break;
    default:
      toast("The dashboard refused that.", { detail: answer.problem?.detail ?? "" });
  }
  state.focusNext = () => focusAfter(error, option, answer);
  renderAll();
}

/** Where the focus goes after an option ran and its control went away. */
function focusAfter(error, option, answer) {
  const bannerButton = (selector) => ($("#banner").hidden ? null : $(`#banner-actions ${selector}`));
  if (answer.status === "recovered" && ["/problems/out-of-space", "/problems/purchase-declined"].includes(error.type)) {
    return $("#storage-title");
  }
  if (option.role === "cancel") {
    // Syncing stopped: Start syncing is next. Out of space hidden: its options are in the banner now.
    return bannerButton('[data-key="start"]') ?? bannerButton('[data-role="default"]') ?? bannerButton("button") ?? $("#engine-toggle");
  }
  return bannerButton('[data-role="default"]') ?? $('[data-view-for="primary"] button[data-role="default"]') ?? $("#pane-primary-title");
}

function errorsShownAs(presentation) {
  return [...state.errors.values()].filter((error) => error.presentation === presentation);
}

function outOfSpaceError() {
  return [...state.errors.values()].find((error) => error.type === "/problems/out-of-space");
}

const toasted = new Set();

function renderErrors() {
  renderErrorView($('[data-view-for="primary"]'), errorsShownAs("view").at(-1), handlers);

  const alerts = errorsShownAs("alert").filter((error) => state.alertPlacement.get(error.id) === "dialog");
  const showing = alertShowing();
  if (alerts.length && !$("#confirm").open) {
    showAlert(alerts.find((error) => error.id === showing) ?? alerts.at(-1), handlers);
  } else if (!alerts.length && showing) {
    closeAlert();
  }

  for (const error of errorsShownAs("toast")) {
    if (toasted.has(error.id)) continue;
    toasted.add(error.id);
    toast(error.title, { detail: error.detail, actions: optionButtons(error, handlers) });
  }
  renderConnection();
  refreshButtons();
}

/** Retry now: `action` returns a promise that settles when the retry is over; the button shows
 *  its progress (at least 400 ms), also when the banner is drawn again meanwhile. */
function retryButton(action, key = "retry") {
  const button = element("button", { text: "Retry now", attributes: { type: "button", "data-role": "default", "data-key": key } });
  button.addEventListener("click", () => withProgress(button, action));
  return markIfBusy(button);
}

/** The error the banner is about: the latest connection problem, or an alert that is not a
 *  dialog here (closed with Escape, or caused in another window), so its options stay within
 *  reach; out of space has its own place. */
function connectionError() {
  const inBanner = (error) => error.presentation === "banner"
    || (error.presentation === "alert" && state.alertPlacement.get(error.id) !== "dialog");
  return [...state.errors.values()].filter((error) => inBanner(error) && error.type !== "/problems/out-of-space").at(-1);
}

function bannerForError(error, { text, tone = "warn", countdownTo = null, progress = "", except = [] }) {
  showBanner({
    text,
    tone,
    countdownTo,
    progress,
    actions: optionButtons(error, handlers, { except }),
    actionsKey: `${signatureOf(error)}/${except.join()}`,
    note: failureText(error),
    details: detailsDisclosure(error),
    detailsKey: `${error.id}/${error.debug?.underlying}`,
    errorId: error.id,
  });
}

function renderConnection() {
  if (!state.reachable) {
    showStatus("unreachable");
    recordHistory("unreachable");
    showBanner({
      text: "The dashboard process does not answer. Is it still running? Buttons that need it are off until it is back, "
        + "and what the page shows may be out of date.",
      tone: "bad",
      countdownTo: state.unreachableRetryAt,
      actions: [retryButton(() => poller?.retryNow(), "retry-process")],
      actionsKey: "unreachable",
    });
    return;
  }
  const connection = state.connection;
  if (!connection) return;
  const since = Date.now() - state.stateSince;
  const stateName = connection.state;
  // The network went: "Reconnecting" for the first 15 s, then "Offline"; nothing is tried meanwhile.
  const offlineSoon = stateName === "offline" && since < 15_000;
  // Live, but no answer for longer than a poll is held: the upstream is slow or stalled.
  const quietSeconds = Math.floor((Date.now() - state.lastAnswerAt) / 1000);
  const hold = connection.holdSeconds ?? HOLD_SECONDS;
  const quiet = stateName === "live" && state.lastAnswerAt > 0 && quietSeconds > hold + 2;
  const outOfSpace = outOfSpaceError();
  const behind = [...state.errors.values()].find((error) => error.type === "/problems/upstream-behind");
  if (quiet) showStatus("slow", "Live, but the chat server is slow");
  else if (offlineSoon) showStatus("connecting", "Reconnecting…");
  else showStatus(stateName, stateName === "waiting" && connection.attempt > 1 ? `Waiting to retry (attempt ${connection.attempt})` : undefined);
  showAge(quiet ? `Updated ${quietSeconds} s ago` : "");
  recordHistory(connection.state);

  const trouble = connectionError();
  if (["waiting", "offline"].includes(stateName) || trouble) state.inTrouble = true;
  else if (["live", "stopped", "paused"].includes(stateName)) state.inTrouble = false;
  const retry = () => retryButton(() => send("/api/engine/retry-now"));
  switch (stateName) {
    case "live":
      if (trouble) bannerForError(trouble, { text: `${trouble.title}. ${trouble.suggestion}` });
      else hideBanner();
      break;
    case "connecting":
      // The banner of a failure stays while the next try runs: only its progress text changes.
      if (trouble) bannerForError(trouble, { text: `${trouble.title}. ${trouble.detail}`, progress: "Trying again now…" });
      else if (state.inTrouble || since >= 1000) {
        showBanner({ text: "The connection to the chat server was interrupted.", progress: "Reconnecting…", actions: [retry()], actionsKey: "retry" });
      } else hideBanner();
      break;
    case "waiting": {
      const retryAt = connection.retryAt ? Date.parse(connection.retryAt) : null;
      if (trouble) bannerForError(trouble, { text: `${trouble.title}. ${trouble.detail}`, countdownTo: retryAt });
      else showBanner({ text: "The connection to the chat server was interrupted.", countdownTo: retryAt, actions: [retry()], actionsKey: "retry" });
      break;
    }
    case "offline":
      // Nothing is tried until the network is back, so no "Trying again" here.
      if (trouble) bannerForError(trouble, { text: `${trouble.title}. ${trouble.detail}`, tone: offlineSoon ? "warn" : "bad" });
      else showBanner({ text: "Offline: syncing resumes when the network is back.", tone: offlineSoon ? "warn" : "bad", actions: [], actionsKey: "" });
      break;
    case "paused": {
      const shown = outOfSpace ?? behind;
      if (shown && shown.presentation === "view") {
        // The view in the pane says it all, with its buttons; the status line says syncing is paused.
        hideBanner();
      } else if (outOfSpace) {
        bannerForError(outOfSpace, {
          text: "Syncing is paused: storage is full. Nothing is lost; new messages wait on the server.",
          tone: "bad",
          except: ["cancel"],
        });
      } else if (behind) {
        bannerForError(behind, { text: `Syncing is paused: ${behind.title.toLowerCase()}.`, tone: "bad", except: ["cancel"] });
      } else {
        showBanner({ text: "Syncing is paused.", tone: "bad", actions: [], actionsKey: "" });
      }
      break;
    }
    case "stopped": {
      const start = element("button", { text: "Start syncing", attributes: { type: "button", "data-role": "default", "data-key": "start" } });
      start.addEventListener("click", () => {
        state.focusNext = () => $("#engine-toggle");
        send("/api/engine/start");
      });
      showBanner({ text: "Syncing is stopped.", actions: [start], actionsKey: "start" });
      break;
    }
    default:
      hideBanner();
  }
}

// MARK: Talking to the process

/** Posts a state change; when the process does not answer, says so and checks at once. */
async function send(path, body = {}) {
  try {
    return await post(path, body);
  } catch {
    processDidNotAnswer();
    return null;
  }
}

function processDidNotAnswer() {
  toast("The dashboard process did not answer.", { detail: "Nothing was changed. Buttons that need it stay off until it answers again.", key: "no-answer" });
  poller?.retryNow();
}

function reachabilityChanged(reachable, retryAt) {
  const changed = state.reachable !== reachable;
  state.reachable = reachable;
  state.unreachableRetryAt = retryAt;
  if (reachable) state.lastHeardAt = Date.now();
  if (!changed) {
    if (!reachable) renderConnection();
    return;
  }
  document.body.classList.toggle("unreachable", !reachable);
  setProcessReachable(reachable);
  if (reachable) {
    announce("Reconnected to the dashboard process.");
    toast("Reconnected.", { detail: "The dashboard process answers again; the page is up to date.", seconds: 5, key: "reconnected" });
    $('.toast[data-key="no-answer"]')?.remove();
  }
  renderAll();
}

// MARK: Scroll-back

/** Loads the next older page of a pane; `button` is the Try again clicked, which shows the progress. */
async function loadOlder(account, { clicked = false, button = null } = {}) {
  const older = state.older[account];
  const list = lists[account];
  if (older.loading || !list.hasOlder || !state.reachable) return;
  const place = $(`[data-older-error-for="${account}"]`);
  older.loading = true;
  renderPane(account);
  const query = new URLSearchParams({ account, limit: String(OLDER_PAGE) });
  const oldest = list.oldestId();
  if (oldest != null) query.set("before", String(oldest));
  const fetchPage = async () => {
    const page = await getJSON(`/api/messages?${query}`);
    if (!Array.isArray(page.messages)) throw new UnreadableAnswer("/api/messages");
    return page;
  };
  try {
    const page = await (button ? withProgress(button, fetchPage) : fetchPage());
    list.add(page.messages.map((message) => ({ ...message, account })));
    list.setHasOlder(page.nextBefore != null);
    older.failed = false;
    place.replaceChildren();
  } catch (failure) {
    older.failed = true;
    const retry = showReadFailure(place, "Older messages could not be loaded", reasonFor(failure),
      (again) => loadOlder(account, { clicked: true, button: again }));
    if (clicked) retry.focus();
  } finally {
    older.loading = false;
  }
  renderPane(account);
  // The button went away with the last page: the note that the start is reached takes the focus.
  if (clicked && !list.hasOlder && !older.failed) $(`[data-start-for="${account}"]`).focus();
}

// MARK: Controls

function makeLists() {
  for (const account of ACCOUNTS) {
    const jump = $(`[data-jump-for="${account}"]`);
    const scroller = $(`[data-scroll-for="${account}"]`);
    lists[account] = new MessageList({
      scroller,
      list: $(`[data-messages-for="${account}"]`),
      onNearEnd: () => { if (!state.older[account].failed) loadOlder(account); },
      onUnseen: (count) => {
        jump.hidden = count === 0;
        jump.textContent = count === 1 ? "1 new message ↑" : `${count} new messages ↑`;
        jump.setAttribute("aria-label", count === 1 ? "Show 1 new message" : `Show ${count} new messages`);
      },
    });
    jump.addEventListener("click", () => {
      lists[account].jumpToNewest();
      scroller.focus();
    });
    $(`[data-start-for="${account}"]`).tabIndex = -1;
  }
}

function wireControls() {
  for (const account of ACCOUNTS) {
    $(`[data-older-for="${account}"]`).addEventListener("click", () => loadOlder(account, { clicked: true }));
  }
  const toggle = $("#engine-toggle");
  toggle.addEventListener("click", async () => {
    if (toggle.dataset.busy === "true") return;
    toggle.dataset.busy = "true";
    setOff(toggle, true);
    const stopped = state.connection?.state === "stopped";
    await send(stopped ? "/api/engine/start" : "/api/engine/stop");
    delete toggle.dataset.busy;
    setOff(toggle, !state.reachable);
  });
  wireNotifications();
  watchFocus();
  $("#confirm").addEventListener("close", () => renderErrors());
  setInterval(() => { updateCountdown(); renderConnection(); }, 1000);
}

function wireNotifications() {
  const button = $("#notifications");
  const note = $("#notifications-note");
  const render = () => {
    if (!("Notification" in window)) {
      button.hidden = true;
      note.hidden = false;
      note.textContent = "This browser cannot show notifications.";
      return;
    }
    const permission = Notification.permission;
    button.hidden = permission !== "default";
    note.hidden = permission === "default";
    note.textContent = permission === "granted"
      ? "Notifications are on: new messages show one while this tab is in the background."
      : "Notifications are blocked for this page. To allow them, click the icon at the left of the address bar, "
        + "set Notifications to Allow, then reload the page.";
  };
  button.addEventListener("click", async () => {
    await Notification.requestPermission();
    render();
    note.tabIndex = -1;
    note.focus();
  });
  render();
}

function wireSimulator() {
  $("#simulator").hidden = false;
  const send = async (action, body) => {
    let answer;
    try {
      answer = await post(`/api/simulator/${action}`, body);
    } catch {
      processDidNotAnswer();
      return false;
    }
    if (answer.status !== 200) {
      toast("The simulator refused that.", { detail: answer.body?.detail ?? answer.body?.error ?? `HTTP ${answer.status}` });
      return false;
    }
    await loadSimulatorState();
    return true;
  };
  const value = (selector) => $(selector).value;
  $("#sim-publish").addEventListener("submit", (event) => {
    event.preventDefault();
    send("messages", { account: value("#sim-account"), count: Number(value("#sim-count")) });
  });
  $("#sim-auto").addEventListener("submit", (event) => {
    event.preventDefault();
    send("auto", { perSecond: Number(value("#sim-rate")) });
  });
  $("#sim-faults").addEventListener("submit", (event) => {
    event.preventDefault();
    send("faults", { mode: value("#sim-fault"), rate: Number(value("#sim-fault-rate")) });
  });
  $("#sim-link").addEventListener("click", () => send("linked", { linked: true }));
  $("#sim-unlink").addEventListener("click", () => send("linked", { linked: false }));
  $("#sim-expire").addEventListener("click", () => send("expire-token", {}));
  $("#sim-fill").addEventListener("click", () => send("fill", {}));
  loadSimulatorState();
}

/** The simulator panel shows the simulator as it is (after a reload too), not the page's defaults. */
async function loadSimulatorState() {
  let stats;
  try {
    stats = await getJSON("/api/simulator/stats");
  } catch {
    return;
  }
  const field = (selector, value) => { if (document.activeElement !== $(selector)) $(selector).value = String(value); };
  field("#sim-fault", stats.faultMode);
  field("#sim-fault-rate", stats.faultRate);
  field("#sim-rate", stats.autoPerSecond);
  const fault = stats.faultMode === "none" ? "no faults" : `fault ${stats.faultMode} on ${Math.round(stats.faultRate * 100)} % of calls`;
  const auto = stats.autoPerSecond > 0 ? `${stats.autoPerSecond} new messages a second` : "no background messages";
  $("#sim-now").textContent = `Now: ${fault}, ${auto}, quota ${formatBytes(stats.quotaBytes)}.`;
}

// MARK: First load

let loadFailures = 0;

/** The first load: session and snapshot. When either fails or answers something unreadable, the
 *  main area is a view that says so, with Try again (seed 000: an error on first entry is a view). */
async function load() {
  const view = $("#load-view");
  const retry = view.querySelector("button");
  const fetchAll = async () => {
    const session = await loadSession();
    const snapshot = await getJSON("/api/state");
    if (!isSnapshot(snapshot)) throw new UnreadableAnswer("/api/state");
    return { session, snapshot };
  };
  let loaded;
  try {
    // A Try again shows its progress for at least 400 ms, so one that fails at once is seen to run.
    loaded = await (retry ? withProgress(retry, fetchAll) : fetchAll());
  } catch (failure) {
    showLoadFailure(failure);
    return;
  }
  if (!loaded) return; // a second click while the first one's load runs
  view.hidden = true;
  view.replaceChildren();
  document.body.classList.remove("load-failed");
  start(loaded.session, loaded.snapshot);
}

function showLoadFailure(failure) {
  loadFailures += 1;
  const view = $("#load-view");
  document.body.classList.add("load-failed");
  showStatus("unreachable", "The dashboard could not be loaded");
  const retry = element("button", { text: "Try again", attributes: { type: "button", "data-role": "default", "data-key": "load-retry" } });
  retry.addEventListener("click", load);
  const note = loadFailures > 1 ? `Still failing (tried at ${new Date().toLocaleTimeString()}).` : "";
  const locked = failure instanceof HttpError && failure.status === 401;
  view.replaceChildren(
    element("h2", { text: locked ? "Open the dashboard's own address" : "The dashboard could not be loaded" }),
    element("p", { text: reasonFor(failure) }),
    element("p", { className: "muted", text: locked
      ? "In the terminal where it runs, find the line \"dashboard listening on http://…/?token=…\" and open that address. "
        + "The token is new each time the dashboard starts, so after a restart open the new line."
      : "Try again in a moment. If it keeps failing, restart the dashboard (swift run dashboard)." }),
    element("p", { className: "attempt-note", text: note, attributes: note ? {} : { hidden: "" } }),
    element("div", { className: "actions" }, [retry]),
  );
  view.hidden = false;
  if (note) announce(note);
  retry.focus();
}

let wired = false;

function start(session, snapshot) {
  $("#server-info").textContent = `Dashboard process ${session.epoch} on ${location.host}`;
  startTabs(session.epoch);
  if (!wired) makeLists();
  applySnapshot(snapshot, { first: !wired });
  if (!wired) {
    wired = true;
    wireControls();
    wireChats();
    wireSearch();
    if (session.simulator) wireSimulator();
  }
  poller?.stop();
  poller = startPolling({
    epoch: snapshot.epoch,
    since: snapshot.seq,
    onEvents: applyEvents,
    onReset: (fresh) => {
      if (!isSnapshot(fresh)) return;
      applySnapshot(fresh);
      refreshChats();  // a restart or a gap in the feed: the counts are read again
    },
    onUnauthorized: () => showLoadFailure(new HttpError(401, null)),
    onReachability: reachabilityChanged,
  });
}

load();
