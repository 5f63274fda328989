// What a message's reactions show: the stored ones (the message's `reactions`, as the server
// counts them), with what the person gave or took back here and is not sent yet applied on top,
// so a click shows at once. A refused one is not applied: the reaction stays as it truly is, and
// the refusal shows among the chat's unsent items with Try again and Delete. No DOM: tested
// under node --test.

/** The reactions Element offers first, in its order. */
export const QUICK_REACTIONS = ["👍", "👎", "😄", "🎉", "😕", "❤️", "🚀", "👀"];

/** Whether an outbox entry gives or takes back a reaction (not a message). */
export function isReactionEntry(entry) {
  return entry?.action === "react" || entry?.action === "unreact";
}

/** The chips of `message` of `account`: `{ key, count, mine, senders, sending }` in the order
 *  each key was first given, the person's own entries still on their way applied in order. */
export function chipsFor(message, account, entries = []) {
  const chips = (Array.isArray(message?.reactions) ? message.reactions : [])
    .filter((reaction) => typeof reaction?.key === "string" && Number.isInteger(reaction.count))
    .map(({ key, count, mine, senders }) => ({ key, count, mine: Boolean(mine), senders: Array.isArray(senders) ? senders : [], sending: false }));
  for (const entry of entries) {
    if (!isReactionEntry(entry) || entry.state === "failed" || entry.account !== account || entry.messageId !== message.id) continue;
    let chip = chips.find((candidate) => candidate.key === entry.text);
    if (entry.action === "react") {
      if (!chip) {
        chip = { key: entry.text, count: 0, mine: false, senders: [], sending: false };
        chips.push(chip);
      }
      if (!chip.mine) [chip.count, chip.mine] = [chip.count + 1, true];
      chip.sending = true;
    } else if (chip) {
      if (chip.mine) [chip.count, chip.mine] = [chip.count - 1, false];
      chip.sending = true;
    }
  }
  return chips.filter((chip) => chip.count > 0);
}

/** What a click on a chip (or on a quick reaction) asks: give the key, or take the person's own back. */
export function toggleOf(chips, key) {
  return chips.some((chip) => chip.key === key && chip.mine) ? "take-back" : "give";
}

/** Who gave a reaction, in words: "Carol, Bob and 3 others", "You and Carol". */
export function whoReacted(chip) {
  const names = [...chip.senders];
  if (chip.mine && chip.sending && names.length < chip.count) names.push("you");
  const others = Math.max(0, chip.count - names.length);
  const listed = others > 0 ? [...names, `${others} other${others === 1 ? "" : "s"}`] : names;
  const words = listed.length <= 1 ? listed.join("") : `${listed.slice(0, -1).join(", ")} and ${listed.at(-1)}`;
  // Names are as the chat gives them; only "you" opening the words is capitalised.
  return words.startsWith("you") ? `Y${words.slice(1)}` : words;
}

/** A chip's name for assistive technology and its title: key, count, whether it is the person's,
 *  who, and whether it is still on its way. */
export function chipLabel(chip) {
  const count = `${chip.count} reaction${chip.count === 1 ? "" : "s"}`;
  const yours = chip.mine ? ", yours among them" : "";
  const sending = chip.sending ? " (sending…)" : "";
  const who = whoReacted(chip);
  return `${chip.key}: ${count}${yours}${who ? `, from ${who}` : ""}${sending}`;
}

/** The words of an unsent reaction among the chat's unsent items. */
export function reactionEchoText(entry) {
  return entry.action === "react" ? `Your reaction ${entry.text}` : `Taking back your reaction ${entry.text}`;
}
