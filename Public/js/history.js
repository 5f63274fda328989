// "Recent problems": the last 20 errors, open or resolved, with each attempt and how it went, so
// an error that went away does not vanish without trace. Starts from the snapshot's
// `recentProblems` and follows the feed.

import { element, timeElement } from "./dom.js";

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

/** How an attempt ended, in words: "it worked", "didn't help", or what was done when the
 *  person set the problem aside ("You stopped syncing."). */
export function attemptOutcome(attempt) {
  if (attempt.status === "dismissed") return attempt.summary ?? "done";
  if (attempt.status === "recovered") return `it worked${attempt.summary ? `. ${attempt.summary}` : ""}`;
  return `didn't help${attempt.reason ? `. ${attempt.reason}` : ""}`;
}

/** Where a problem stands: still open, resolved, or closed because the person set it aside. */
export function recordState(record) {
  if (!record.resolvedAt) return "still open";
  return record.attempts.at(-1)?.status === "dismissed" ? "closed" : "resolved";
}

const text = (value) => document.createTextNode(value);

function render() {
  const list = document.querySelector("#recent-problems");
  document.querySelector("#recent-empty").hidden = records.length > 0;
  list.replaceChildren(...records.map((record) => {
    // "Try again, 2 min ago: didn't help. …": the moments are <time>s, kept true as time passes.
    const attempts = record.attempts.map((attempt) => element("li", {}, [
      text(`${attempt.title}, `), timeElement(attempt.at), text(`: ${attemptOutcome(attempt)}`),
    ]));
    const state = recordState(record);
    return element("li", { attributes: { "data-problem": record.id, "data-state": record.resolvedAt ? "resolved" : "open" } }, [
      element("span", { className: "recent-title", text: record.title }),
      element("span", { className: "muted" }, [text(" · "), timeElement(record.raisedAt), text(`, ${state}`),
        ...(record.resolvedAt ? [text(" "), timeElement(record.resolvedAt)] : [])]),
      ...(attempts.length ? [element("ul", { className: "recent-attempts" }, attempts)] : []),
    ]);
  }));
}
