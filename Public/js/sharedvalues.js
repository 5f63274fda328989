// Values every tab of this browser reads and changes as one step: the notice marks (which
// messages were told) and the summary kept for later. They live in IndexedDB because its
// readwrite transactions on one store run one at a time across tabs, so a read, the decision on
// it and the write are atomic: two windows that get one message at the same moment never both
// take it. localStorage has no such step (each renderer process holds its own copy and learns of
// another's writes later). Where IndexedDB is refused (some private modes), values are kept in
// this tab's memory and each tab decides alone.

const DATABASE = "lp-dashboard";
const STORE = "shared";

let opening = null;
const memory = new Map();

function database() {
  opening ??= new Promise((resolve) => {
    try {
      const request = indexedDB.open(DATABASE, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => resolve(null);
      request.onblocked = () => resolve(null);
    } catch {
      resolve(null);
    }
  });
  return opening;
}

/** Reads the value under `key`, hands it to `change` and stores what `change` returns as
 *  `value` (nothing when it is `undefined`), all in one transaction no other tab interleaves
 *  with. Resolves to `change`'s `result` once the write is committed. */
export async function updateShared(key, change) {
  const db = await database();
  if (!db) {
    const { result, value } = change(memory.get(key));
    if (value !== undefined) memory.set(key, value);
    return result;
  }
  return new Promise((resolve) => {
    let outcome;
    try {
      const transaction = db.transaction(STORE, "readwrite");
      const store = transaction.objectStore(STORE);
      const read = store.get(key);
      read.onsuccess = () => {
        outcome = change(read.result);
        if (outcome.value !== undefined) store.put(outcome.value, key);
      };
      transaction.oncomplete = () => resolve(outcome?.result);
      // A write that did not commit still answers with the decision this tab took.
      transaction.onabort = () => resolve(outcome?.result);
    } catch {
      const fallback = change(memory.get(key));
      resolve(fallback.result);
    }
  });
}
