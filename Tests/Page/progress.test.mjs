// How long a retry's progress lasts (Public/js/progress.js), with Node's own test runner.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FLOOR_MS, progressLeft, SPINNER_AFTER_MS, SPINNER_AT_LEAST_MS } from "../../Public/js/progress.js";

test("a retry that fails at once still shows progress for the floor", () => {
  assert.equal(FLOOR_MS, 400);
  assert.equal(progressLeft(0), 400);
  assert.equal(progressLeft(30), 370);
  assert.equal(progressLeft(400), 0);
  assert.equal(progressLeft(2000), 0, "a slow retry is not made slower");
});

test("a spinner that appeared stays long enough to be seen", () => {
  assert.equal(SPINNER_AFTER_MS, 300);
  assert.equal(progressLeft(310, 300), SPINNER_AT_LEAST_MS - 10, "shown at 300 ms, so it stays until 600 ms");
  assert.equal(progressLeft(700, 300), 0);
  assert.equal(progressLeft(350, null), 50, "no spinner yet: only the floor");
});
