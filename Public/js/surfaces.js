// Where each open error is shown, from the page's state: the pane's view, the alert dialog (or a
// quiet note where the person did not act), a toast, or the status bar, whose buttons come from
// here too; and what the page does with an attempt's answer. One place per error: never two.

import { post } from "./api.js";
import { resolvedText } from "./attemptwords.js";
import { formatWhen } from "./dates.js";
import { $, element } from "./dom.js";
import {
  alertIsMine, alertShowing, announce, attemptRunningHere, claimError, closeAlert, detailsDisclosure, failureText, forgetAttempts,
  optionButtons, refreshButtons, renderErrorView, showAlert, signatureOf,
} from "./errors.js";
import { focusFirst, planFocus } from "./focus.js";
import { focusAfter } from "./focusrules.js";
import { problemResolved } from "./history.js";
import { openError } from "./pagestate.js";
import { markIfBusy, withProgress } from "./progress.js";
import { toast } from "./toasts.js";
import { onActorGone } from "./tabs.js";
import { MESSAGE_PROBLEMS, PROBLEM, STORAGE_NEWS_PROBLEMS } from "./vocabulary.js";

let page = null; // { getState, dispatch, render, retryProcess, recheckAccess }

/** `getState()`, `dispatch(action)` and `render()` are app.js's; `retryProcess()` polls again at
 *  once and `recheckAccess()` asks whether the page has access again, each resolving when done. */
export function wireSurfaces(hooks) {
  page = hooks;
}

const handlers = { onDone: attemptDone, onEscape: alertEscaped };

/** What every error's buttons do with their answers, for errors shown elsewhere (an unsent message's). */
export const errorHandlers = handlers;

const shownAs = (state, presentation) => state.errors.filter((error) => error.presentation === presentation);
/** The pane's view: errors shown at a message (an unsent one) have their place in the chat. */
const paneViews = (state) => shownAs(state, "view").filter((error) => !MESSAGE_PROBLEMS.includes(error.type));

// MARK: The status bar's buttons

/** What the status bar shows besides its sentence: its buttons, the note of the last attempt,
 *  the error's Details, and whether the Start/Stop control would repeat one of the error's own. */
export function statusParts(status) {
  const error = status.error;
  if (error && status.errorActions) {
    const buttons = optionButtons(error, handlers, { except: status.except });
    const repeatsToggle = buttons.some((button) => button.textContent === status.toggle?.label);
    return {
      status: repeatsToggle ? { ...status, toggle: null } : status,
      actions: buttons, actionsKey: `${signatureOf(error)}/${status.except.join()}`,
      note: failureText(error), details: detailsDisclosure(error), detailsKey: `${error.id}/${error.debug?.underlying}`, errorId: error.id,
    };
  }
  const actions = status.actions.map(barButton);
  return { status, actions, actionsKey: status.actions.join() };
}

function barButton(kind) {
  const [text, key, action] = {
    "retry-engine": ["Retry now", "retry", () => sendState("/api/engine/retry-now")],
    "retry-process": ["Retry now", "retry-process", () => page.retryProcess()],
    "recheck-access": ["Try again", "recheck-access", () => page.recheckAccess()],
  }[kind];
  const button = element("button", { text, attributes: { type: "button", "data-role": "default", "data-key": key } });
  button.addEventListener("click", () => withProgress(button, action));
  return markIfBusy(button);
}

/** Posts a state change; when the process does not answer, says so and checks at once. */
export async function sendState(path, body = {}) {
  try {
    return await post(path, body);
  } catch {
    processDidNotAnswer();
    return null;
  }
}

export function processDidNotAnswer() {
  toast("The dashboard process did not answer.", { detail: "Nothing was changed. Buttons that need it stay off until it answers again.", key: "no-answer" });
  page.retryProcess();
}

// MARK: Views, dialogs, toasts

const toasted = new Set();

/** Shows every open error where its presentation says, once. */
export function renderErrors(state) {
  renderErrorView($('[data-view-for="primary"]'), paneViews(state).at(-1), handlers);
  const alerts = shownAs(state, "alert").filter((error) => state.placements[error.id] === "dialog");
  const showing = alertShowing();
  if (alerts.length && !$("#confirm").open) {
    showAlert(alerts.find((error) => error.id === showing) ?? alerts.at(-1), handlers);
  } else if (!alerts.length && showing) {
    closeAlert();
  }
  for (const error of shownAs(state, "toast")) {
    if (toasted.has(error.id)) continue;
    toasted.add(error.id);
    toast(error.title, { detail: error.detail, actions: optionButtons(error, handlers) });
  }
  refreshButtons();
}

/** An error opened or changed: an alert is placed here as a dialog or a quiet note, once. */
export function errorRaised(error) {
  const state = page.getState();
  if (error.lastAttempt && error.lastAttempt.at !== state.errors.find((open) => open.id === error.id)?.lastAttempt?.at) {
    announce(failureText(error));
  }
  if (error.presentation !== "alert" || state.placements[error.id]) return;
  const placement = alertIsMine(error) ? "dialog" : "note";
  page.dispatch({ type: "placed", id: error.id, placement });
  if (placement === "note") quietNote(error);
}

/** The window where the person acted closed: an alert noted here because they were there opens
 *  here now, if the rules say it is this window's (tabs.js `placeAlert`). */
function replaceNotes() {
  const state = page.getState();
  let moved = false;
  for (const error of state.errors) {
    if (error.presentation !== "alert" || state.placements[error.id] !== "note" || !alertIsMine(error)) continue;
    $(`.toast[data-key="${CSS.escape(`note/${error.id}`)}"]`)?.remove();
    page.dispatch({ type: "placed", id: error.id, placement: "dialog" });
    moved = true;
  }
  if (moved) page.render();
}
onActorGone(replaceNotes);

/** An alert caused by what someone did in another window: a note here, with a way to see it. */
function quietNote(error) {
  const show = element("button", { text: "Show", attributes: { type: "button" } });
  const note = toast(`In another window: ${error.title}`, { detail: error.detail, actions: [show], seconds: 12, key: `note/${error.id}` });
  show.addEventListener("click", () => {
    note.remove();
    if (!page.getState().errors.some((open) => open.id === error.id)) return;
    page.dispatch({ type: "placed", id: error.id, placement: "dialog" });
    page.render();
  });
}

/** An error closed (here or elsewhere): its dialog, note and buttons go. `resolved` is the
 *  feed's `error.resolved` data (what closed it), `error` the error as this window knew it. */
export function errorResolved(resolved, error, wasShowing) {
  const id = resolved.id;
  $(`.toast[data-key="${CSS.escape(`note/${id}`)}"]`)?.remove();
  forgetAttempts(id);
  closeAlert(id);
  problemResolved(id);
  if (wasShowing && !attemptRunningHere(id)) toast(resolvedText(resolved, error), { seconds: 6 });
}

/** Escape on an alert closes it and nothing more: the error goes on in the status bar, with its
 *  options, where the focus goes too. */
function alertEscaped(error) {
  page.dispatch({ type: "placed", id: error.id, placement: "banner" });
  closeAlert(error.id);
  page.render();
  // After the dialog's own focus return (to what had the focus when it opened).
  focusFirst(focusAfter("escape"));
}

// MARK: Answers

/** What an attempt in this window answered. */
function attemptDone(error, option, answer) {
  switch (answer.status) {
    case "recovered":
      // The error leaving the page shows it; what the option did is worth saying.
      if (answer.summary) tellStorageNews(error.type, answer.summary);
      announce(answer.summary ?? `${option.title} worked.`);
      break;
    case "dismissed":
      // Done as asked (Not now, Stop syncing): not a failure. A kept error shows in its new form.
      page.dispatch({ type: "attempt-answer", error: answer.error });
      announce(answer.summary ?? `${option.title}: done.`);
      break;
    case "failed":
      if (answer.error && !page.getState().resolved.includes(answer.error.id)) {
        page.dispatch({ type: "attempt-answer", error: answer.error });
        // Where an alert shows was decided when it was raised (the feed tells before the answer
        // comes): the person may have acted in another window since. Only one not seen yet is ours.
        if (answer.error.presentation === "alert" && !page.getState().placements[answer.error.id]) {
          claimError(answer.error.id);
          page.dispatch({ type: "placed", id: answer.error.id, placement: "dialog" });
        }
      }
      if (option.role !== "cancel" && answer.error?.lastAttempt) announce(failureText(answer.error));
      break;
    case "gone":
      toast("That problem was already dealt with.", { seconds: 4 });
      break;
    case "busy":
      toast("Another attempt on this problem is still running.", { detail: "Its outcome shows here when it ends.", seconds: 5 });
      break;
    case "unreachable":
      processDidNotAnswer();
      break;
    default:
      toast("The dashboard refused that.", { detail: answer.problem?.detail ?? "" });
  }
  planFocus(focusAfter("attempt", { status: answer.status, errorType: error.type, optionRole: option.role, kept: Boolean(answer.error) }));
  page.render();
}

/** What Free space or a purchase did, said in the storage card and a toast, in every window. */
export function tellStorageNews(errorType, summary) {
  if (!STORAGE_NEWS_PROBLEMS.includes(errorType)) return;
  toast(summary, { seconds: 12, key: "storage-news" });
  const news = $("#storage-news");
  news.textContent = `${summary} (${formatWhen(Date.now())})`;
  news.hidden = false;
}

/** The out-of-space error, if open (the storage card's figures agree with it). */
export function outOfSpace(state) {
  return openError(state, PROBLEM.outOfSpace);
}
