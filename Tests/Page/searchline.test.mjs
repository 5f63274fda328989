// The search box's line to the server: a keystroke searches at once, one request at a time, and
// what is typed meanwhile goes as one search, the newest text, when the answer comes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { answered, idleLine, typed } from "../../Public/js/searchline.js";

test("a keystroke with nothing running searches at once", () => {
  const { line, send } = typed(idleLine, "h");
  assert.equal(send, "h");
  assert.deepEqual(line, { inFlight: true, waiting: null });
});

test("keystrokes while a search runs wait, and only the newest goes when it is answered", () => {
  let step = typed(idleLine, "h");
  step = typed(step.line, "he");
  assert.equal(step.send, null, "no second request while one runs");
  step = typed(step.line, "hel");
  assert.equal(step.send, null);
  step = answered(step.line);
  assert.equal(step.send, "hel", "the newest text, the one in between skipped");
  assert.deepEqual(step.line, { inFlight: true, waiting: null });
  step = answered(step.line);
  assert.equal(step.send, null);
  assert.deepEqual(step.line, idleLine, "nothing waits: the line is idle again");
});

test("an answer with nothing waiting leaves the line idle, and the next keystroke searches at once", () => {
  let step = answered(typed(idleLine, "a").line);
  assert.deepEqual(step.line, idleLine);
  step = typed(step.line, "ab");
  assert.equal(step.send, "ab");
});

test("text erased while a search runs goes too, so the results are cleared by the newest text", () => {
  let step = typed(idleLine, "x");
  step = typed(step.line, "");
  step = answered(step.line);
  assert.equal(step.send, "");
});
