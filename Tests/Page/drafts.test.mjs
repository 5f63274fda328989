// What a chat's message box holds and what waits for the dashboard (Public/js/drafts.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  draftFrom, draftKey, draftStore, emptyDraft, isEmptyDraft, notTakenNote, requestKeyFor, withEdited, withoutUnsent, withSent, withTyped,
} from "../../Public/js/drafts.js";

const sent = (text, requestKey) => ({ text, requestKey, createdAt: "2026-12-06T09:00:00.000Z" });

test("text typed while an earlier message waits for its answer is kept beside it, neither replacing the other", () => {
  let draft = withTyped(emptyDraft(), "A");
  draft = withSent(draft, sent("A", "kA"));
  assert.equal(draft.text, "", "the box is free for the next message");
  draft = withTyped(draft, "B");
  assert.deepEqual(draft.unsent.map((item) => item.text), ["A"], "A still waits");
  assert.equal(draft.text, "B");
  assert.deepEqual(withoutUnsent(draft, "kA"), { text: "B", requestKey: null, unsent: [] }, "taken: only B is left");
});

test("editing a message that was not taken puts it back before what was typed since, and alone it keeps its key", () => {
  const waiting = withSent(emptyDraft(), sent("A", "kA"));
  const withB = withTyped(waiting, "B");
  assert.deepEqual(withEdited(withB, "kA"), { text: "A\nB", requestKey: null, unsent: [] }, "both texts, in the order written; a new message");
  const alone = withEdited(waiting, "kA");
  assert.deepEqual(alone, { text: "A", requestKey: "kA", unsent: [] });
  let made = 0;
  assert.equal(requestKeyFor(alone, "A", () => `new${++made}`), "kA", "sent unchanged: the same key, so it is kept once");
  assert.equal(requestKeyFor(withTyped(alone, "A!"), "A!", () => `new${++made}`), "new1", "changed: another message");
  assert.equal(withEdited(withB, "unknown"), withB);
});

test("a message is waiting once however often it is sent", () => {
  const once = withSent(emptyDraft(), sent("A", "kA"));
  assert.deepEqual(withSent(once, sent("A", "kA")).unsent.length, 1);
});

test("a stored draft is read back, an old or broken one as far as it can be", () => {
  assert.deepEqual(draftFrom(null), emptyDraft());
  assert.deepEqual(draftFrom({ text: "hi", requestKey: "k0" }), { text: "hi", requestKey: "k0", unsent: [] }, "the shape before anything waited");
  assert.deepEqual(draftFrom({ text: 3, unsent: [{ requestKey: "k", text: "" }, { requestKey: "k2", text: "x" }, null] }),
    { text: "", requestKey: null, unsent: [{ requestKey: "k2", text: "x" }] });
  assert.ok(isEmptyDraft(draftFrom({ text: "" })));
  assert.ok(!isEmptyDraft(withSent(emptyDraft(), sent("A", "kA"))), "a waiting message is worth keeping with an empty box");
});

test("the store keeps a draft until nothing is left in it, and a storage that throws loses nothing else", () => {
  const items = new Map();
  const storage = { getItem: (key) => items.get(key) ?? null, setItem: (key, value) => items.set(key, value), removeItem: (key) => items.delete(key) };
  const drafts = draftStore(() => storage);
  drafts.write("linked", 4, withSent(emptyDraft(), sent("A", "kA")));
  assert.deepEqual(drafts.read("linked", 4).unsent.map((item) => item.text), ["A"]);
  assert.ok(items.has(draftKey("linked", 4)));
  assert.equal(draftKey("linked", 4), "draft/linked/4");
  drafts.write("linked", 4, emptyDraft());
  assert.equal(items.size, 0);
  const off = draftStore(() => { throw new Error("SecurityError"); });
  assert.deepEqual(off.read("primary", 1), emptyDraft());
  off.write("primary", 1, withTyped(emptyDraft(), "x"));
});

test("the note beside the box says where the message is and what can be done", () => {
  assert.equal(notTakenNote("The dashboard process does not answer. Is it still running?"),
    "Not sent: The dashboard process does not answer. Is it still running? It is kept below, with Try again, Edit and Delete.");
});
