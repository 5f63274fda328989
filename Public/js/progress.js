// Progress on the page's own retries (the first load's Try again, Retry now, scroll-back and chat
// loads, search): the control is busy at once, a spinner shows after 300 ms and then stays at
// least 300 ms, and the whole lasts at least 400 ms, so a retry that fails at once is seen to have
// run, as recovery attempts are (the server keeps them 400 ms at least).

export const FLOOR_MS = 400;
export const SPINNER_AFTER_MS = 300;
export const SPINNER_AT_LEAST_MS = 300;

/** How much longer progress shows after work that ended `elapsed` ms after it began, with the
 *  spinner shown `spinnerAt` ms after the beginning (null: it never showed). */
export function progressLeft(elapsed, spinnerAt = null) {
  const floor = FLOOR_MS - elapsed;
  const spinner = spinnerAt == null ? 0 : spinnerAt + SPINNER_AT_LEAST_MS - elapsed;
  return Math.max(0, floor, spinner);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Keys (`data-key`) of the controls whose work runs now, with whether the spinner shows: a
 *  control rebuilt meanwhile (a re-render) comes back busy too (`markIfBusy`). */
const busy = new Map();

/** Makes `button` look as its work stands: off and busy (with the spinner once due), or itself. */
export function markIfBusy(button) {
  const state = button?.dataset?.key ? busy.get(button.dataset.key) : undefined;
  if (state) {
    button.setAttribute("aria-disabled", "true");
    button.setAttribute("aria-busy", "true");
  } else {
    button.removeAttribute("aria-busy");
  }
  const spinner = button?.querySelector?.(".spinner");
  if (state?.spinner && !spinner) {
    const node = document.createElement("span");
    node.className = "spinner";
    node.setAttribute("aria-hidden", "true");
    button.prepend(node);
  } else if (!state?.spinner && spinner) {
    spinner.remove();
  }
  return button;
}

function refresh(key, button) {
  const all = key ? [...document.querySelectorAll(`[data-key="${CSS.escape(key)}"]`)] : [];
  if (button && !all.includes(button)) all.push(button);
  all.forEach(markIfBusy);
}

/** Runs `work()` with `button` (a control with a `data-key`, or none) showing progress; settles as
 *  `work` does, once the progress has lasted long enough. A control already busy runs nothing. */
export async function withProgress(button, work) {
  const key = button?.dataset?.key || `progress-${Math.random()}`;
  if (button) button.dataset.key = key;
  if (busy.has(key)) return undefined;
  const began = Date.now();
  let spinnerAt = null;
  busy.set(key, { spinner: false });
  refresh(key, button);
  const timer = setTimeout(() => {
    spinnerAt = Date.now() - began;
    busy.set(key, { spinner: true });
    refresh(key, button);
  }, SPINNER_AFTER_MS);
  try {
    return await work();
  } finally {
    clearTimeout(timer);
    const left = progressLeft(Date.now() - began, spinnerAt);
    if (left > 0) await sleep(left);
    busy.delete(key);
    for (const node of new Set([...document.querySelectorAll(`[data-key="${CSS.escape(key)}"]`), button])) {
      if (!node) continue;
      node.removeAttribute("aria-disabled");
      markIfBusy(node);
    }
    // Whoever turns controls off for other reasons (the process not answering) says so again.
    document.dispatchEvent(new Event("lp-progress-ended"));
  }
}

/** Waits out what is left of the floor for work that began at `began` (Date.now()) and failed:
 *  for a failure shown in words rather than on a button (search). */
export async function atLeastFloor(began) {
  const left = progressLeft(Date.now() - began);
  if (left > 0) await sleep(left);
}
