// The search card: full-text search of the local copy as the person types (debounced), results
// as a list with a live count; matches are <mark>ed text nodes, never HTML from the server.

import { getJSON, HttpError } from "./api.js";
import { openChat } from "./chats.js";
import { atLeastFloor, withProgress } from "./progress.js";
import { formatWhen } from "./dates.js";
import { element } from "./dom.js";

const $ = (selector) => document.querySelector(selector);

const DEBOUNCE_MS = 250;
let timer = null;
let asked = 0; // the newest request: older answers that arrive late are dropped

export function wireSearch() {
  const field = $("#search-field");
  const run = () => {
    clearTimeout(timer);
    timer = setTimeout(() => search(field.value), DEBOUNCE_MS);
  };
  field.addEventListener("input", run);
  $("#search-account").addEventListener("change", run);
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(timer);
    search(field.value);
  });
  const again = $("#search-again");
  again.addEventListener("click", () => {
    clearTimeout(timer);
    withProgress(again, () => search(field.value, { retry: true }));
  });
}

/** Runs a search. `retry`: the person asked again after a failure, so it says it is searching. */
async function search(text, { retry = false } = {}) {
  const request = ++asked;
  const list = $("#search-results");
  const count = $("#search-count");
  const again = $("#search-retry");
  if (!text.trim()) {
    list.replaceChildren();
    count.textContent = "";
    again.hidden = true;
    list.dataset.query = text;
    return;
  }
  const account = $("#search-account").value;
  const began = Date.now();
  if (retry) count.textContent = "Searching…";
  let answer;
  try {
    answer = await getJSON(`/api/search?q=${encodeURIComponent(text)}&account=${account}&limit=20`);
  } catch (failure) {
    // A search that fails at once is seen to have run before it says so.
    await atLeastFloor(began);
    if (request !== asked) return;
    list.replaceChildren();
    const unreadable = failure instanceof HttpError && failure.status === 400 && failure.body?.detail;
    count.textContent = unreadable ? failure.body.detail : `The search did not go through (tried ${formatWhen(Date.now())}).`;
    again.hidden = Boolean(unreadable);
    return;
  }
  if (request !== asked) return;
  again.hidden = true;
  const results = Array.isArray(answer.results) ? answer.results : [];
  list.replaceChildren(...results.map((result) => resultItem(result, account)));
  list.dataset.query = text; // what the results answer, for tests and benchmarks
  const encrypted = Number.isInteger(answer.encryptedChatsNotSearched) ? answer.encryptedChatsNotSearched : 0;
  count.textContent = countWords(results.length, answer) + (encrypted === 0 ? ""
    : ` ${encrypted === 1 ? "1 encrypted room was" : `${encrypted} encrypted rooms were`} not searched: this dashboard cannot read them.`);
}

/** A message shown among the results was edited or deleted: a deleted one leaves at once, an
 *  edited one is searched for again (the old words may no longer match). */
export function searchResultChanged(changedAccount, id, { removed = false } = {}) {
  if ($("#search-account").value !== changedAccount) return;
  const shown = $(`#search-results .search-open[data-message="${CSS.escape(String(id))}"]`);
  if (!shown) return;
  if (removed) shown.closest("li").remove();
  clearTimeout(timer);
  timer = setTimeout(() => search($("#search-field").value), DEBOUNCE_MS);
}

/** A result opens its chat at the message found. */
function resultItem({ message, snippet }, account) {
  const text = element("span", { className: "search-snippet" });
  for (const piece of Array.isArray(snippet) ? snippet : []) {
    text.append(piece.match ? element("mark", { text: String(piece.text) }) : document.createTextNode(String(piece.text)));
  }
  const when = formatWhen(message.sentAt);
  const chat = message.chatName ?? `Chat ${message.chatId}`;
  const open = element("button", { className: "search-open", attributes: { type: "button", "data-message": String(message.id) } }, [
    element("span", { className: "meta", text: `${message.senderName || message.sender} · ${chat} · ${when}` }),
    text,
  ]);
  open.addEventListener("click", () => openChat(account, message.chatId, { at: message.id, opener: open, name: chat }));
  return element("li", { className: "search-result" }, [open]);
}

/** "3 matches", "the best 20 of 1,234 matches", "the best 20 of more than 1,000 matches". */
export function countWords(shown, { total, totalIsExact }) {
  if (shown === 0) return "No stored message matches.";
  const all = Number.isInteger(total) ? total : shown;
  const plural = (count) => (count === 1 ? "match" : "matches");
  if (all <= shown && totalIsExact !== false) return `${shown} ${plural(shown)}.`;
  const size = totalIsExact === false ? `more than ${all.toLocaleString("en")}` : all.toLocaleString("en");
  return `The best ${shown} of ${size} ${totalIsExact === false ? "matches" : plural(all)}.`;
}
