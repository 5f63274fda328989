// The first load's two requests, the session and the snapshot, sent as soon as this module
// arrives (index.html runs it on its own, async, before app.js): they travel while the rest of
// the page's modules arrive and run, instead of after them. Both go out together; neither needs
// the other.

import { getJSON, loadSession } from "./api.js";
import { exactTime } from "./dates.js";

/** A request's outcome, kept without an unhandled rejection until the page asks for it. */
const settled = (promise) => promise.then((value) => ({ value }), (failure) => ({ failure }));

const request = () => [settled(loadSession()), settled(getJSON("/api/state"))];

let early = request();

// The page's first date formatter costs ICU milliseconds (the locale's date patterns); made while
// the page waits for the answers and its other modules, the rows do not wait for it.
exactTime(Date.now());

/** The session and the snapshot: the answers already under way the first time, fresh requests
 *  after that (Try again). A failed session is the failure told, as it is the first one needed. */
export async function sessionAndSnapshot() {
  const pending = early ?? request();
  early = null;
  const [session, snapshot] = await Promise.all(pending);
  if (session.failure) throw session.failure;
  if (snapshot.failure) throw snapshot.failure;
  return { session: session.value, snapshot: snapshot.value };
}
