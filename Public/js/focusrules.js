// Where the focus goes after the person did something and the control they used went away or
// now does the opposite, as a plain function of what was done and how it ended. The answer names
// a place (app.js finds it); never the control that would undo what was just done.

import { STORAGE_PROBLEMS } from "./vocabulary.js";

/**
 * @param {string} action "start" | "stop" | "attempt" | "escape" | "load-older-done"
 * @param {object} [outcome] for an attempt: `{ status, errorType, optionRole, kept }` (`kept`: the
 *   error stays open, in another place)
 * @returns {string[]} places to try in order: "status", "storage", "banner-default",
 *   "banner-any", "view-default", "pane-title", "start-of-history"
 */
export function focusAfter(action, outcome = {}) {
  switch (action) {
    case "start":
    case "stop":
      // The one toggle now says the opposite: the status it changed takes the focus instead.
      return ["status"];
    case "escape":
      return ["banner-default", "banner-any", "status"];
    case "attempt": {
      const storage = STORAGE_PROBLEMS.includes(outcome.errorType);
      if (outcome.status === "recovered" && storage) return ["storage", "status"];
      if (outcome.optionRole === "cancel") {
        // Not now kept the error in the bar: its next way out. Stop syncing closed it: the
        // status says what happened (Start syncing, beside it, would undo it).
        return outcome.kept ? ["banner-default", "status"] : ["status"];
      }
      return ["banner-default", "view-default", "pane-title"];
    }
    case "load-older-done":
      return ["start-of-history", "pane-title"];
    default:
      return ["pane-title"];
  }
}
