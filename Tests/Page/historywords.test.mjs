// The words for fetching older history (Public/js/historywords.js), with Node's own test runner.
import assert from "node:assert/strict";
import { test } from "node:test";
import { historyWords } from "../../Public/js/historywords.js";

test("while history is fetched, how much so far and how many rooms are left", () => {
  assert.equal(historyWords({ complete: false, roomsPending: 3, fetched: 12400 }), "Fetching older history: 12,400 messages so far, 3 rooms left.");
  assert.equal(historyWords({ complete: false, roomsPending: 1, fetched: 1 }), "Fetching older history: 1 message so far, 1 room left.");
  assert.equal(historyWords({ complete: false, roomsPending: 2, fetched: 0 }), "Fetching older history: 2 rooms left.");
});

test("quiet when done, or when there is no history to fetch", () => {
  assert.equal(historyWords({ complete: true, roomsPending: 0, fetched: 4500 }), "");
  assert.equal(historyWords(null), "");
  assert.equal(historyWords(undefined), "");
});
