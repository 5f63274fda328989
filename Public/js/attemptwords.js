// What a failed attempt left to say, in words every surface of an error shows. Pure: the
// moment "now" comes in, so the node tests need no clock.

import { whenPhrase } from "./dates.js";

/** "Try again didn't help (just now): <reason>" after one failed try; after more tries of the
 *  same option, "Try again didn't help (3 tries, the last just now): <reason>", so a second
 *  failed click never reads like the first. Nothing before the first failed attempt. */
export function failureText(error, now = new Date()) {
  const last = error?.lastAttempt;
  if (!last) return "";
  const when = whenPhrase(last.at, now);
  const tries = Number.isInteger(last.tries) && last.tries > 1 ? `${last.tries} tries, the last ${when}` : when;
  return `${last.title} didn't help (${tries}): ${last.reason}`;
}

/** What a window that was showing an error's alert says when the error closes without an
 *  attempt of its own: who or what closed it, as the feed's `error.resolved` tells (`by`:
 *  `attempt` with the option chosen, `action` for a Delete outside the error, `engine` when the
 *  situation changed by itself). Only an attempt earns "in another window"; `error` is the one
 *  that closed (its title and options), if this window still knows it. */
export function resolvedText(resolved, error) {
  const title = error?.title ? `“${error.title}”` : "That problem";
  switch (resolved?.by) {
    case "attempt": {
      const option = error?.options?.find((candidate) => candidate.id === resolved.option);
      return option ? `${title} was dealt with in another window (${option.title}).` : `${title} was dealt with in another window.`;
    }
    case "action":
      return `${title} is closed: what it was about was deleted.`;
    case "engine":
      return `${title} has cleared up by itself.`;
    default:
      return `${title} is closed.`;
  }
}
