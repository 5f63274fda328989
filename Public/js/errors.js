// Recoverable errors on the page: their option buttons, the attempts those buttons run, and the
// surfaces that show them (an in-page view, the alert dialog; the banner is drawn by app.js with
// the same pieces).
//
// - Every click the person makes is one attempt with its own Idempotency-Key; only a network
//   retry of that click reuses the key (api.js postAttempt).
// - While an attempt runs, every button of that error is off (aria-disabled, so the one clicked
//   keeps the focus: Chromium moves focus off a disabled button), wherever it is shown, in this
//   window (spinner after 300 ms, then for at least 300 ms) and in the others ("in progress in
//   another window", from the feed's `attempt` events). So is every button that needs the
//   dashboard process while it does not answer.
// - Buttons come in one order everywhere: the cancelling one first, the default action last.
// - An alert opens in the window where the person acted (or, for a problem nobody caused, in
//   every window); other windows get a quiet note with a button to show it.
// - A failed attempt is shown where the error is ("Still failing: ... (Try again at 12:03:04)")
//   and announced politely; each error has a Details disclosure with its debug text and a Copy button.

import { postAttempt } from "./api.js";
import { failureText } from "./attemptwords.js";
import { exactTime, formatWhen } from "./dates.js";
import { placeAlert } from "./tabs.js";
import { element, replaceIfChanged } from "./dom.js";

const local = new Map(); // error id -> { option, spinner } for attempts started in this window
const remote = new Map(); // error id -> option id, for attempts running in another window
const openDetails = new Set(); // error ids whose Details are open, kept across re-renders
const mine = new Set(); // ids of errors raised by an attempt made in this window
let processReachable = true;

/** Whether the dashboard process answers; while it does not, buttons that need it are off. */
/** True while an attempt started in this window is running (on `errorId`, or on any error). */
export function attemptRunningHere(errorId) {
  return errorId === undefined ? local.size > 0 : local.has(errorId);
}

export function setProcessReachable(reachable) {
  processReachable = reachable;
  refreshButtons();
}

/** Turns a button off (or on) without taking the focus from it. */
export function setOff(button, off, reason = "") {
  if (off) button.setAttribute("aria-disabled", "true"); else button.removeAttribute("aria-disabled");
  if (off && reason) button.dataset.offReason = reason; else delete button.dataset.offReason;
}

export function isOff(button) {
  return button.getAttribute("aria-disabled") === "true";
}

// A control whose retry just ended (progress.js) is off again if the process does not answer.
document.addEventListener("lp-progress-ended", () => refreshButtons());

// A button that is off does nothing, whoever made it (capture phase: before its own handler).
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button") : null;
  if (button && isOff(button)) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }
}, true);

/** Whether an alert-presented error opens as a dialog here: in the window that caused it, where
 *  the person acted just now, or whose attempt runs (tabs.js `placeAlert`); the other windows get
 *  a quiet note. */
export function alertIsMine(error) {
  const placement = placeAlert({ causedHere: mine.has(error.id), attemptRunningHere: local.size > 0, attemptRunningElsewhere: remote.size > 0 });
  if (placement === "dialog") mine.add(error.id);
  return placement === "dialog";
}

export function claimError(id) {
  mine.add(id);
}

const $ = (selector) => document.querySelector(selector);

export function announce(text) {
  const region = $("#announcer");
  region.textContent = "";
  // A new text node in a cleared region is announced even when the words repeat.
  requestAnimationFrame(() => { region.textContent = text; });
}

/** When, as the page says it everywhere (dates.js). */
export function timeOf(iso) {
  return formatWhen(iso);
}

// MARK: Attempts seen in other windows

/** Takes in an `attempt` event (or a snapshot error's `attempt`). */
export function noteAttemptEvent({ errorId, option, status }) {
  if (local.has(errorId)) return; // ours: this window tracks it itself
  if (status === "running") remote.set(errorId, option);
  else remote.delete(errorId);
  refreshButtons();
}

export function forgetAttempts(errorId) {
  remote.delete(errorId);
  openDetails.delete(errorId);
  mine.delete(errorId);
}

export function resetRemoteAttempts(errors) {
  remote.clear();
  for (const error of errors) if (error.attempt?.status === "running") remote.set(error.id, error.attempt.option);
}

/** Brings every option button and busy note in the page in line with the attempts running. */
export function refreshButtons() {
  for (const button of document.querySelectorAll("button[data-error-id][data-option]")) {
    const id = button.dataset.errorId;
    const ours = local.get(id);
    setOff(button, Boolean(ours || remote.has(id) || !processReachable));
    const spinning = Boolean(ours?.spinner && ours.option === button.dataset.option);
    const spinner = button.querySelector(".spinner");
    if (spinning && !spinner) {
      button.prepend(element("span", { className: "spinner", attributes: { "aria-hidden": "true" } }));
      button.setAttribute("aria-busy", "true");
    } else if (!spinning && spinner) {
      spinner.remove();
      button.removeAttribute("aria-busy");
    }
  }
  for (const button of document.querySelectorAll("button[data-needs-process]")) {
    if (button.dataset.busy !== "true" && button.getAttribute("aria-busy") !== "true") setOff(button, !processReachable);
  }
  for (const note of document.querySelectorAll("[data-busy-for]")) {
    const busy = remote.has(note.dataset.busyFor) && !local.has(note.dataset.busyFor);
    note.textContent = busy ? "In progress in another window…" : "";
    note.hidden = !busy;
  }
}

// MARK: Option buttons

/** Buttons for an error's options. `onDone(error, option, answer)` gets each attempt's outcome. */
const ROLE_ORDER = { cancel: 0, destructive: 1, default: 3 };

export function optionButtons(error, handlers, { except = [] } = {}) {
  const options = error.options.filter((option) => !except.includes(option.id));
  options.sort((a, b) => (ROLE_ORDER[a.role] ?? 1) - (ROLE_ORDER[b.role] ?? 1));
  return options.map((option) => {
    const button = element("button", {
      text: option.title,
      attributes: { type: "button", "data-error-id": error.id, "data-option": option.id, "data-key": `${error.id}/${option.id}` },
    });
    if (option.role) button.dataset.role = option.role;
    button.addEventListener("click", async () => {
      if (local.has(error.id) || remote.has(error.id) || !processReachable) return;
      if (option.confirm && !(await confirmOption(option))) return;
      let extra = {};
      if (option.input === "password") {
        const password = await askPassword();
        if (!password) return;
        extra = { password };
      }
      await runAttempt(error, option, handlers.onDone, extra);
    });
    return button;
  });
}

async function runAttempt(error, option, onDone, extra = {}) {
  const key = crypto.randomUUID(); // this click; a retry of the request below reuses it
  local.set(error.id, { option: option.id, spinner: false });
  refreshButtons();
  let spinnerShownAt = 0;
  const spinnerTimer = setTimeout(() => {
    spinnerShownAt = Date.now();
    local.get(error.id).spinner = true;
    refreshButtons();
  }, 300);
  let answer;
  try {
    const { status, body } = await postAttempt(error.id, option.id, key, extra);
    if (status === 200) {
      answer = body;
      if (body?.error && body.error.id !== error.id) mine.add(body.error.id);
    }
    else if (status === 404) answer = { status: "gone" };
    else if (status === 409) answer = { status: "busy" };
    else answer = { status: "refused", problem: body };
  } catch {
    answer = { status: "unreachable" };
  }
  clearTimeout(spinnerTimer);
  if (spinnerShownAt) {
    const left = 300 - (Date.now() - spinnerShownAt);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  }
  local.delete(error.id);
  refreshButtons();
  onDone(error, option, answer);
}

// MARK: Pieces every surface shows

export { failureText };

/** What Details holds, for a bug report: the technical words are here, and only here. */
export function detailsText(error) {
  return [error.title, error.detail, `Kind: ${error.type}`, `Since: ${exactTime(error.createdAt)}`,
    `Cause: ${error.debug?.underlying ?? "not recorded"}`].join("\n");
}

/** A "Details" disclosure: the technical cause and when it began, with a Copy button. */
export function detailsDisclosure(error) {
  const status = element("span", { className: "copy-status muted", attributes: { role: "status" } });
  const copy = element("button", { text: "Copy details", attributes: { type: "button", "data-key": `copy/${error.id}` } });
  copy.addEventListener("click", async () => {
    status.textContent = (await copyText(detailsText(error))) ? "Copied." : "Could not copy; select the text above instead.";
  });
  const disclosure = element("details", { className: "error-details", attributes: { "data-key": `details/${error.id}` } }, [
    element("summary", { text: "Details" }),
    element("p", { className: "muted", text: `Since ${exactTime(error.createdAt)} · ${error.type}` }),
    element("pre", { text: error.debug?.underlying ?? "No technical cause was recorded." }),
    element("div", { className: "actions" }, [copy, status]),
  ]);
  disclosure.open = openDetails.has(error.id);
  disclosure.addEventListener("toggle", () => {
    if (disclosure.open) openDetails.add(error.id); else openDetails.delete(error.id);
  });
  return disclosure;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard permission refused (or no secure context): the old way, through a selection.
    const area = element("textarea", { text, attributes: { readonly: "", "aria-hidden": "true", class: "offscreen" } });
    document.body.append(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    return copied;
  }
}

// MARK: The in-page view

/** Shows `error` as a view in `container` (role=alert), updating it in place when it is already
 *  there, so a view being read or clicked is never swapped under the pointer. */
export function renderErrorView(container, error, handlers) {
  if (!error) {
    if (container.firstChild) container.replaceChildren();
    return;
  }
  let view = container.querySelector(`.error-view[data-error-id="${CSS.escape(error.id)}"]`);
  if (!view) {
    view = element("div", { className: "error-view", attributes: { role: "alert", "data-error-id": error.id, "data-key": `view/${error.id}` } }, [
      element("h3", { className: "view-title" }),
      element("p", { className: "view-detail" }),
      element("p", { className: "view-suggestion muted" }),
      // Its changes are announced politely through the announcer, not as part of the alert.
      element("p", { className: "attempt-note", attributes: { "aria-live": "off" } }),
      element("div", { className: "actions view-actions" }),
      element("p", { className: "busy-note muted", attributes: { "data-busy-for": error.id } }),
      element("div", { className: "view-details" }),
    ]);
    container.replaceChildren(view);
  }
  setText(view.querySelector(".view-title"), error.title);
  setText(view.querySelector(".view-detail"), error.detail);
  setText(view.querySelector(".view-suggestion"), error.suggestion);
  const note = view.querySelector(".attempt-note");
  setText(note, failureText(error));
  note.hidden = !note.textContent;
  replaceIfChanged(view.querySelector(".view-actions"), optionButtons(error, handlers), signatureOf(error));
  replaceIfChanged(view.querySelector(".view-details"), [detailsDisclosure(error)], `${error.id}/${error.debug?.underlying}`);
  refreshButtons();
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** What an error's buttons depend on: they are rebuilt only when this changes. */
export function signatureOf(error) {
  return JSON.stringify([error.id, error.options]);
}

// MARK: The alert dialog

/** Shows `error` in the modal alert (focus moves in, and back when it closes; Escape closes it
 *  through `handlers.onEscape`), or updates it in place when it is showing already. */
export function showAlert(error, handlers) {
  const dialog = $("#alert");
  const fresh = !dialog.open || dialog.dataset.errorId !== error.id;
  if (fresh) dialog.returnFocus = dialog.open ? dialog.returnFocus : document.activeElement;
  dialog.dataset.errorId = error.id;
  setText($("#alert-title"), error.title);
  setText($("#alert-detail"), error.detail);
  setText($("#alert-suggestion"), error.suggestion);
  const note = $("#alert-note");
  setText(note, failureText(error));
  note.hidden = !note.textContent;
  $("#alert-busy").dataset.busyFor = error.id;
  const actions = $("#alert-actions");
  replaceIfChanged(actions, optionButtons(error, handlers), signatureOf(error));
  replaceIfChanged($("#alert-details"), [detailsDisclosure(error)], `${error.id}/${error.debug?.underlying}`);
  // Escape closes the alert and runs nothing: its cancelling option may stop syncing.
  dialog.oncancel = (event) => {
    event.preventDefault();
    // The focus goes where onEscape says (the banner that now shows the error), not back.
    dialog.returnFocus = null;
    handlers.onEscape?.(error);
  };
  dialog.onclose = () => {
    delete dialog.dataset.errorId;
    const back = dialog.returnFocus;
    if (back instanceof HTMLElement && back.isConnected) back.focus();
  };
  refreshButtons();
  if (!dialog.open) dialog.showModal();
  if (fresh) (actions.querySelector('button[data-role="default"]') ?? actions.querySelector("button"))?.focus();
}

export function closeAlert(errorId) {
  const dialog = $("#alert");
  if (dialog.open && (!errorId || dialog.dataset.errorId === errorId)) dialog.close();
}

export function alertShowing() {
  const dialog = $("#alert");
  return dialog.open ? dialog.dataset.errorId : null;
}

// MARK: Asking for a password

/** Asks for the account's password ("Sign in again"); resolves with it, or null when cancelled.
 *  The field is emptied as soon as the answer is taken: the page keeps no copy. */
export function askPassword() {
  return new Promise((resolve) => {
    const dialog = $("#sign-in");
    const field = $("#sign-in-password");
    const returnFocus = document.activeElement;
    let answered = false;
    const finish = (answer) => {
      if (answered) return;
      answered = true;
      field.value = "";
      if (dialog.open) dialog.close();
      if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
      resolve(answer);
    };
    $("#sign-in-form").onsubmit = (event) => {
      event.preventDefault();
      if (field.value) finish(field.value);
    };
    $("#sign-in-cancel").onclick = () => finish(null);
    dialog.oncancel = (event) => { event.preventDefault(); finish(null); };
    field.value = "";
    dialog.showModal();
    field.focus();
  });
}

// MARK: Asking first

/** Asks before an option that costs money or cannot be undone; `option.confirm` is the question
 *  from the server. Resolves true to go ahead. */
export function confirmOption(option) {
  return new Promise((resolve) => {
    const dialog = $("#confirm");
    const returnFocus = document.activeElement;
    $("#confirm-title").textContent = `${option.title}?`;
    $("#confirm-detail").textContent = option.confirm;
    const go = element("button", { text: option.title, attributes: { type: "button", "data-role": "default" } });
    const back = element("button", { text: "Cancel", attributes: { type: "button", "data-role": "cancel" } });
    let answered = false;
    const finish = (answer) => {
      if (answered) return;
      answered = true;
      dialog.close();
      if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
      resolve(answer);
    };
    go.addEventListener("click", () => finish(true));
    back.addEventListener("click", () => finish(false));
    dialog.oncancel = (event) => { event.preventDefault(); finish(false); };
    $("#confirm-actions").replaceChildren(back, go);
    dialog.showModal();
    // It costs money or cannot be undone: the safe answer has the focus, so Enter changes nothing.
    back.focus();
  });
}
