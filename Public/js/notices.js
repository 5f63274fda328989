// Which notice a batch of new messages deserves in a visible tab, as a plain function: none for
// messages the person is already looking at, one summary for what arrived while syncing was
// interrupted, else a toast that says who wrote. (Which tab tells at all is tabrules.js.)

/** The messages of a batch that are news to tell of: not shown before (`known(id)`), not
 *  written here (the person's own), and not kept quiet by the account's own rules (a muted room,
 *  a notice: `attention` "quiet"; a message without `attention` came from an upstream with no
 *  such rules and is told). */
export function newsIn(messages, known) {
  return messages.filter((message) => !known(message.id) && message.outboxId == null && message.attention !== "quiet");
}

/**
 * @param {object} batch
 * @param {number} batch.count how many new messages (not announced yet)
 * @param {object} batch.last the newest of them
 * @param {boolean} batch.caughtUp they arrived while syncing was interrupted
 * @param {boolean} batch.inView their pane is on screen, shows the newest, and nothing covers it
 * @returns {{kind: "none"}|{kind: "summary"|"live", text: string, quote?: string}}
 */
export function messageNotice({ count, last, caughtUp, inView }) {
  if (count <= 0) return { kind: "none" };
  if (caughtUp) {
    return { kind: "summary", text: count === 1 ? "1 message arrived while syncing was interrupted"
      : `${count} messages arrived while syncing was interrupted` };
  }
  if (inView) return { kind: "none" };
  return { kind: "live", text: count === 1 ? `New message from ${last?.sender ?? "someone"}` : `${count} new messages`, quote: quoteOf(last) };
}

/** What a tab that was hidden says when it is shown again, for messages no tab could tell of. */
export function awayNotice({ count, last }) {
  if (count <= 0) return { kind: "none" };
  return { kind: "away", text: count === 1 ? "1 new message while you were away" : `${count} new messages while you were away`,
           quote: quoteOf(last) };
}

/** A toast quotes a message's first 160 characters. */
export function quoteOf(message) {
  const text = message?.text ?? "";
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/** A counting toast goes on counting for at most this long after it first showed, then leaves. */
export const COUNTING_LIFETIME_MS = 8000;
