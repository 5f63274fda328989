// "Recent problems": the last 20 errors, open or resolved, with each attempt and how it went, so
// an error that went away does not vanish without trace. Starts from the snapshot's
// `recentProblems` and follows the feed.

import { timeOf } from "./errors.js";
import { element } from "./view.js";

const LIMIT = 20;
let records = []; // newest first

const find = (id) => records.find((record) => record.id === id);

export function resetProblems(list) {
  records = (list ?? []).map((record) => ({ ...record, attempts: [...record.attempts] }));
  render();
}

export function problemRaised(error) {
  const record = find(error.id);
  if (record) {
    record.title = error.title;
  } else {
    records.unshift({ id: error.id, type: error.type, title: error.title, raisedAt: error.createdAt, resolvedAt: null, attempts: [] });
    records.length = Math.min(records.length, LIMIT);
  }
  render();
}

export function problemResolved(id) {
  const record = find(id);
  if (!record) return;
  record.resolvedAt = new Date().toISOString();
  render();
}

/** An `attempt` event that ended (recovered or failed). */
export function attemptEnded({ errorId, title, status, reason, summary }) {
  const record = find(errorId);
  if (!record) return;
  record.attempts.push({ title, status, at: new Date().toISOString(), reason: reason ?? null, summary: summary ?? null });
  render();
}

/** How an attempt ended, in words: "it worked", "did not help", or what was done when the
 *  person set the problem aside ("You stopped syncing."). */
export function attemptText(attempt) {
  const when = `${attempt.title} at ${timeOf(attempt.at)}`;
  if (attempt.status === "dismissed") return `${when}: ${attempt.summary ?? "done"}`;
  if (attempt.status === "recovered") return `${when}: it worked${attempt.summary ? `. ${attempt.summary}` : ""}`;
  return `${when}: did not help${attempt.reason ? `. ${attempt.reason}` : ""}`;
}

/** Where a problem stands: still open, resolved, or closed because the person set it aside. */
export function recordState(record) {
  if (!record.resolvedAt) return "still open";
  const setAside = record.attempts.at(-1)?.status === "dismissed";
  return `${setAside ? "closed" : "resolved"} at ${timeOf(record.resolvedAt)}`;
}

function render() {
  const list = document.querySelector("#recent-problems");
  document.querySelector("#recent-empty").hidden = records.length > 0;
  list.replaceChildren(...records.map((record) => {
    const attempts = record.attempts.map((attempt) => element("li", { text: attemptText(attempt) }));
    return element("li", { attributes: { "data-problem": record.id, "data-state": record.resolvedAt ? "resolved" : "open" } }, [
      element("span", { className: "recent-title", text: record.title }),
      element("span", { className: "muted", text: ` · ${timeOf(record.raisedAt)}, ${recordState(record)}` }),
      ...(attempts.length ? [element("ul", { className: "recent-attempts" }, attempts)] : []),
    ]);
  }));
}
