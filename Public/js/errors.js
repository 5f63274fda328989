// Recoverable errors as the page's views: an in-page view (role=alert) in the affected pane, an
// alert as a <dialog> (focus moved in and back, Escape = the cancel option), a banner, or a toast.
// One Idempotency-Key per rendered option, kept while the error is shown, so a double click never
// runs an option twice; buttons are disabled while the attempt runs and show a spinner only after
// 300 ms, then for at least 300 ms.

import { post } from "./api.js";
import { element, toast } from "./view.js";

const keys = new Map(); // `${errorId}/${optionId}` -> Idempotency-Key
const running = new Set(); // error ids with an attempt in flight

function keyFor(error, option) {
  const id = `${error.id}/${option.id}`;
  if (!keys.has(id)) keys.set(id, crypto.randomUUID());
  return keys.get(id);
}

export function forgetKeys(errorId) {
  for (const id of keys.keys()) if (id.startsWith(`${errorId}/`)) keys.delete(id);
}

/** Buttons for an error's options. `onDone(answer)` gets the attempt's answer. */
export function optionButtons(error, { onDone, confirm: confirmCost }) {
  const buttons = error.options.map((option) => {
    const button = element("button", { text: option.title,
      attributes: { type: "button", "data-option": option.id, "data-key": `${error.id}/${option.id}/${error.presentation}` } });
    if (option.role) button.dataset.role = option.role;
    button.addEventListener("click", async () => {
      if (running.has(error.id)) return;
      if (option.confirm && !(await confirmCost(error, option))) return;
      await runAttempt(error, option, buttons, onDone);
    });
    return button;
  });
  return buttons;
}

async function runAttempt(error, option, buttons, onDone) {
  running.add(error.id);
  buttons.forEach((button) => { button.disabled = true; });
  const clicked = buttons.find((button) => button.dataset.option === option.id);
  const label = clicked.textContent;
  let spinnerShownAt = 0;
  const spinnerTimer = setTimeout(() => {
    spinnerShownAt = Date.now();
    clicked.replaceChildren(element("span", { className: "spinner", attributes: { "aria-hidden": "true" } }), label);
    clicked.setAttribute("aria-busy", "true");
  }, 300);
  let answer = null;
  try {
    const { status, body } = await post(`/api/errors/${encodeURIComponent(error.id)}/attempts`, { option: option.id },
      { idempotencyKey: keyFor(error, option) });
    answer = status === 200 ? body : { status: status === 404 ? "gone" : "refused", problem: body };
  } catch {
    answer = { status: "unreachable" };
  }
  clearTimeout(spinnerTimer);
  if (spinnerShownAt) {
    const left = 300 - (Date.now() - spinnerShownAt);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  }
  clicked.textContent = label;
  clicked.removeAttribute("aria-busy");
  buttons.forEach((button) => { button.disabled = false; });
  running.delete(error.id);
  if (answer.status === "unreachable") toast("The dashboard process did not answer.", { detail: "Try again in a moment." });
  onDone(answer);
}

/** An in-page view for a panel that could not do its job. */
export function errorView(error, handlers) {
  return element("div", { className: "error-view", attributes: { role: "alert", "data-error-id": error.id, "data-key": signature(error) } }, [
    element("h3", { text: error.title }),
    element("p", { text: error.detail }),
    element("p", { className: "muted", text: error.suggestion }),
    element("div", { className: "actions" }, optionButtons(error, handlers)),
  ]);
}

/** Shows `error` in the modal alert; Escape runs its cancel option; focus returns afterwards. */
export function showAlert(error, handlers) {
  const dialog = document.querySelector("#alert");
  const returnFocus = document.activeElement;
  dialog.dataset.errorId = error.id;
  dialog.querySelector("#alert-title").textContent = error.title;
  dialog.querySelector("#alert-detail").textContent = error.detail;
  dialog.querySelector("#alert-suggestion").textContent = error.suggestion;
  const buttons = optionButtons(error, handlers);
  dialog.querySelector("#alert-actions").replaceChildren(...buttons);
  dialog.oncancel = (event) => {
    event.preventDefault();
    const cancel = buttons.find((button) => button.dataset.role === "cancel");
    if (cancel) cancel.click(); else closeAlert();
  };
  dialog.onclose = () => { if (returnFocus instanceof HTMLElement) returnFocus.focus(); };
  if (!dialog.open) dialog.showModal();
  (buttons.find((button) => button.dataset.role === "default") ?? buttons[0])?.focus();
}

export function closeAlert(errorId) {
  const dialog = document.querySelector("#alert");
  if (dialog.open && (!errorId || dialog.dataset.errorId === errorId)) dialog.close();
}

/** Asks before an option that costs money. Resolves true to go ahead. */
export function confirmCost(error, option) {
  return new Promise((resolve) => {
    const dialog = document.querySelector("#alert");
    const returnFocus = document.activeElement;
    dialog.dataset.errorId = "";
    dialog.querySelector("#alert-title").textContent = `${option.title}?`;
    dialog.querySelector("#alert-detail").textContent = "This buys more storage from the chat service and may be charged.";
    dialog.querySelector("#alert-suggestion").textContent = "";
    const go = element("button", { text: option.title, attributes: { type: "button", "data-role": "default" } });
    const back = element("button", { text: "Cancel", attributes: { type: "button", "data-role": "cancel" } });
    const finish = (answer) => { dialog.close(); if (returnFocus instanceof HTMLElement) returnFocus.focus(); resolve(answer); };
    go.addEventListener("click", () => finish(true));
    back.addEventListener("click", () => finish(false));
    dialog.oncancel = (event) => { event.preventDefault(); finish(false); };
    dialog.onclose = null;
    dialog.querySelector("#alert-actions").replaceChildren(back, go);
    if (!dialog.open) dialog.showModal();
    go.focus();
  });
}

/** What a rendered error depends on: a view is rebuilt only when this changes. */
export function signature(error) {
  return JSON.stringify([error.id, error.title, error.detail, error.suggestion, error.presentation, error.options]);
}
