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
