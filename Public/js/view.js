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

/** Shows in `place` that a read failed: what, why, when, and Try again (which needs the
 *  process, so it is off while the process does not answer). `onRetry(button)` gets the button,
 *  to show the retry's progress on it. Returns the button. */
export function showReadFailure(place, title, reason, onRetry) {
  const retry = element("button", { text: "Try again", attributes: { type: "button", "data-role": "default", "data-needs-process": "" } });
  retry.addEventListener("click", () => onRetry(retry));
  place.replaceChildren(element("div", { className: "error-view", attributes: { role: "alert" } }, [
    element("h3", { text: title }),
    element("p", { text: reason }),
    element("p", { className: "muted", text: `Tried at ${new Date().toLocaleTimeString()}.` }),
    element("div", { className: "actions" }, [retry]),
  ]));
  return retry;
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
export function showBanner({ text, tone = "warn", countdownTo = null, progress = "", actions = [], actionsKey, note = "", details = null,
  detailsKey = "", errorId = "" }) {
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
  banner.dataset.progress = progress;
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

/** "Retrying in 7 s", in whole seconds from the wall clock (called every second), or what is
 *  happening instead ("Trying again now…"): the banner's text stays, only this part changes. */
export function updateCountdown() {
  const banner = $("#banner");
  const target = Number(banner.dataset.countdownTo || 0);
  const label = $("#banner-countdown");
  let text = banner.dataset.progress ?? "";
  if (target) {
    const seconds = Math.max(0, Math.ceil((target - Date.now()) / 1000));
    text = seconds > 0 ? `Retrying in ${seconds} s` : "Retrying now…";
  }
  if (label.textContent !== text) label.textContent = text;
}

export function showLinkedPane(visible) {
  $("#pane-linked").hidden = !visible;
  // Search offers the linked account only while there is one.
  const account = $("#search-account");
  if (account) {
    account.hidden = !visible;
    if (!visible) account.value = "primary";
  }
}

// Storage

/** The storage card: a meter whose colour follows the level (green, amber from 80 %, red from
 *  95 % and whenever waiting messages do not fit) and figures that agree with the out-of-space
 *  error, when there is one (`outOfSpace`). */
export function renderStorage(storage, outOfSpace) {
  const meter = $("#storage-meter");
  const quota = storage?.quotaBytes;
  const used = storage?.usedBytes ?? 0;
  const max = quota ?? Math.max(1, used);
  meter.max = max;
  meter.value = Math.min(used, max);
  const full = Boolean(outOfSpace);
  // Below `low` is good (green), up to `high` a warning (amber), above it bad (red): out of space
  // is bad at any level, so then both bounds go under the value.
  meter.min = 0;
  meter.optimum = 0;
  meter.low = full ? meter.value / 2 : 0.8 * max;
  meter.high = full ? meter.value / 2 : 0.95 * max;
  meter.dataset.level = full || used >= 0.95 * max ? "full" : used >= 0.8 * max ? "high" : "ok";
  // Without a quota there is nothing to measure against (a Matrix homeserver sets none): no
  // meter, only the figure, unless the disk itself is full.
  meter.hidden = quota == null && !full;
  let text;
  if (quota == null) {
    text = `${formatBytes(used)} used, no quota`;
  } else {
    const percent = Math.min(100, Math.round((used / Math.max(1, quota)) * 100));
    text = `${formatBytes(used)} of ${formatBytes(quota)} used (${percent} %)`;
  }
  if (outOfSpace?.diskFull) {
    text += ". The disk is full: new messages wait on the server.";
  } else if (outOfSpace && quota != null && outOfSpace.neededBytes > 0) {
    const left = Math.max(0, quota - used);
    text += `. New messages (${formatBytes(outOfSpace.neededBytes)}) do not fit into the ${left === 0 ? "nothing" : formatBytes(left)} left: they wait on the server.`;
  }
  const node = $("#storage-text");
  if (node.textContent !== text) node.textContent = text;
}

/** Sizes in words; the server writes them the same way (ErrorCatalog.megabytes), so figures agree:
 *  whole numbers with halves rounded up, one decimal below 10 KB and 10 MB. */
export function formatBytes(bytes) {
  const tenths = (unit) => {
    const count = Math.floor((bytes + unit / 20) / (unit / 10));
    return `${Math.floor(count / 10)}.${count % 10}`;
  };
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 10_000) return `${tenths(1000)} KB`;
  if (bytes < 1_000_000) return `${Math.floor((bytes + 500) / 1000)} KB`;
  if (bytes < 10_000_000) return `${tenths(1_000_000)} MB`;
  return `${Math.floor((bytes + 500_000) / 1_000_000)} MB`;
}
