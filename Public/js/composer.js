// A message box and the local echoes below it, for one place to write: a chat's timeline, or a
// thread in it. What is typed is kept (drafts.js) until the dashboard has it; a message sent shows
// at once as its echo ("Sending…"), and one not taken or refused says why with Try again, Edit and
// Delete (outbox.js decides; this module only draws and posts). The outbox itself is shared by
// every place: `outbox.get()` / `outbox.set()`.

import { post, reasonFor } from "./api.js";
import { failureText, optionButtons, refreshButtons } from "./errors.js";
import { element, replaceIfChanged, setText } from "./dom.js";
import {
  composerRule, echoText, echoWords, keyAction, pendingIn, sendableText, withAccepted, withNotTaken, withoutWriting, withRetrying, withWriting,
} from "./outbox.js";
import { draftStore, notTakenNote, requestKeyFor, UNANSWERED_BEFORE_RELOAD, withEdited, withoutUnsent, withSent, withTyped } from "./drafts.js";

/** Each place's message box and what was sent from it that the dashboard has not taken. */
const drafts = draftStore(() => sessionStorage);

/** Where a draft of `place` is kept: a chat's, or a thread's of that chat. */
function draftPlace(place) {
  return place.threadId == null ? place.chatId : `${place.chatId}/thread/${place.threadId}`;
}

/**
 * @param {object} parts
 * @param {HTMLFormElement} parts.form
 * @param {HTMLTextAreaElement} parts.box
 * @param {HTMLButtonElement} parts.sendButton
 * @param {HTMLElement} parts.note the composer's note (a reason it is off, "Not sent: …")
 * @param {HTMLOListElement} parts.echoes where the local echoes go
 * @param {() => ({account: string, chatId: number, threadId: number|null}|null)} parts.place
 * @param {{get: () => object, set: (outbox: object) => void}} parts.outbox
 * @param {() => boolean} parts.canSend whether the upstream takes messages at all
 * @param {(outboxId: number) => object|null} parts.errorOf the open error of an unsent entry
 * @param {() => object} parts.handlers what an echo's error options do with their answers
 * @param {() => void} [parts.written] after a message is sent from the box (the view scrolls to it)
 */
export function makeComposer({ form, box, sendButton, note, echoes, place, outbox, canSend, errorOf, handlers, written = () => {} }) {
  const changeDraft = (at, change) => drafts.write(at.account, draftPlace(at), change(drafts.read(at.account, draftPlace(at))));

  function renderEchoes() {
    const at = place();
    const entries = at ? pendingIn(outbox.get(), at.account, at.chatId, at.threadId) : [];
    const shown = entries.map((entry) => ({ entry, error: entry.state === "failed" ? errorOf(entry.outboxId) ?? entry.error : null }));
    // Drawn again only when what it says changed, so a button is never swapped under a click.
    const signature = JSON.stringify(shown.map(({ entry, error }) => [entry.outboxId ?? entry.requestKey, entry.state, entry.text, entry.reason, error?.id,
      error?.detail, error?.lastAttempt?.at, error?.lastAttempt?.tries, error?.lastAttempt?.reason]));
    replaceIfChanged(echoes, shown.map(({ entry, error }) => echo(entry, error, handlers())), signature);
    refreshButtons();
  }

  /** The box of the place now open: on, or off with the reason beside it; its draft back. */
  function render(chat) {
    const rule = composerRule(chat, { canSend: canSend() });
    box.disabled = !rule.enabled;
    sendButton.disabled = !rule.enabled;
    setText(note, rule.reason);
    const at = place();
    if (!at) return;
    const key = `${at.account}/${draftPlace(at)}`;
    if (box.dataset.place === key) return;
    box.dataset.place = key;
    const draft = drafts.read(at.account, draftPlace(at));
    box.value = draft.text;
    // Sent from an earlier page that never heard the answer: shown as not taken, to try again.
    let mine = outbox.get();
    for (const item of draft.unsent) {
      mine = withWriting(mine, { ...item, account: at.account, chatId: at.chatId, threadId: at.threadId, notTaken: UNANSWERED_BEFORE_RELOAD });
    }
    outbox.set(mine);
    if (draft.unsent.length > 0) renderEchoes();
  }

  /** Sends what is in the box: into the outbox, under a request key kept with the draft, so that
   *  a request whose answer was lost (or a reload) sends the same key again and it is kept once. */
  function sendWritten() {
    const at = place();
    if (!at) return;
    const text = sendableText(box.value);
    if (text == null || box.disabled) return;
    const item = { requestKey: requestKeyFor(drafts.read(at.account, draftPlace(at)), text, () => crypto.randomUUID()), text, createdAt: new Date().toISOString() };
    // The box is free at once for the next message, and the echo shows at once (no spinner to
    // wait for: the echo is the progress); the draft keeps the message until the dashboard has it.
    changeDraft(at, (draft) => withSent(draft, item));
    box.value = "";
    outbox.set(withWriting(outbox.get(), { ...item, account: at.account, chatId: at.chatId, threadId: at.threadId }));
    renderEchoes();
    written();
    postWritten(at, item);
  }

  /** Asks the dashboard to take one written message. Not taken (no answer, or a refusal), it stays
   *  as an echo that says why, with Try again, Edit and Delete: the box is left as it is, since
   *  the person may be typing the next message in it. */
  async function postWritten(at, { requestKey, text }) {
    const stillHere = () => place()?.account === at.account && place()?.chatId === at.chatId && place()?.threadId === at.threadId;
    const notTaken = (reason) => {
      outbox.set(withNotTaken(outbox.get(), requestKey, reason));
      renderEchoes();
      if (stillHere()) setText(note, notTakenNote(reason));
    };
    let answer;
    try {
      const body = at.threadId == null ? { text } : { text, threadId: at.threadId };
      answer = await post(`/api/chats/${encodeURIComponent(at.chatId)}/messages?account=${at.account}`, body, { idempotencyKey: requestKey });
    } catch (failure) {
      notTaken(reasonFor(failure));
      return;
    }
    if (answer.status !== 202) {
      notTaken(answer.body?.detail ?? `The dashboard answered ${answer.status}.`);
      return;
    }
    changeDraft(at, (draft) => withoutUnsent(draft, requestKey));
    outbox.set(withAccepted(outbox.get(), {
      requestKey, account: at.account, chatId: at.chatId, threadId: at.threadId, text, outboxId: answer.body.outboxId, createdAt: new Date().toISOString(),
    }));
    if (stillHere() && note.textContent.startsWith("Not sent:")) setText(note, "");
    renderEchoes();
  }

  /** Try again, Edit or Delete on a message the dashboard did not take. */
  function actOnNotTaken(requestKey, action) {
    const at = place();
    const item = outbox.get().writing.find((writing) => writing.requestKey === requestKey);
    if (!at || !item || !item.notTaken) return;
    setText(note, "");
    if (action === "retry") {
      outbox.set(withRetrying(outbox.get(), requestKey));
      renderEchoes();
      postWritten(at, item);
      return;
    }
    outbox.set(withoutWriting(outbox.get(), requestKey));
    if (action === "edit") {
      changeDraft(at, (draft) => withEdited(withTyped(draft, box.value), requestKey));
      box.value = drafts.read(at.account, draftPlace(at)).text;
      box.focus();
    } else {
      changeDraft(at, (draft) => withoutUnsent(draft, requestKey));
    }
    renderEchoes();
  }

  box.addEventListener("keydown", (event) => {
    if (keyAction(event) !== "send") return;
    event.preventDefault();
    sendWritten();
  });
  // Kept until the dashboard has it: a reload (or a closed view) does not lose what was typed.
  box.addEventListener("input", () => {
    const at = place();
    if (at) changeDraft(at, (draft) => withTyped(draft, box.value));
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    sendWritten();
  });
  echoes.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-writing]");
    if (button) actOnNotTaken(button.dataset.requestKey, button.dataset.writing);
  });

  return { render, renderEchoes };
}

/** A message the dashboard did not take is the page's own to send again, edit or delete. */
function notTakenButtons(entry) {
  return [["retry", "Try again"], ["edit", "Edit"], ["delete", "Delete"]].map(([action, label]) => element("button", {
    text: label,
    attributes: { type: "button", "data-writing": action, "data-request-key": entry.requestKey },
  }));
}

/** One local echo: "You · Sending…", or "Not sent" with the reason, the last try and the options. */
function echo(entry, error, handlers) {
  const words = echoWords({ ...entry, error });
  const failed = entry.state === "failed" || entry.state === "not-taken";
  const children = [
    element("div", { className: "meta" }, [document.createTextNode("You · "), element("span", { className: "mark", text: words.mark })]),
    element("div", { className: "text", text: echoText(entry) }),
  ];
  if (failed) {
    children.push(element("p", { className: "reason", text: words.reason }));
    const tried = error ? failureText(error) : "";
    if (tried) children.push(element("p", { className: "attempt-note", text: tried }));
    if (error) children.push(element("div", { className: "echo-actions" }, optionButtons(error, handlers)));
    if (entry.state === "not-taken") children.push(element("div", { className: "echo-actions" }, notTakenButtons(entry)));
  }
  return element("li", {
    className: `message pending${failed ? " not-sent" : ""}`,
    attributes: {
      ...(entry.outboxId == null ? {} : { "data-outbox-id": String(entry.outboxId) }),
      "data-key": entry.outboxId == null ? `writing/${entry.requestKey}` : `echo/${entry.outboxId}`,
      "aria-label": `You: ${echoText(entry)}. ${words.mark}`,
    },
  }, children);
}
