// The words a failed attempt leaves on its error: each failed try changes them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { failureText } from "../../Public/js/attemptwords.js";

const now = new Date("2026-12-06T12:00:00Z");
const failed = (tries, at = "2026-12-06T11:59:50Z") =>
  ({ lastAttempt: { title: "Try again", reason: "The server did not answer.", at, tries } });

test("nothing is said before the first failed attempt", () => {
  assert.equal(failureText({}, now), "");
  assert.equal(failureText(undefined, now), "");
});

test("one failed try says what was tried, when, and why it failed", () => {
  assert.equal(failureText(failed(1), now), "Try again didn't help (just now): The server did not answer.");
});

test("a second failed try within the same minute reads differently from the first", () => {
  const first = failureText(failed(1), now);
  const second = failureText(failed(2, "2026-12-06T11:59:58Z"), now);
  assert.notEqual(second, first);
  assert.equal(second, "Try again didn't help (2 tries, the last just now): The server did not answer.");
});

test("the count grows with each try and the time says when the last one was", () => {
  assert.equal(failureText(failed(3, "2026-12-06T11:55:00Z"), now), "Try again didn't help (3 tries, the last 5 min ago): The server did not answer.");
});

test("an answer without a count (an older server) still reads as one try", () => {
  assert.equal(failureText({ lastAttempt: { title: "Free space", reason: "Nothing to free.", at: "2026-12-06T11:59:59Z" } }, now),
    "Free space didn't help (just now): Nothing to free.");
});

import { resolvedText } from "../../Public/js/attemptwords.js";

const denied = { title: "The chat server won't let this dashboard in", options: [{ id: "try-again", title: "Try again" }, { id: "stop-syncing", title: "Stop syncing" }] };

test("an error closed by an option chosen in another window names that option", () => {
  assert.equal(resolvedText({ by: "attempt", option: "try-again" }, denied),
    "“The chat server won't let this dashboard in” was dealt with in another window (Try again).");
});

test("an error the engine closed gives nobody credit", () => {
  const said = resolvedText({ by: "engine" }, denied);
  assert.equal(said, "“The chat server won't let this dashboard in” has cleared up by itself.");
  assert.doesNotMatch(said, /another window/);
});

test("an error closed by a Delete says what it was about went", () => {
  assert.equal(resolvedText({ by: "action" }, { title: "Message not sent" }), "“Message not sent” is closed: what it was about was deleted.");
});

test("without the error's words it still says what closed it", () => {
  assert.equal(resolvedText({ by: "attempt", option: "free-space" }, undefined), "That problem was dealt with in another window.");
  assert.equal(resolvedText({ by: "engine" }, undefined), "That problem has cleared up by itself.");
  assert.equal(resolvedText({}, undefined), "That problem is closed.");
});
