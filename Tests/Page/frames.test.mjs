// Drawing once per frame (Public/js/dom.js `oncePerFrame`), with a stand-in for the browser's
// frames: a queue of animation-frame callbacks the test runs when it says a frame comes.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { oncePerFrame } from "../../Public/js/dom.js";

let frames = [];
const nextFrame = () => {
  const due = frames;
  frames = [];
  due.forEach((callback) => callback(0));
};

beforeEach(() => {
  frames = [];
  globalThis.document = { hidden: false };
  globalThis.requestAnimationFrame = (callback) => frames.push(callback);
});

test("asked three times before a frame, it draws once, in that frame", () => {
  let draws = 0;
  const soon = oncePerFrame(() => { draws += 1; });
  soon(); soon(); soon();
  assert.equal(draws, 0);
  nextFrame();
  assert.equal(draws, 1);
  nextFrame();
  assert.equal(draws, 1);
});

test("asked again after its frame, it draws again in the next one", () => {
  let draws = 0;
  const soon = oncePerFrame(() => { draws += 1; });
  soon();
  nextFrame();
  soon();
  assert.equal(draws, 1);
  nextFrame();
  assert.equal(draws, 2);
});

test("in a hidden tab, which draws no frames, it draws at once, every time", () => {
  let draws = 0;
  const soon = oncePerFrame(() => { draws += 1; });
  document.hidden = true;
  soon(); soon();
  assert.equal(draws, 2);
  assert.equal(frames.length, 0);
});
