// The page's smaller rules: dates (one style), notices for new messages, focus after an action.
import assert from "node:assert/strict";
import { test } from "node:test";
import { dayHeading, formatWhen, whenPhrase } from "../../Public/js/dates.js";
import { focusAfter } from "../../Public/js/focusrules.js";
import { awayNotice, messageNotice, newsIn, quoteOf } from "../../Public/js/notices.js";

const now = new Date(2026, 10, 28, 15, 30, 0);
const at = (days, hours, minutes) => new Date(2026, 10, 28 + days, hours, minutes, 0);

test("one date style: relative within the hour, the time today, then yesterday, then the day", () => {
  assert.equal(formatWhen(new Date(now.getTime() - 20_000), now), "just now");
  assert.equal(formatWhen(new Date(now.getTime() - 5 * 60_000), now), "5 min ago");
  assert.equal(formatWhen(at(0, 9, 5), now, "en-GB"), "09:05");
  assert.equal(formatWhen(at(-1, 22, 15), now, "en-GB"), "Yesterday 22:15");
  assert.equal(formatWhen(at(-3, 8, 0), now, "en-GB"), "25 Nov 08:00");
  assert.equal(formatWhen(new Date(2025, 0, 2, 8, 0), now, "en-GB"), "2 Jan 2025 08:00");
  assert.equal(formatWhen("not a date", now), "");
  assert.equal(whenPhrase(at(0, 9, 5), now, "en-GB"), "at 09:05");
  assert.equal(whenPhrase(new Date(now.getTime() - 5 * 60_000), now), "5 min ago");
  assert.equal(whenPhrase(at(-3, 8, 0), now, "en-GB"), "on 25 Nov 08:00");
  assert.equal(dayHeading(at(0, 1, 0), now), "Today");
  assert.equal(dayHeading(at(-1, 1, 0), now), "Yesterday");
});

test("no notice for messages in view; one summary for an interruption; a toast otherwise", () => {
  const last = { sender: "Mum", text: "Dinner?" };
  assert.deepEqual(messageNotice({ count: 3, last, caughtUp: false, inView: true }), { kind: "none" });
  assert.deepEqual(messageNotice({ count: 1, last, caughtUp: false, inView: false }), { kind: "live", text: "New message from Mum", quote: "Dinner?" });
  assert.equal(messageNotice({ count: 4, last, caughtUp: false, inView: false }).text, "4 new messages");
  assert.equal(messageNotice({ count: 40, last, caughtUp: true, inView: true }).text, "40 messages arrived while syncing was interrupted");
  assert.equal(messageNotice({ count: 0, last, caughtUp: true, inView: false }).kind, "none");
  assert.equal(awayNotice({ count: 2, last }).text, "2 new messages while you were away");
  assert.equal(awayNotice({ count: 0, last }).kind, "none");
  assert.equal(quoteOf({ text: "x".repeat(200) }).length, 161);
});

test("the focus never lands on the control that undoes what was just done", () => {
  assert.deepEqual(focusAfter("start"), ["status"]);
  assert.deepEqual(focusAfter("stop"), ["status"]);
  assert.deepEqual(focusAfter("attempt", { status: "dismissed", optionRole: "cancel", errorType: "/problems/upstream-error" }), ["status"],
    "Stop syncing: not Start syncing beside it");
  assert.deepEqual(focusAfter("attempt", { status: "dismissed", optionRole: "cancel", errorType: "/problems/out-of-space", kept: true }),
    ["banner-default", "status"], "Not now: the next way out");
  assert.deepEqual(focusAfter("attempt", { status: "recovered", errorType: "/problems/out-of-space" }), ["storage", "status"]);
  assert.deepEqual(focusAfter("attempt", { status: "failed", errorType: "/problems/upstream-error" }), ["banner-default", "view-default", "pane-title"]);
  assert.deepEqual(focusAfter("escape"), ["banner-default", "banner-any", "status"]);
});

test("news is what was not shown, not written here, and not kept quiet by the account's own rules", () => {
  const shown = new Set([1]);
  const batch = [
    { id: 1, text: "shown already" },
    { id: 2, text: "written here", outboxId: 7 },
    { id: 3, text: "a muted room", attention: "quiet" },
    { id: 4, text: "told", attention: "notify" },
    { id: 5, text: "a mention", attention: "mention" },
    { id: 6, text: "no rules upstream" },
  ];
  assert.deepEqual(newsIn(batch, (id) => shown.has(id)).map((message) => message.id), [4, 5, 6]);
});
