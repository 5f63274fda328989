// What one chat's message box holds, and what was sent from it that the dashboard has not taken
// yet: a plain value, kept in sessionStorage so a reload or a closed chat loses none of it. The
// box may hold new text while an earlier message waits for its answer; each keeps its own words
// and request key, so nothing typed is dropped and a message sent again is kept once. No DOM:
// tested under node --test.

/** A draft with nothing in it: an empty box, nothing waiting. */
export function emptyDraft() {
  return { text: "", requestKey: null, unsent: [] };
}

/** A draft as stored (JSON, or null); what cannot be read is an empty draft. */
export function draftFrom(stored) {
  if (stored == null || typeof stored !== "object") return emptyDraft();
  const text = typeof stored.text === "string" ? stored.text : "";
  const requestKey = typeof stored.requestKey === "string" && text !== "" ? stored.requestKey : null;
  const unsent = Array.isArray(stored.unsent) ? stored.unsent.filter(isUnsent) : [];
  return { text, requestKey, unsent };
}

/** Whether the draft holds nothing worth keeping. */
export function isEmptyDraft(draft) {
  return draft.text === "" && draft.unsent.length === 0;
}

/** The person typed: the box holds `text`; a request key stays only with the very text it was for. */
export function withTyped(draft, text) {
  return { ...draft, text, requestKey: text === draft.text ? draft.requestKey : null };
}

/** The box was sent: it is empty again, and the message waits for the dashboard's answer. */
export function withSent(draft, { requestKey, text, createdAt }) {
  const unsent = draft.unsent.some((item) => item.requestKey === requestKey) ? draft.unsent : [...draft.unsent, { requestKey, text, createdAt }];
  return { text: "", requestKey: null, unsent };
}

/** The dashboard took the message (or the person deleted it here): it no longer waits. */
export function withoutUnsent(draft, requestKey) {
  return { ...draft, unsent: draft.unsent.filter((item) => item.requestKey !== requestKey) };
}

/**
 * The person chose to edit a message the dashboard did not take: its text goes back in the box,
 * before what was typed since (so the two read in the order they were written). Alone in the box
 * it keeps its request key, so sending it unchanged cannot keep it twice.
 */
export function withEdited(draft, requestKey) {
  const item = draft.unsent.find((unsent) => unsent.requestKey === requestKey);
  if (!item) return draft;
  const rest = draft.unsent.filter((unsent) => unsent !== item);
  if (draft.text.trim() === "") return { text: item.text, requestKey: item.requestKey, unsent: rest };
  return { text: `${item.text}\n${draft.text}`, requestKey: null, unsent: rest };
}

/**
 * The request key to send `text` under: the draft's own when this very text was sent before and
 * its answer never came (so the dashboard keeps it once), a new one otherwise.
 */
export function requestKeyFor(draft, text, makeKey) {
  return draft.text === text && typeof draft.requestKey === "string" ? draft.requestKey : makeKey();
}

/** What the person is told beside the box when the dashboard did not take a message. */
export function notTakenNote(reason) {
  return `Not sent: ${reason} It is kept below, with Try again, Edit and Delete.`;
}

/** Why a message read back from an earlier page is waiting: that page never heard an answer. */
export const UNANSWERED_BEFORE_RELOAD = "The page was closed before the dashboard answered, so it may not have it.";

/** The sessionStorage key of a chat's draft. */
export function draftKey(account, chatId) {
  return `draft/${account}/${chatId}`;
}

/** Reads and writes drafts in the storage `storage()` gives (sessionStorage on the page, which
 *  throws when it is off); a full or disabled storage only costs what a reload would bring back. */
export function draftStore(storage) {
  return {
    read(account, chatId) {
      try {
        return draftFrom(JSON.parse(storage().getItem(draftKey(account, chatId)) ?? "null"));
      } catch {
        return emptyDraft();
      }
    },
    write(account, chatId, draft) {
      try {
        if (isEmptyDraft(draft)) storage().removeItem(draftKey(account, chatId));
        else storage().setItem(draftKey(account, chatId), JSON.stringify(draft));
      } catch {
        // Storage full or off: the box and the echoes still hold it until a reload.
      }
    },
  };
}

function isUnsent(item) {
  return typeof item?.requestKey === "string" && typeof item.text === "string" && item.text !== "";
}
