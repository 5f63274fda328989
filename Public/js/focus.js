// Where the focus goes, in the DOM: the places focusrules.js names, and the watch that puts the
// focus somewhere useful when a render takes away the control that had it (never the body).

import { $ } from "./dom.js";

const places = {
  status: () => $("#banner-text"),
  storage: () => $("#storage-title"),
  "banner-default": () => $('#banner-actions [data-role="default"]'),
  "banner-any": () => $("#banner-actions button"),
  "view-default": () => $('[data-view-for="primary"] button[data-role="default"]'),
  "pane-title": (account = "primary") => $(`#pane-${account}-title`),
  "start-of-history": (account = "primary") => $(`[data-start-for="${account}"]`),
};

const shown = (node) => Boolean(node && node.isConnected && node.getClientRects().length);

/** Focuses the first of `names` (focusrules.js places) that is shown; returns it, or null. */
export function focusFirst(names, account) {
  for (const name of names) {
    const node = places[name]?.(account);
    if (shown(node)) {
      node.focus();
      return node;
    }
  }
  return null;
}

let plan = null; // the places to go to when the focused control goes away with the next render
let lastFocused = null;

/** The focus goes to the first of `names` once the control that has it goes away. */
export function planFocus(names) {
  plan = names;
}

/** Puts the focus where the plan says when the control that had it went away (a render removed
 *  or hid it, a dialog closed), or on the next useful control when nothing says. `busy()`: an
 *  attempt of this window is ending, and where the focus goes depends on its answer. */
export function restoreFocus(busy = () => false) {
  const active = document.activeElement;
  if (active && active !== document.body && shown(active)) return;
  const lost = lastFocused && !shown(lastFocused);
  if (!plan && !lost) return;
  if (!plan && busy()) return;
  if (focusFirst(plan ?? ["banner-default", "view-default", "pane-title"])) plan = null;
}

/** Watches the focus, so that a render that takes it away can put it somewhere useful; what the
 *  person does next replaces any plan for it. */
export function watchFocus(busy) {
  document.addEventListener("focusin", (event) => { lastFocused = event.target; });
  // A dialog closing or a control hidden under the focus moves it to the body without a render.
  document.addEventListener("focusout", (event) => {
    if (!event.relatedTarget) queueMicrotask(() => restoreFocus(busy));
  });
  for (const type of ["pointerdown", "keydown"]) {
    document.addEventListener(type, () => { plan = null; }, { capture: true });
  }
}
