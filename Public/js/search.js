// The search card: full-text search of the local copy as the person types (each keystroke at
// once, one request at a time: searchline.js), results as a list with a live count; matches are
// <mark>ed text nodes, never HTML from the server.

import { getJSON, HttpError } from "./api.js";
import { openChat } from "./chats.js";
import { atLeastFloor, withProgress } from "./progress.js";
import { formatWhen } from "./dates.js";
import { element } from "./dom.js";
import { answered, idleLine, typed } from "./searchline.js";
import { countWords, rankingNote } from "./searchwords.js";
import { placeOf } from "./threads.js";

const $ = (selector) => document.querySelector(selector);

let line = idleLine;
let asked = 0; // the newest request: older answers that arrive late are dropped

/** Searches `text` now, or when the search running now is answered (see searchline.js). */
function ask(text) {
  const step = typed(line, text);
  line = step.line;
  if (step.send !== null) run(step.send);
}

async function run(text) {
  try {
    await search(text);
  } finally {
    const step = answered(line);
    line = step.line;
    if (step.send !== null) run(step.send);
  }
}

export function wireSearch() {
  const field = $("#search-field");
  field.addEventListener("input", () => ask(field.value));
  $("#search-account").addEventListener("change", () => ask(field.value));
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    ask(field.value);
  });
  const again = $("#search-again");
  again.addEventListener("click", () => {
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
  count.textContent = countWords(results.length, answer) + rankingNote(answer) + (encrypted === 0 ? ""
    : ` ${encrypted === 1 ? "1 encrypted room was" : `${encrypted} encrypted rooms were`} not searched: this dashboard cannot read them.`);
}

/** A message shown among the results was edited or deleted: a deleted one leaves at once, an
 *  edited one is searched for again (the old words may no longer match). */
export function searchResultChanged(changedAccount, id, { removed = false } = {}) {
  if ($("#search-account").value !== changedAccount) return;
  const shown = $(`#search-results .search-open[data-message="${CSS.escape(String(id))}"]`);
  if (!shown) return;
  if (removed) shown.closest("li").remove();
  ask($("#search-field").value);
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
  // A reply in a thread opens in its thread, over the chat at the thread's first message.
  const place = placeOf(message);
  open.addEventListener("click", () => openChat(account, message.chatId, { at: place.chatAt, opener: open, name: chat, thread: place.thread }));
  return element("li", { className: "search-result" }, [open]);
}
