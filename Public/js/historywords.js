// What the page says of fetching a Matrix account's older history (CONTRACT section 10): a plain
// function of the server's `history` value, tested with Node's own runner.

// Made on first use: the first number formatter of a page costs milliseconds, and most pages
// never fetch older history.
let numbers = null;
const count = (value) => (numbers ??= new Intl.NumberFormat("en")).format(value);

/** "Fetching older history: 12,400 messages so far, 3 rooms left", or "" once it is complete. */
export function historyWords(history) {
  if (!history || history.complete || !(history.roomsPending > 0)) return "";
  const rooms = `${count(history.roomsPending)} ${history.roomsPending === 1 ? "room" : "rooms"} left`;
  if (!(history.fetched > 0)) return `Fetching older history: ${rooms}.`;
  return `Fetching older history: ${count(history.fetched)} ${history.fetched === 1 ? "message" : "messages"} so far, ${rooms}.`;
}
