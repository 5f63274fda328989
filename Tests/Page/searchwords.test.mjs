// The search card's words about its results.
import assert from "node:assert/strict";
import { test } from "node:test";
import { countWords, rankingNote } from "../../Public/js/searchwords.js";

test("the count says how many matched, exactly or as a lower bound", () => {
  assert.equal(countWords(0, { total: 0, totalIsExact: true }), "No stored message matches.");
  assert.equal(countWords(1, { total: 1, totalIsExact: true }), "1 match.");
  assert.equal(countWords(20, { total: 1234, totalIsExact: true }), "The best 20 of 1,234 matches.");
  assert.equal(countWords(20, { total: 1000, totalIsExact: false }), "The best 20 of more than 1,000 matches.");
});

test("a word being typed ranked among its newest matches is said, with how to rank them all", () => {
  assert.equal(rankingNote({ rankedAmongNewest: 2000 }), " Ranked among the newest 2,000: end the word with a space to rank them all.");
  assert.equal(rankingNote({ rankedAmongNewest: null }), "", "every match ranked: nothing to say");
  assert.equal(rankingNote({}), "", "an answer without the field says nothing either");
});
