// The dashboard page: loads the snapshot, follows the feed through its own long-poll loop, and
// renders connection state, messages, storage and recoverable errors.

import { getJSON, loadSession, post } from "./api.js";
import { closeAlert, confirmCost, errorView, forgetKeys, optionButtons, showAlert } from "./errors.js";
import { startPolling } from "./poll.js";
import {
  element, hideBanner, recordHistory, renderMessages, renderStorage, replaceIfChanged, showBanner, showLinkedPane, showStatus,
  toast, updateCountdown,
} from "./view.js";

const ACCOUNTS = ["primary", "linked"];
const SHOWN_PER_ACCOUNT = 500;

const state = {
  connection: null,
  reachable: true,
  unreachableRetryAt: null,
  stateSince: Date.now(),
  accounts: { primary: null, linked: null },
  storage: null,
  errors: new Map(),
  messages: { primary: new Map(), linked: new Map() },
  hasOlder: { primary: false, linked: false },
};

let poller = null;

// MARK: Applying what the server says

function applySnapshot(snapshot) {
  setConnection(snapshot.connection);
  state.accounts = snapshot.accounts;
  state.storage = snapshot.storage;
  state.errors = new Map(snapshot.errors.map((error) => [error.id, error]));
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
        addMessages(data.account, data.messages, data.notify);
        if (data.storage) state.storage = data.storage;
        break;
      case "storage":
        state.storage = data;
        break;
      case "error.raised":
        state.errors.set(data.id, data);
        break;
      case "error.resolved":
        state.errors.delete(data.id);
        forgetKeys(data.id);
        closeAlert(data.id);
        break;
      case "account.linked":
        state.accounts.linked = { userId: data.userId, cursor: null };
        state.messages.linked = new Map();
        toast("A linked account was attached.");
        break;
      case "account.unlinked":
        state.accounts.linked = null;
        state.messages.linked = new Map();
        toast("The linked account was detached; its messages were removed.");
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
}

function addMessages(account, messages, notify) {
  const map = state.messages[account];
  const fresh = messages.filter((message) => !map.has(message.id));
  for (const message of messages) map.set(message.id, { ...message, account });
  if (!notify || fresh.length === 0) return;
  const last = fresh.at(-1);
  toast(fresh.length === 1 ? `New message from ${last.sender}` : `${fresh.length} new messages`, { detail: last.text, seconds: 5 });
  if ("Notification" in window && Notification.permission === "granted" && document.visibilityState !== "visible") {
    new Notification(`New message from ${last.sender}`, { body: last.text });
  }
}

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

const handlers = { onDone: attemptDone, confirm: confirmCost };

function attemptDone(answer) {
  if (answer.status === "recovered") toast("Done.", { seconds: 3 });
  if (answer.status === "failed" && answer.error) {
    state.errors.set(answer.error.id, answer.error);
    renderErrors();
  }
}

function errorsShownAs(presentation) {
  return [...state.errors.values()].filter((error) => error.presentation === presentation);
}

const toasted = new Set();

function renderErrors() {
  // Rebuilt only when an error changes: a view being clicked must not be swapped under the pointer.
  const views = errorsShownAs("view");
  replaceIfChanged(document.querySelector('[data-view-for="primary"]'), views.map((error) => errorView(error, handlers)));

  const alerts = errorsShownAs("alert");
  const dialog = document.querySelector("#alert");
  if (alerts.length && (!dialog.open || dialog.dataset.errorId !== alerts.at(-1).id)) {
    if (!dialog.open || dialog.dataset.errorId) showAlert(alerts.at(-1), handlers);
  } else if (!alerts.length && dialog.open && dialog.dataset.errorId) {
    dialog.close();
  }

  for (const error of errorsShownAs("toast")) {
    if (toasted.has(error.id)) continue;
    toasted.add(error.id);
    toast(error.title, { detail: error.detail, actions: optionButtons(error, handlers) });
  }

  const outOfSpace = [...state.errors.values()].find((error) => error.type === "/problems/out-of-space");
  const storageActions = outOfSpace
    ? optionButtons(outOfSpace, handlers).filter((button) => button.dataset.option !== "cancel")
    : [];
  replaceIfChanged(document.querySelector("#storage-actions"), storageActions);
  renderConnection();
}

function retryButton(action) {
  const button = element("button", { text: "Retry now", attributes: { type: "button", "data-role": "default", "data-key": "retry" } });
  button.addEventListener("click", action);
  return button;
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
  showStatus(stateName, stateName === "waiting" && connection.attempt > 1 ? `Waiting to retry (attempt ${connection.attempt})` : undefined);
  recordHistory(connection.state);

  const bannerErrors = errorsShownAs("banner");
  const first = bannerErrors[0];
  const retryNow = retryButton(() => post("/api/engine/retry-now"));
  switch (stateName) {
    case "live":
      if (first) showBanner({ text: `${first.title}. ${first.suggestion}`, actions: optionButtons(first, handlers) });
      else hideBanner();
      break;
    case "connecting":
      if (since >= 1000) showBanner({ text: "Reconnecting…", actions: [] });
      else hideBanner();
      break;
    case "waiting":
      showBanner({
        text: first ? `${first.title}. ${first.detail}` : "The connection to the chat server was interrupted.",
        countdownTo: connection.retryAt ? Date.parse(connection.retryAt) : null,
        actions: [retryNow],
      });
      break;
    case "offline":
      showBanner({ text: "Offline: syncing resumes when the network is back.", tone: "bad", actions: [retryNow] });
      break;
    case "paused": {
      const outOfSpace = [...state.errors.values()].find((error) => error.type === "/problems/out-of-space");
      showBanner({
        text: "Syncing is paused: storage is full. Nothing is lost; new messages wait on the server.",
        tone: "bad",
        actions: outOfSpace ? optionButtons(outOfSpace, handlers).filter((button) => button.dataset.option !== "cancel") : [],
      });
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

// MARK: Controls

async function loadOlder(account) {
  const ids = [...state.messages[account].keys()];
  const before = ids.length ? Math.min(...ids) : undefined;
  const query = new URLSearchParams({ account, limit: "50" });
  if (before !== undefined) query.set("before", String(before));
  const page = await getJSON(`/api/messages?${query}`);
  for (const message of page.messages) state.messages[account].set(message.id, message);
  state.hasOlder[account] = page.nextBefore != null;
  renderAll();
}

function wireControls() {
  for (const account of ACCOUNTS) {
    document.querySelector(`[data-older-for="${account}"]`).addEventListener("click", () => loadOlder(account));
  }
  document.querySelector("#engine-start").addEventListener("click", () => post("/api/engine/start"));
  document.querySelector("#engine-stop").addEventListener("click", () => post("/api/engine/stop"));
  const notifications = document.querySelector("#notifications");
  if (!("Notification" in window)) notifications.hidden = true;
  notifications.addEventListener("click", async () => {
    const permission = await Notification.requestPermission();
    notifications.textContent = permission === "granted" ? "Notifications on" : "Notifications blocked";
    notifications.disabled = permission === "granted";
  });
  setInterval(() => { updateCountdown(); renderConnection(); }, 1000);
}

async function wireSimulator() {
  try {
    await getJSON("/api/simulator/stats");
  } catch {
    return; // not built in: syncing with --upstream
  }
  const panel = document.querySelector("#simulator");
  panel.hidden = false;
  const send = (action, body) => post(`/api/simulator/${action}`, body).then(({ status, body: answer }) => {
    if (status !== 200) toast("The simulator refused that.", { detail: answer?.error ?? `HTTP ${status}` });
  });
  const value = (selector) => document.querySelector(selector).value;
  document.querySelector("#sim-publish").addEventListener("submit", (event) => {
    event.preventDefault();
    send("messages", { account: value("#sim-account"), count: Number(value("#sim-count")) });
  });
  document.querySelector("#sim-auto").addEventListener("submit", (event) => {
    event.preventDefault();
    send("auto", { perSecond: Number(value("#sim-rate")) });
  });
  document.querySelector("#sim-faults").addEventListener("submit", (event) => {
    event.preventDefault();
    send("faults", { mode: value("#sim-fault"), rate: Number(value("#sim-fault-rate")) });
  });
  document.querySelector("#sim-link").addEventListener("click", () => send("linked", { linked: true }));
  document.querySelector("#sim-unlink").addEventListener("click", () => send("linked", { linked: false }));
  document.querySelector("#sim-expire").addEventListener("click", () => send("expire-token", {}));
  document.querySelector("#sim-fill").addEventListener("click", async () => {
    // The upstream announces a quota just above what is used; a few more messages then do not fit.
    await send("quota", { bytes: (state.storage?.usedBytes ?? 0) + 1500 });
    await send("messages", { account: "primary", count: 40 });
  });
}

// MARK: Start

async function main() {
  let session;
  try {
    session = await loadSession();
  } catch {
    state.reachable = false;
    renderConnection();
    setTimeout(() => location.reload(), 5000);
    return;
  }
  document.querySelector("#server-info").textContent = `Dashboard process ${session.epoch} on ${location.host}`;
  const snapshot = await getJSON("/api/state");
  applySnapshot(snapshot);
  wireControls();
  wireSimulator();
  poller = startPolling({
    epoch: snapshot.epoch,
    since: snapshot.seq,
    onEvents: applyEvents,
    onReset: applySnapshot,
    onReachability: (reachable, retryAt) => {
      const changed = state.reachable !== reachable;
      state.reachable = reachable;
      state.unreachableRetryAt = retryAt;
      if (changed || !reachable) renderConnection();
    },
  });
}

main();
