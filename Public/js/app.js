// The dashboard page: loads the snapshot (a view with Try again when that fails), follows the
// feed through its own long-poll loop, and renders connection state, messages, storage,
// recoverable errors and the recent problems.

import { getJSON, HttpError, loadSession, post, UnreadableAnswer } from "./api.js";
import {
  alertShowing, announce, closeAlert, detailsDisclosure, failureText, forgetAttempts, noteAttemptEvent, optionButtons, refreshButtons,
  renderErrorView, resetRemoteAttempts, showAlert, signatureOf,
} from "./errors.js";
import { attemptEnded, problemRaised, problemResolved, resetProblems } from "./history.js";
import { startPolling } from "./poll.js";
import { messagesToast, toast } from "./toasts.js";
import {
  element, hideBanner, recordHistory, renderMessages, renderStorage, replaceIfChanged, showAge, showBanner, showLinkedPane, showStatus,
  updateCountdown,
} from "./view.js";

const ACCOUNTS = ["primary", "linked"];
const SHOWN_PER_ACCOUNT = 500;
const $ = (selector) => document.querySelector(selector);

const state = {
  connection: null,
  reachable: true,
  unreachableRetryAt: null,
  stateSince: Date.now(),
  accounts: { primary: null, linked: null },
  storage: null,
  errors: new Map(),
  /** Ids the feed said were resolved: a late attempt answer must not bring them back. */
  resolved: new Set(),
  messages: { primary: new Map(), linked: new Map() },
  hasOlder: { primary: false, linked: false },
  /** Notifying messages that arrived while this tab was hidden, summed up when it is shown. */
  away: { count: 0, last: null },
  /** When this page last saw the engine get an answer (a messages event is one too). */
  lastAnswerAt: 0,
};

/** How long the upstream holds a poll (the connection says; this is the default): a live
 *  connection hears from it at least this often. */
const HOLD_SECONDS = 25;

let poller = null;

// MARK: Applying what the server says

function isSnapshot(snapshot) {
  return typeof snapshot?.epoch === "string" && Number.isInteger(snapshot.seq) && typeof snapshot.connection?.state === "string"
    && Array.isArray(snapshot.errors) && typeof snapshot.messages === "object" && snapshot.messages !== null
    && typeof snapshot.accounts === "object" && snapshot.accounts !== null;
}

function applySnapshot(snapshot) {
  setConnection(snapshot.connection);
  state.accounts = snapshot.accounts;
  state.storage = snapshot.storage;
  state.errors = new Map(snapshot.errors.map((error) => [error.id, error]));
  resetRemoteAttempts(snapshot.errors);
  resetProblems(snapshot.recentProblems);
  for (const account of ACCOUNTS) {
    const list = snapshot.messages[account] ?? [];
    state.messages[account] = new Map(list.map((message) => [message.id, message]));
    state.hasOlder[account] = list.length >= 50;
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
        if (data.storage) state.storage = data.storage;
        break;
      case "storage":
        state.storage = data;
        break;
      case "messages.removed":
        for (const account of ACCOUNTS) for (const id of data[account] ?? []) state.messages[account].delete(id);
        state.storage = data.storage;
        break;
      case "error.raised": {
        const before = state.errors.get(data.id);
        state.errors.set(data.id, data);
        problemRaised(data);
        if (data.lastAttempt && data.lastAttempt.at !== before?.lastAttempt?.at) announce(failureText(data));
        break;
      }
      case "error.resolved":
        state.errors.delete(data.id);
        state.resolved.add(data.id);
        forgetAttempts(data.id);
        closeAlert(data.id);
        problemResolved(data.id);
        break;
      case "attempt":
        noteAttemptEvent(data);
        if (data.status !== "running") attemptEnded(data);
        break;
      case "account.linked":
        state.accounts.linked = { userId: data.userId, cursor: null };
        state.messages.linked = new Map();
        if (!data.firstSync) toast("A linked account was attached.");
        break;
      case "account.unlinked":
        state.accounts.linked = null;
        state.messages.linked = new Map();
        toast("The linked account was detached; its messages were removed.");
        break;
      case "account.changed":
        state.accounts = { primary: { userId: data.userId, cursor: null }, linked: null };
        for (const account of ACCOUNTS) state.messages[account] = new Map();
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

function setConnection(connection) {
  if (state.connection?.state !== connection.state) state.stateSince = Date.now();
  state.connection = connection;
  const success = Date.parse(connection.lastSuccessAt ?? "");
  if (!Number.isNaN(success)) state.lastAnswerAt = Math.max(state.lastAnswerAt, success);
}

function addMessages(account, messages, notify, caughtUp) {
  const map = state.messages[account];
  const fresh = messages.filter((message) => !map.has(message.id));
  for (const message of messages) map.set(message.id, { ...message, account });
  if (!notify || fresh.length === 0) return;
  const last = fresh.at(-1);
  if (document.visibilityState !== "visible") {
    // Nobody sees toasts in a hidden tab: sum them up for when it is shown again.
    state.away.count += fresh.length;
    state.away.last = last;
    if ("Notification" in window && Notification.permission === "granted") {
      const count = state.away.count;
      new Notification(count === 1 ? `New message from ${last.sender}` : `${count} new messages`, { body: last.text, tag: "lp-messages" });
    }
    return;
  }
  messagesToast(fresh.length, last, { away: caughtUp });
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState !== "visible" || state.away.count === 0) return;
  messagesToast(state.away.count, state.away.last, { away: true });
  state.away = { count: 0, last: null };
});

// MARK: Rendering

function renderAll() {
  renderConnection();
  for (const account of ACCOUNTS) {
    const sorted = [...state.messages[account].values()].sort((a, b) => b.id - a.id).slice(0, SHOWN_PER_ACCOUNT);
    renderMessages(account, sorted, { hasOlder: state.hasOlder[account] });
  }
  showLinkedPane(state.accounts.linked != null);
  renderStorage(state.storage);
  renderErrors();
}

const handlers = { onDone: attemptDone };

function attemptDone(error, option, answer) {
  switch (answer.status) {
    case "recovered":
      // The error leaving the page shows it; a toast would only cover something.
      announce(option.role === "cancel" ? `${error.title}: dismissed.` : `${option.title} worked.`);
      break;
    case "failed":
      if (answer.error && !state.resolved.has(answer.error.id)) state.errors.set(answer.error.id, answer.error);
      if (option.role !== "cancel" && answer.error?.lastAttempt) announce(failureText(answer.error));
      break;
    case "gone":
      toast("That problem was already resolved.", { seconds: 4 });
      break;
    case "busy":
      toast("Another attempt on this problem is still running.", { detail: "Its outcome shows here when it ends.", seconds: 5 });
      break;
    case "unreachable":
      toast("The dashboard process did not answer.", { detail: "Nothing was changed. Try again in a moment." });
      break;
    default:
      toast("The dashboard refused that.", { detail: answer.problem?.detail ?? "" });
  }
  renderAll();
  keepFocusInThePage();
}

/** After an action removed the control that had the focus, the focus goes to the region that
 *  changed instead of being lost to the page body. */
function keepFocusInThePage() {
  if (document.activeElement && document.activeElement !== document.body && document.activeElement.isConnected) return;
  const target = $("#banner").hidden ? $("#pane-primary-title") : $("#banner-actions button") ?? $("#banner-text");
  target.focus();
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

  const alerts = errorsShownAs("alert");
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

  const outOfSpace = outOfSpaceError();
  replaceIfChanged($("#storage-actions"), outOfSpace ? optionButtons(outOfSpace, handlers, { except: ["cancel"] }) : [],
    outOfSpace ? `storage/${signatureOf(outOfSpace)}` : "");
  renderConnection();
  refreshButtons();
}

function retryButton(action) {
  const button = element("button", { text: "Retry now", attributes: { type: "button", "data-role": "default", "data-key": "retry" } });
  button.addEventListener("click", action);
  return button;
}

/** The error the banner is about: the latest connection problem (out of space has its own place). */
function connectionError() {
  return errorsShownAs("banner").filter((error) => error.type !== "/problems/out-of-space").at(-1);
}

function bannerForError(error, { text, tone = "warn", countdownTo = null, except = [] }) {
  showBanner({
    text,
    tone,
    countdownTo,
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
      text: "The dashboard process does not answer. Is it still running?",
      tone: "bad",
      countdownTo: state.unreachableRetryAt,
      actions: [retryButton(() => poller?.retryNow())],
    });
    return;
  }
  const connection = state.connection;
  if (!connection) return;
  const since = Date.now() - state.stateSince;
  let stateName = connection.state;
  if (stateName === "offline" && since < 15_000) stateName = "connecting";
  // Live, but no answer for longer than a poll is held: the upstream is slow or stalled.
  const quietSeconds = Math.floor((Date.now() - state.lastAnswerAt) / 1000);
  const hold = connection.holdSeconds ?? HOLD_SECONDS;
  const quiet = stateName === "live" && state.lastAnswerAt > 0 && quietSeconds > hold + 2;
  if (quiet) showStatus("slow", "Live, but the chat server is slow");
  else showStatus(stateName, stateName === "waiting" && connection.attempt > 1 ? `Waiting to retry (attempt ${connection.attempt})` : undefined);
  showAge(quiet ? `Updated ${quietSeconds} s ago` : "");
  recordHistory(connection.state);

  const trouble = connectionError();
  const outOfSpace = outOfSpaceError();
  switch (stateName) {
    case "live":
      if (trouble) bannerForError(trouble, { text: `${trouble.title}. ${trouble.suggestion}` });
      else hideBanner();
      break;
    case "connecting":
      if (trouble) bannerForError(trouble, { text: `${trouble.title}. Trying again now…` });
      else if (since >= 1000) showBanner({ text: "Reconnecting…", actions: [] });
      else hideBanner();
      break;
    case "waiting": {
      const retryAt = connection.retryAt ? Date.parse(connection.retryAt) : null;
      if (trouble) bannerForError(trouble, { text: `${trouble.title}. ${trouble.detail}`, countdownTo: retryAt });
      else showBanner({ text: "The connection to the chat server was interrupted.", countdownTo: retryAt, actions: [retryButton(() => post("/api/engine/retry-now"))] });
      break;
    }
    case "offline":
      showBanner({ text: "Offline: syncing resumes when the network is back.", tone: "bad", actions: [retryButton(() => post("/api/engine/retry-now"))] });
      break;
    case "paused": {
      const behind = [...state.errors.values()].find((error) => error.type === "/problems/upstream-behind");
      if (outOfSpace) {
        bannerForError(outOfSpace, {
          text: "Syncing is paused: storage is full. Nothing is lost; new messages wait on the server.",
          tone: "bad",
          except: ["cancel"],
        });
      } else if (behind) {
        bannerForError(behind, { text: `Syncing is paused: ${behind.title.toLowerCase()}.`, tone: "bad", except: ["cancel"] });
      } else {
        showBanner({ text: "Syncing is paused.", tone: "bad", actions: [] });
      }
      break;
    }
    case "stopped": {
      const start = element("button", { text: "Start syncing", attributes: { type: "button", "data-role": "default", "data-key": "start" } });
      start.addEventListener("click", () => post("/api/engine/start"));
      showBanner({ text: "Syncing is stopped.", actions: [start] });
      break;
    }
    default:
      hideBanner();
  }
}

// MARK: Scroll-back

async function loadOlder(account) {
  const place = $(`[data-older-error-for="${account}"]`);
  const button = $(`[data-older-for="${account}"]`);
  const ids = [...state.messages[account].keys()];
  const query = new URLSearchParams({ account, limit: "50" });
  if (ids.length) query.set("before", String(Math.min(...ids)));
  button.disabled = true;
  try {
    const page = await getJSON(`/api/messages?${query}`);
    if (!Array.isArray(page.messages)) throw new UnreadableAnswer("/api/messages");
    for (const message of page.messages) state.messages[account].set(message.id, message);
    state.hasOlder[account] = page.nextBefore != null;
    place.replaceChildren();
  } catch (failure) {
    const retry = element("button", { text: "Try again", attributes: { type: "button", "data-role": "default" } });
    retry.addEventListener("click", () => loadOlder(account));
    place.replaceChildren(element("div", { className: "error-view", attributes: { role: "alert" } }, [
      element("h3", { text: "Older messages could not be loaded" }),
      element("p", { text: reasonFor(failure) }),
      element("p", { className: "muted", text: `Tried at ${new Date().toLocaleTimeString()}.` }),
      element("div", { className: "actions" }, [retry]),
    ]));
    retry.focus();
  } finally {
    button.disabled = false;
  }
  renderAll();
}

/** Why a request of the page failed, in words. */
function reasonFor(failure) {
  if (failure instanceof HttpError && failure.status === 401) {
    return "This page has no access to the dashboard: it needs the address the dashboard printed when it started.";
  }
  if (failure instanceof HttpError) {
    return `The dashboard answered ${failure.status}${failure.body?.detail ? `: ${failure.body.detail}` : "."}`;
  }
  if (failure instanceof UnreadableAnswer) return "The dashboard's answer could not be read.";
  return "The dashboard process does not answer. Is it still running?";
}

// MARK: Controls

function wireControls() {
  for (const account of ACCOUNTS) {
    $(`[data-older-for="${account}"]`).addEventListener("click", () => loadOlder(account));
  }
  $("#engine-start").addEventListener("click", () => post("/api/engine/start"));
  $("#engine-stop").addEventListener("click", () => post("/api/engine/stop"));
  const notifications = $("#notifications");
  if (!("Notification" in window)) notifications.hidden = true;
  notifications.addEventListener("click", async () => {
    const permission = await Notification.requestPermission();
    notifications.textContent = permission === "granted" ? "Notifications on" : "Notifications blocked";
    notifications.disabled = permission === "granted";
  });
  $("#confirm").addEventListener("close", () => renderErrors());
  setInterval(() => { updateCountdown(); renderConnection(); }, 1000);
}

function wireSimulator() {
  $("#simulator").hidden = false;
  const send = (action, body) => post(`/api/simulator/${action}`, body).then(({ status, body: answer }) => {
    if (status !== 200) toast("The simulator refused that.", { detail: answer?.detail ?? answer?.error ?? `HTTP ${status}` });
  });
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
  $("#sim-fill").addEventListener("click", async () => {
    // The upstream announces a quota just above what is used; a few more messages then do not fit.
    await send("quota", { bytes: (state.storage?.usedBytes ?? 0) + 1500 });
    await send("messages", { account: "primary", count: 40 });
  });
}

// MARK: First load

let loadFailures = 0;

/** The first load: session and snapshot. When either fails or answers something unreadable, the
 *  main area is a view that says so, with Try again (seed 000: an error on first entry is a view). */
async function load() {
  const view = $("#load-view");
  const retry = view.querySelector("button");
  let spinnerShownAt = 0;
  const spinner = retry && setTimeout(() => {
    spinnerShownAt = Date.now();
    retry.prepend(element("span", { className: "spinner", attributes: { "aria-hidden": "true" } }));
    retry.setAttribute("aria-busy", "true");
  }, 300);
  if (retry) retry.disabled = true;
  let session;
  let snapshot;
  let failure = null;
  try {
    session = await loadSession();
    snapshot = await getJSON("/api/state");
    if (!isSnapshot(snapshot)) throw new UnreadableAnswer("/api/state");
  } catch (caught) {
    failure = caught;
  }
  if (retry) {
    clearTimeout(spinner);
    if (spinnerShownAt) await new Promise((resolve) => setTimeout(resolve, Math.max(0, 300 - (Date.now() - spinnerShownAt))));
  }
  if (failure) {
    showLoadFailure(failure);
    return;
  }
  view.hidden = true;
  view.replaceChildren();
  document.body.classList.remove("load-failed");
  start(session, snapshot);
}

function showLoadFailure(failure) {
  loadFailures += 1;
  const view = $("#load-view");
  document.body.classList.add("load-failed");
  showStatus("unreachable", "The dashboard could not be loaded");
  const retry = element("button", { text: "Try again", attributes: { type: "button", "data-role": "default" } });
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
  applySnapshot(snapshot);
  if (!wired) {
    wired = true;
    wireControls();
    if (session.simulator) wireSimulator();
  }
  poller?.stop();
  poller = startPolling({
    epoch: snapshot.epoch,
    since: snapshot.seq,
    onEvents: applyEvents,
    onReset: (fresh) => { if (isSnapshot(fresh)) applySnapshot(fresh); },
    onUnauthorized: () => showLoadFailure(new HttpError(401, null)),
    onReachability: (reachable, retryAt) => {
      const changed = state.reachable !== reachable;
      state.reachable = reachable;
      state.unreachableRetryAt = retryAt;
      if (changed || !reachable) renderConnection();
    },
  });
}

load();

