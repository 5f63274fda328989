// Rendering. Upstream text is untrusted: it only ever goes in through textContent.

const $ = (selector) => document.querySelector(selector);

export function element(tag, { text, className, attributes } = {}, children = []) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attributes ?? {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

// Connection status and banner

const STATUS_TEXT = {
  live: "Live",
  connecting: "Connecting…",
  waiting: "Waiting to retry",
  offline: "Offline",
  paused: "Syncing is paused",
  slow: "Live, but the chat server is slow",
  stopped: "Syncing is stopped",
  unreachable: "The dashboard process does not answer",
};

let lastAnnounced = "";

/** The status region is announced on change only: same text, no update. */
export function showStatus(state, text = STATUS_TEXT[state] ?? state) {
  const region = $("#connection");
  region.dataset.state = state;
  if (text !== lastAnnounced) {
    $("#connection-text").textContent = text;
    lastAnnounced = text;
  }
}

/** "Updated 31 s ago" beside the status: ticks silently (not announced every second). */
export function showAge(text) {
  const age = $("#connection-age");
  if (age.textContent !== text) age.textContent = text;
  age.hidden = !text;
}

const history = [];

export function recordHistory(state) {
  if (history.at(-1)?.state === state) return;
  history.push({ state, at: Date.now() });
  while (history.length > 40) history.shift();
  const strip = $("#history");
  strip.replaceChildren(...history.map((entry) => element("li", {
    attributes: { "data-state": entry.state, title: `${entry.state} at ${new Date(entry.at).toLocaleTimeString()}` },
  })));
}

/** Shows the banner. Its buttons are replaced only when they change, so focus and a running
 *  attempt survive the once-a-second refresh. `note` is what the last attempt said; `details`
 *  the error's Details disclosure, if any. */
export function showBanner({ text, tone = "warn", countdownTo = null, actions = [], actionsKey, note = "", details = null, detailsKey = "",
  errorId = "" }) {
  const banner = $("#banner");
  banner.hidden = false;
  banner.dataset.tone = tone;
  if ($("#banner-text").textContent !== text) $("#banner-text").textContent = text;
  const noteNode = $("#banner-note");
  if (noteNode.textContent !== note) noteNode.textContent = note;
  noteNode.hidden = !note;
  // The busy note ("in progress in another window") follows the error the banner shows.
  if (errorId) $("#banner-busy").dataset.busyFor = errorId; else delete $("#banner-busy").dataset.busyFor;
  $("#banner-busy").hidden = $("#banner-busy").hidden || !errorId;
  banner.dataset.countdownTo = countdownTo ?? "";
  updateCountdown();
  replaceIfChanged($("#banner-actions"), actions, actionsKey);
  replaceIfChanged($("#banner-details"), details ? [details] : [], detailsKey);
}

/** Replaces `container`'s children with `nodes` unless they are the same already (by `key`, or
 *  by the nodes' own keys and texts). The focused control keeps the focus in its replacement. */
export function replaceIfChanged(container, nodes, key) {
  const signature = key ?? nodes.map((node) => `${node.dataset?.key ?? ""}:${node.textContent}`).join("|");
  if (container.dataset.key === signature) return;
  const focused = container.contains(document.activeElement) ? document.activeElement.dataset?.key : undefined;
  container.dataset.key = signature;
  container.replaceChildren(...nodes);
  if (focused) container.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
}

export function hideBanner() {
  $("#banner").hidden = true;
  $("#banner").dataset.countdownTo = "";
  for (const part of ["#banner-actions", "#banner-details"]) {
    $(part).dataset.key = "";
    $(part).replaceChildren();
  }
}

/** "Retrying in 7 s", in whole seconds from the wall clock; called every second. */
export function updateCountdown() {
  const target = Number($("#banner").dataset.countdownTo || 0);
  const label = $("#banner-countdown");
  if (!target) { label.textContent = ""; return; }
  const seconds = Math.max(0, Math.ceil((target - Date.now()) / 1000));
  label.textContent = seconds > 0 ? `Retrying in ${seconds} s` : "Retrying now…";
}

// Messages

export function renderMessages(account, messages, { hasOlder }) {
  const list = $(`[data-messages-for="${account}"]`);
  list.replaceChildren(...messages.map(messageItem));
  $(`[data-empty-for="${account}"]`).hidden = messages.length > 0;
  $(`[data-older-for="${account}"]`).hidden = !hasOlder;
}

function messageItem(message) {
  const sent = new Date(message.sentAt);
  const when = Number.isNaN(sent.getTime()) ? message.sentAt : sent.toLocaleTimeString();
  return element("li", { className: "message", attributes: { "data-id": String(message.id) } }, [
    element("div", { className: "meta", text: `${message.sender} · chat ${message.chatId} · ${when}` }),
    element("div", { className: "text", text: message.text }),
  ]);
}

export function showLinkedPane(visible) {
  $("#pane-linked").hidden = !visible;
}

// Storage

export function renderStorage(storage) {
  const meter = $("#storage-meter");
  const quota = storage?.quotaBytes;
  const used = storage?.usedBytes ?? 0;
  meter.max = quota ?? Math.max(1, used);
  meter.value = used;
  $("#storage-text").textContent = quota == null
    ? `${formatBytes(used)} used, no quota`
    : `${formatBytes(used)} of ${formatBytes(quota)} used`;
}

export function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 1000)} KB`;
  const megabytes = bytes / 1_000_000;
  return megabytes >= 10 ? `${Math.round(megabytes)} MB` : `${megabytes.toFixed(1)} MB`;
}
