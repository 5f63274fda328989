// The chat view's reaction clicks: a chip gives the key or takes the person's own back, React
// opens the quick reactions. The request goes to the outbox (PUT or DELETE of the message's
// reaction); its entry shows on the chip at once, and its events keep it true from then on.

import { put, reasonFor, remove } from "./api.js";
import { closePicker, togglePicker } from "./reactionchips.js";
import { chipsFor, toggleOf } from "./reactions.js";
import { toast } from "./toasts.js";

/** Listens on `list` (the chat view's messages). `chat()` is the open chat (`{ account, chatId,
 *  messages }`) or null; `entries(account)` its reaction entries; `accepted(entry)` takes in the
 *  entry the dashboard answered with; `redraw()` draws the messages again. */
export function wireReactions({ list, chat, entries, accepted, redraw }) {
  list.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-react], button[data-react-picker]") : null;
    const open = chat();
    if (!button || !open) return;
    if (button.dataset.reactPicker) {
      togglePicker(open.account, button.dataset.reactPicker);
      redraw();
      return;
    }
    const id = Number(button.dataset.messageId);
    const message = open.messages.find((candidate) => candidate.id === id);
    if (message) react(open, message, button.dataset.react, { entries, accepted, redraw });
  });
}

async function react(open, message, key, { entries, accepted, redraw }) {
  const adding = toggleOf(chipsFor(message, open.account, entries(open.account)), key) === "give";
  closePicker(open.account, message.id);
  const path = `/api/chats/${open.chatId}/messages/${message.id}/reactions/${encodeURIComponent(key)}?account=${open.account}`;
  let answer;
  try {
    answer = adding ? await put(path) : await remove(path);
  } catch (failure) {
    redraw();
    toast(`The reaction ${key} could not be ${adding ? "given" : "taken back"}.`, { detail: reasonFor(failure) });
    return;
  }
  if (answer.status === 202 && Number.isInteger(answer.body?.outboxId)) {
    accepted({
      outboxId: answer.body.outboxId, account: open.account, chatId: open.chatId, text: key, state: answer.body.state ?? "queued",
      createdAt: new Date().toISOString(), error: null, action: adding ? "react" : "unreact", messageId: message.id,
    });
  } else if (answer.status !== 204) {
    toast(`The reaction ${key} could not be ${adding ? "given" : "taken back"}.`, { detail: answer.body?.detail ?? `The dashboard answered ${answer.status}.` });
  }
  redraw();
}
