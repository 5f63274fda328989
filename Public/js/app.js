// The dashboard page: loads the snapshot (a view with Try again when that fails), follows the
// feed through its own long-poll loop, and renders it all from one state (pagestate.js) and one
// status derived from it (status.js): every banner, label, title and announcement reads that one
// value, so no two parts of the page say different things about the same state. This module only
// wires: what is decided is decided in the pure modules, what is drawn is drawn by the DOM ones.

import { getJSON, HttpError, loadSession, post, reasonFor, UnreadableAnswer } from "./api.js";
import {
  chatChanged, chatMarkedRead, chatMessageChanged, chatRemoved, chatsChanged, chatsHeard, historyArrived, offerLinked, onUnreadChanged, outboxChanged,
  refreshChats, renderHistoryProgress, renderOutbox, setOutbox, wireChats, wireOutbox,
} from "./chats.js";
import { formatWhen } from "./dates.js";
import { $, element, oncePerFrame, refreshTimes, setReplyLookup } from "./dom.js";
import { announce, attemptRunningHere, noteAttemptEvent, resetRemoteAttempts, setOff, setProcessReachable } from "./errors.js";
import { sessionAndSnapshot } from "./firstload.js";
import { focusFirst, restoreFocus, watchFocus } from "./focus.js";
import { focusAfter } from "./focusrules.js";
import { attemptEnded, problemRaised, resetProblems } from "./history.js";
import { awayNotice, messageNotice, newsIn, quoteOf } from "./notices.js";
import { initialState, reduce } from "./pagestate.js";
import { ACCOUNTS, lists, makePanes, newestInView, olderHistoryArrived, onPaneChange, renderPane, takeSnapshotMessages } from "./panes.js";
import { startPolling } from "./poll.js";
import { withProgress } from "./progress.js";
import { searchResultChanged, wireSearch } from "./search.js";
import { renderSimulator, renderWritten, wireSimulator } from "./simpanel.js";
import { pageStatus } from "./status.js";
import { recordHistory, renderStatus, updateCountdown } from "./statusbar.js";
import {
  errorHandlers, errorRaised, errorResolved, outOfSpace, processDidNotAnswer, renderErrors, sendState, statusParts, tellStorageNews, wireSurfaces,
} from "./surfaces.js";
import { decideNotice, forgetAnnounced, keepForLater, startTabs, takeKept } from "./tabs.js";
import { messagesToast, quotedMessageChanged, toast } from "./toasts.js";
import { renderStorage, showLinkedPane } from "./view.js";
import { PROBLEM } from "./vocabulary.js";

let state = initialState();
/** Whether the built-in simulator (and its panel) is there. */
let simulatorShown = false;
let poller = null;
let unread = 0;
/** Messages this tab told of with system notifications since it was last seen (their count). */
let notified = 0;

function dispatch(action) {
  state = reduce(state, { now: Date.now(), ...action });
}

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
  dispatch({ type: "snapshot", snapshot, first });
  // After a reset, an alert this page had not seen is placed as an event's would be (errorRaised).
  if (!first) for (const error of snapshot.errors) if (error.presentation === "alert" && !state.placements[error.id]) errorRaised(error);
  resetRemoteAttempts(snapshot.errors);
  resetProblems(snapshot.recentProblems);
  takeSnapshotMessages(snapshot, before, { first });
  renderHistoryProgress(snapshot.history);
  setOutbox(snapshot.outbox, snapshot.canSend);
  renderAll();
}

function applyEvents(events) {
  for (const event of events) {
    const { type, data } = event;
    const wasShowing = type === "error.resolved" && $("#alert").open && $("#alert").dataset.errorId === data.id;
    const closing = type === "error.resolved" ? state.errors.find((error) => error.id === data.id) : undefined;
    if (type === "error.raised") errorRaised(data);
    dispatch({ type: "events", events: [event] });
    switch (type) {
      case "messages":
        addMessages(data.account, data.messages, data.notify, data.caughtUp === true);
        chatsHeard(data.account, data.messages, data.chats);
        break;
      case "chat.read":
        chatMarkedRead(data.account, data.chatId, data.unread ?? 0);
        break;
      case "chat.changed":
        chatChanged(data.account, data.chat);
        break;
      case "chat.removed":
        lists[data.account]?.remove(data.ids ?? []);
        chatRemoved(data.account, data.chatId);
        break;
      case "messages.removed":
        for (const account of ACCOUNTS) lists[account].remove(data[account] ?? []);
        chatsChanged({ removed: data });
        break;
      case "message.changed":
        lists[data.account]?.change(data.message);
        chatMessageChanged(data.account, data.message);
        searchResultChanged(data.account, data.message.id);
        quotedMessageChanged(`${data.account}/${data.message.id}`, quoteOf(data.message));
        break;
      case "message.removed":
        lists[data.account]?.remove([data.id]);
        chatsChanged({ removed: { [data.account]: [data.id] } });
        searchResultChanged(data.account, data.id, { removed: true });
        quotedMessageChanged(`${data.account}/${data.id}`, null);
        break;
      case "error.raised":
        problemRaised(data);
        break;
      case "error.resolved":
        errorResolved(data, closing, wasShowing);
        break;
      case "attempt":
        noteAttemptEvent(data);
        if (data.status !== "running") attemptEnded(data);
        // What a purchase or Free space did is told in every window, not only where it was clicked.
        if (data.status === "recovered" && data.summary) tellStorageNews(data.type, data.summary);
        break;
      case "account.linked":
        lists.linked.reset([], { hasOlder: false });
        if (!data.firstSync) toast("A linked account was attached.");
        break;
      case "account.unlinked":
        lists.linked.reset([], { hasOlder: false });
        chatsChanged({ accountGone: "linked" });
        toast("The linked account was detached; its messages were removed.");
        break;
      case "account.changed":
        for (const account of ACCOUNTS) lists[account].reset([], { hasOlder: false });
        chatsChanged({ accountGone: "primary" });
        chatsChanged({ accountGone: "linked" });
        toast("The chat server signed in another person.", {
          detail: `The ${data.removedMessages} stored messages of the previous account were removed from this computer, so the two are not mixed.`,
          seconds: 20,
        });
        break;
      case "account.resynced":
        // What the pane shows was set aside: it fills again with the server's messages, and the
        // ones that come next are news whatever their ids (the server numbers from 1 again).
        lists[data.account]?.reset([], { hasOlder: false });
        forgetAnnounced(data.account);
        delete document.querySelector(`[data-messages-for="${data.account}"]`)?.dataset.noticed;
        chatsChanged({ accountGone: data.account });
        toast(`${accountName(data.account)}: the server's messages are shown now.`, {
          detail: `The ${data.setAside} messages stored before are set aside on this computer, still counted in its storage.`,
          seconds: 12,
        });
        break;
      case "simulator":
        renderSimulator(data);
        break;
      case "outbox":
        outboxChanged(data);
        if (data.state === "sent") loadWritten();
        break;
      case "history":
        renderHistoryProgress(data);
        historyArrived(data.account, data.chatId);
        if (data.chatId != null) olderHistoryArrived(data.account);
        break;
      default:
        break;
    }
  }
  // New messages alone: their rows are in place already, the rest follows in the frame. Any
  // other news is drawn whole at once, so no part of the page is left saying the state before it.
  if (events.every((event) => event.type === "messages")) renderSoon(); else renderAll();
}

/** Adds messages to their pane; those that notify are told once across all the dashboard's
 *  tabs (tabs.js): in a visible tab a notice unless they are in view already (notices.js), else
 *  one tab's system notification, else a summary for whichever tab the person sees next. */
function addMessages(account, messages, notify, caughtUp) {
  const fresh = newsIn(messages, (id) => lists[account].has(id));
  // Whether the person was looking at the newest when these came: once they are laid out, the
  // view stays where it was for a frame before it moves up to them.
  const inView = newestInView(account);
  lists[account].add(messages.map((message) => ({ ...message, account })));
  if (!notify || fresh.length === 0) return;
  decideNotice(account, fresh.map((message) => message.id)).then((decision) => {
    tell(account, fresh, decision, caughtUp, inView);
    // The highest id whose notice this tab has decided: what a reader (or a test) awaits.
    const pane = document.querySelector(`[data-messages-for="${account}"]`);
    if (pane) pane.dataset.noticed = String(Math.max(Number(pane.dataset.noticed ?? 0), ...fresh.map((message) => message.id)));
  });
}

/** Tells the person of `fresh` messages as `decision` (tabs.js `decideNotice`) says. */
function tell(account, fresh, { action, fresh: untold }, caughtUp, inView) {
  const told = fresh.filter((message) => untold.includes(message.id));
  const last = told.at(-1);
  if (action === "toast") {
    const notice = messageNotice({ count: told.length, last, caughtUp, inView });
    if (notice.kind !== "none") {
      const node = messagesToast(notice, told.length, notice.kind === "summary" ? interruptions : "");
      if (notice.quote && last) node.dataset.quoted = `${account}/${last.id}`;
    }
  } else if (action === "notify") {
    if ("Notification" in window && Notification.permission === "granted") {
      notified += told.length;
      new Notification(notified === 1 ? `New message from ${last.sender}` : `${notified} new messages`, { body: last.text, tag: "lp-messages" });
    } else {
      // The tab may have been shown while this was decided: then the person is here to be told.
      keepForLater(told.length, last).then(() => {
        if (document.visibilityState === "visible") tellKept();
      });
    }
  }
}

/** Shows what was kept for later (tabs.js `takeKept`, taken once across tabs) as an away toast. */
function tellKept() {
  takeKept().then((kept) => {
    if (kept) messagesToast(awayNotice(kept), kept.count, awayReturns);
  });
}

document.addEventListener("visibilitychange", () => {
  const visible = document.visibilityState === "visible";
  dispatch({ type: "visibility", visible });
  if (!visible) return;
  notified = 0;
  awayReturns += 1;
  tellKept();
});

// MARK: Rendering

function accountName(account) {
  return account === "primary" ? "Primary account" : "Linked account";
}

// Each interruption's catch-up and each return to the tab is told on its own.
let interruptions = 0;
let wasLive = false;
let awayReturns = 0;

/** The page as the feed changed it, drawn in the next frame (dom.js `oncePerFrame`). */
const renderSoon = oncePerFrame(() => renderAll());

function renderAll() {
  const status = pageStatus(state, Date.now());
  const live = status.label === "Live";
  if (wasLive && !live) interruptions += 1;
  wasLive = live;
  const parts = statusParts(status);
  renderStatus(parts.status, { ...parts, unread });
  recordHistory(status);
  const heardAt = formatWhen(state.lastHeardAt);
  for (const account of ACCOUNTS) renderPane(account, { name: accountName(account), stale: status.stale, heardAt });
  showLinkedPane(state.accounts.linked != null);
  offerLinked(state.accounts.linked != null);
  renderStorage(state.storage, outOfSpace(state));
  renderErrors(state);
  renderOutbox();
  restoreFocus(() => attemptRunningHere());
}

// MARK: Talking to the process

function reachabilityChanged(reachable, retryAt) {
  const changed = (state.reachable && !state.accessRefused) !== reachable;
  dispatch({ type: "reachability", reachable, retryAt });
  if (!changed) {
    if (!reachable) renderAll();
    return;
  }
  setProcessReachable(reachable);
  if (reachable) {
    announce("Reconnected to the dashboard process.");
    toast("Reconnected.", { detail: "The dashboard process answers again; the page is up to date.", seconds: 5, key: "reconnected" });
    $('.toast[data-key="no-answer"]')?.remove();
  }
  renderAll();
}

/** The process answers, but not to this page's token: it restarted with a new one. The page
 *  keeps its messages and goes on asking; it is back as soon as the new address is opened (in
 *  this window or another: they share the cookie). */
function accessRefused() {
  if (!state.accessRefused) {
    dispatch({ type: "access-refused" });
    setProcessReachable(false);
    renderAll();
  }
}

/** Try again while the access is refused: is it back (another window opened the new address)? */
async function recheckAccess() {
  try {
    await loadSession();
    await poller?.retryNow();
  } catch {
    // Still refused: the status says so, with the same words.
  }
}

// MARK: Controls

function wireControls() {
  const toggle = $("#engine-toggle");
  toggle.addEventListener("click", async () => {
    if (toggle.dataset.busy === "true") return;
    toggle.dataset.busy = "true";
    setOff(toggle, true);
    const starting = state.connection?.state === "stopped";
    await withProgress(toggle, () => sendState(starting ? "/api/engine/start" : "/api/engine/stop"));
    delete toggle.dataset.busy;
    setOff(toggle, !state.reachable);
    // The toggle now says the opposite: the status it changed takes the focus (focusrules.js).
    focusFirst(focusAfter(starting ? "start" : "stop"));
  });
  wireNotifications();
  watchFocus(() => attemptRunningHere());
  $("#confirm").addEventListener("close", () => renderErrors(state));
  setInterval(() => {
    updateCountdown();
    renderAll();
  }, 1000);
  setInterval(() => refreshTimes(), 30_000);
}

function wireNotifications() {
  const button = $("#notifications");
  const note = $("#notifications-note");
  if (!("Notification" in window)) {
    button.hidden = true;
    note.hidden = false;
    note.textContent = "This browser cannot show notifications.";
    return;
  }
  const render = (permission) => {
    button.hidden = permission !== "default";
    note.hidden = permission === "default";
    note.textContent = permission === "granted"
      ? "Notifications are on: new messages show one while no window of the dashboard is in view."
      : "Notifications are blocked for this page. To allow them, click the icon at the left of the address bar, "
        + "set Notifications to Allow, then reload the page.";
  };
  button.addEventListener("click", async () => {
    render(await Notification.requestPermission());
    note.tabIndex = -1;
    note.focus();
  });
  // Asked without holding the page up: reading Notification.permission waits for the browser
  // (6 ms of a cold page here), the Permissions API answers later and tells of changes too.
  if (!navigator.permissions) {
    render(Notification.permission);
    return;
  }
  navigator.permissions.query({ name: "notifications" }).then((status) => {
    const tell = () => render(status.state === "prompt" ? "default" : status.state);
    tell();
    status.addEventListener("change", tell);
  }, () => render(Notification.permission));
}

async function sendToSimulator(action, body) {
  let answer;
  try {
    answer = await post(`/api/simulator/${action}`, body);
  } catch {
    processDidNotAnswer();
    return false;
  }
  if (answer.status !== 200) {
    toast("The simulator refused that.", { detail: answer.body?.detail ?? `HTTP ${answer.status}` });
    return false;
  }
  if (action === "faults") toast("Applied: the chat server's next answer meets it.", { seconds: 4, key: "simulator" });
  return true;
}

async function loadSimulatorState() {
  try {
    renderSimulator(await getJSON("/api/simulator/stats"));
  } catch {
    // The panel says what it last heard; the feed's `simulator` events keep it true.
  }
  await loadWritten();
}

/** What the accounts wrote, as the simulator received it: read again whenever a message was sent. */
async function loadWritten() {
  if (!simulatorShown) return;
  try {
    renderWritten((await getJSON("/api/simulator/written")).messages);
  } catch {
    // The list stays as it was; the next message sent reads it again.
  }
}

// MARK: First load

let loadFailures = 0;

/** The first load: session and snapshot. When either fails or answers something unreadable, the
 *  main area is a view that says so, with Try again (seed 000: an error on first entry is a view). */
async function load() {
  const view = $("#load-view");
  const retry = view.querySelector("button");
  const fetchAll = async () => {
    const { session, snapshot } = await sessionAndSnapshot();
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
  const retry = element("button", { text: "Try again", attributes: { type: "button", "data-role": "default", "data-key": "load-retry" } });
  retry.addEventListener("click", load);
  const note = loadFailures > 1 ? `Still not loaded (tried ${formatWhen(Date.now())}).` : "";
  const locked = failure instanceof HttpError && failure.status === 401;
  view.replaceChildren(
    element("h2", { text: locked ? "Open the dashboard's own address" : "The dashboard could not be loaded" }),
    element("p", { text: reasonFor(failure) }),
    element("p", { className: "muted", text: locked
      ? "In the terminal where it runs, find the line \"dashboard listening on http://…/?token=…\" and open that address."
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
  startTabs(session.epoch);
  if (!wired) {
    makePanes({ isReachable: () => state.reachable });
    onPaneChange((account) => renderPane(account, { name: accountName(account), stale: pageStatus(state).stale, heardAt: formatWhen(state.lastHeardAt) }));
    onUnreadChanged((count) => { unread = count; renderSoon(); });
    wireSurfaces({ getState: () => state, dispatch, render: renderAll, retryProcess: () => poller?.retryNow(), recheckAccess });
    wireOutbox({
      errorFor: (outboxId) => state.errors.find((error) => error.type === PROBLEM.sendFailed && error.outboxId === outboxId) ?? null,
      handlers: errorHandlers,
    });
  }
  applySnapshot(snapshot, { first: !wired });
  if (!wired) {
    wired = true;
    wireControls();
    setReplyLookup((account, id) => lists[account]?.find(id));
    wireChats();
    wireSearch();
    if (session.simulator) {
      simulatorShown = true;
      wireSimulator(sendToSimulator);
      loadSimulatorState();
    }
  }
  poller?.stop();
  poller = startPolling({
    epoch: snapshot.epoch,
    since: snapshot.seq,
    onEvents: applyEvents,
    onReset: async (fresh) => {
      if (!isSnapshot(fresh)) return;
      const restarted = fresh.epoch !== state.epoch;
      if (restarted) {
        // A new process: its CSRF token is new too, and the page says once what happened.
        await loadSession().catch(() => {});
        toast("Reconnected: the dashboard restarted, and the page is up to date.", { seconds: 6, key: "reconnected" });
      }
      applySnapshot(fresh);
      refreshChats();  // a restart or a gap in the feed: the counts are read again
      if (session.simulator) loadSimulatorState();
    },
    onUnauthorized: accessRefused,
    onReachability: reachabilityChanged,
  });
}

load();
