// When the search box asks the server: at once for what the person typed, never two requests at a
// time. A keystroke while a search runs leaves its text waiting; when the answer comes, the newest
// waiting text goes (the ones typed in between are skipped, their answers would be replaced at
// once). A plain value: inputs return what to do, the search card performs it.

/** @typedef {{ inFlight: boolean, waiting: string | null }} SearchLine */

/** No search running, nothing waiting. */
export const idleLine = Object.freeze({ inFlight: false, waiting: null });

/**
 * The person typed (or asked again): search `text` now, or let it wait for the running search.
 * @returns {{ line: SearchLine, send: string | null }}
 */
export function typed(line, text) {
  if (line.inFlight) return { line: { inFlight: true, waiting: text }, send: null };
  return { line: { inFlight: true, waiting: null }, send: text };
}

/**
 * The running search was answered (or failed): the text that waited goes now, if any.
 * @returns {{ line: SearchLine, send: string | null }}
 */
export function answered(line) {
  if (line.waiting === null) return { line: idleLine, send: null };
  return { line: { inFlight: true, waiting: null }, send: line.waiting };
}
