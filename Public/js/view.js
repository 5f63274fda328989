// Rendering of the parts that are not the status bar: read failures, the storage card, the
// linked pane. Upstream text only ever goes in through textContent.

import { $, element } from "./dom.js";
import { formatWhen } from "./dates.js";

/** Shows in `place` that a read failed: what, why, when, and Try again (which needs the
 *  process, so it is off while the process does not answer). `onRetry(button)` gets the button,
 *  to show the retry's progress on it. Returns the button. */
export function showReadFailure(place, title, reason, onRetry) {
  const retry = element("button", { text: "Try again", attributes: { type: "button", "data-role": "default", "data-needs-process": "" } });
  retry.addEventListener("click", () => onRetry(retry));
  place.replaceChildren(element("div", { className: "error-view", attributes: { role: "alert" } }, [
    element("h3", { text: title }),
    element("p", { text: reason }),
    element("p", { className: "muted", text: `Tried ${formatWhen(Date.now())}.` }),
    element("div", { className: "actions" }, [retry]),
  ]));
  return retry;
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
    text += `. New messages (${formatBytes(outOfSpace.neededBytes)}) don't fit into the ${left === 0 ? "nothing" : formatBytes(left)} left: they wait on the server.`;
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
