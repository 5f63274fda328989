// What the search card says about its results, in words: how many matched, and how a word still
// being typed was ranked. Plain functions of the server's answer.

/** "3 matches", "the best 20 of 1,234 matches", "the best 20 of more than 1,000 matches". */
export function countWords(shown, { total, totalIsExact }) {
  if (shown === 0) return "No stored message matches.";
  const all = Number.isInteger(total) ? total : shown;
  const plural = (count) => (count === 1 ? "match" : "matches");
  if (all <= shown && totalIsExact !== false) return `${shown} ${plural(shown)}.`;
  const size = totalIsExact === false ? `more than ${all.toLocaleString("en")}` : all.toLocaleString("en");
  return `The best ${shown} of ${size} ${totalIsExact === false ? "matches" : plural(all)}.`;
}

/** The server ranked a word being typed among its newest matches only: said, with the way to all. */
export function rankingNote({ rankedAmongNewest }) {
  if (!Number.isInteger(rankedAmongNewest)) return "";
  return ` Ranked among the newest ${rankedAmongNewest.toLocaleString("en")}: end the word with a space to rank them all.`;
}
