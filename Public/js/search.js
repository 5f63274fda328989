// The search card: full-text search of the local copy as the person types (debounced), results
// as a list with a live count; matches are <mark>ed text nodes, never HTML from the server.

import { getJSON, HttpError } from "./api.js";
import { openChat } from "./chats.js";
import { atLeastFloor, withProgress } from "./progress.js";
import { element } from "./view.js";

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
    count.textContent = unreadable ? failure.body.detail : `The search did not go through (tried at ${new Date().toLocaleTimeString()}).`;
    again.hidden = Boolean(unreadable);
    return;
  }
  if (request !== asked) return;
  again.hidden = true;
  const results = Array.isArray(answer.results) ? answer.results : [];
  list.replaceChildren(...results.map((result) => resultItem(result, account)));
  const more = answer.next != null ? " (the 20 best)" : "";
  count.textContent = results.length === 0 ? "No stored message matches." : `${results.length} ${results.length === 1 ? "match" : "matches"}${more}.`;
}

/** A result opens its chat at the message found. */
function resultItem({ message, snippet }, account) {
  const text = element("span", { className: "search-snippet" });
  for (const piece of Array.isArray(snippet) ? snippet : []) {
    text.append(piece.match ? element("mark", { text: String(piece.text) }) : document.createTextNode(String(piece.text)));
  }
  const when = new Date(message.sentAt).toLocaleString();
  const chat = message.chatName ?? `Chat ${message.chatId}`;
  const open = element("button", { className: "search-open", attributes: { type: "button", "data-message": String(message.id) } }, [
    element("span", { className: "meta", text: `${message.sender} · ${chat} · ${when}` }),
    text,
  ]);
  open.addEventListener("click", () => openChat(account, message.chatId, { at: message.id, opener: open, name: chat }));
  return element("li", { className: "search-result" }, [open]);
}
