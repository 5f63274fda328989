// A message's reactions in the DOM: one chip per key ("👍 2"), pressed when one of them is the
// person's, and in the chat view a React button that opens Element's quick reactions. What the
// chips say and what a click asks are reactions.js's; this module only draws them.

import { element } from "./dom.js";
import { chipLabel, chipsFor, QUICK_REACTIONS } from "./reactions.js";

/** Messages ("account/id") whose quick reactions are open in the chat view. */
const picking = new Set();

const chipClass = (chip) => `reaction${chip.mine ? " mine" : ""}${chip.sending ? " sending" : ""}`;

/** The reactions row of `message` of `account` (none when it has no reactions and cannot take
 *  any here), with `entries` (the account's reaction entries on their way) applied. `interactive`:
 *  chips are buttons and the React button is there (the chat view, where the person can write). */
export function reactionsRow(message, account, entries, { interactive }) {
  if (!Array.isArray(message.reactions)) return [];
  const chips = chipsFor(message, account, entries);
  if (!interactive) {
    if (chips.length === 0) return [];
    return [element("div", { className: "reactions" }, chips.map((chip) => element("span", {
      className: chipClass(chip), text: `${chip.key} ${chip.count}`, attributes: { title: chipLabel(chip) },
    })))];
  }
  const id = String(message.id);
  const nodes = chips.map((chip) => element("button", {
    className: chipClass(chip),
    text: `${chip.key} ${chip.count}`,
    attributes: {
      type: "button", "data-react": chip.key, "data-message-id": id, "aria-pressed": String(chip.mine),
      "aria-label": chipLabel(chip), title: chipLabel(chip), "data-key": `react/${id}/${chip.key}`,
    },
  }));
  const open = picking.has(`${account}/${id}`);
  nodes.push(element("button", {
    className: "reaction-add",
    text: open ? "Close" : "React",
    attributes: {
      type: "button", "data-react-picker": id, "aria-expanded": String(open),
      "aria-label": open ? "Close the quick reactions" : "Add a reaction", "data-key": `picker/${id}`,
    },
  }));
  if (open) {
    nodes.push(element("span", { className: "reaction-quick", attributes: { role: "group", "aria-label": "Quick reactions" } },
      QUICK_REACTIONS.map((key) => element("button", {
        text: key,
        attributes: { type: "button", "data-react": key, "data-message-id": id, "aria-label": `React with ${key}`, "data-key": `quick/${id}/${key}` },
      }))));
  }
  return [element("div", { className: "reactions" }, nodes)];
}

/** Opens or closes the quick reactions of a message; whether they are open now. */
export function togglePicker(account, id) {
  const key = `${account}/${id}`;
  if (picking.delete(key)) return false;
  picking.add(key);
  return true;
}

export function closePicker(account, id) {
  picking.delete(`${account}/${id}`);
}
