// The two accounts' panes: each a message list (messagelist.js) with its name, what it says when
// empty, scroll-back in pages of 200 (End goes to the true end), the "N new messages" pill, and
// whether the newest messages are in view (so a toast does not repeat what is on screen).

import { getJSON, reasonFor, UnreadableAnswer } from "./api.js";
import { $, setText } from "./dom.js";
import { focusFirst } from "./focus.js";
import { MessageList } from "./messagelist.js";
import { withProgress } from "./progress.js";
import { showReadFailure } from "./view.js";

export const ACCOUNTS = ["primary", "linked"];
/** Messages per scroll-back page. */
const OLDER_PAGE = 200;

/** The two panes' lists, made by `makePanes`. */
export const lists = {};
const older = { primary: { loading: false, failed: false }, linked: { loading: false, failed: false } };
let reachable = () => true;
const inView = { primary: false, linked: false };

/** Makes the lists; `isReachable()` says whether the process answers (no scroll-back without it). */
export function makePanes({ isReachable }) {
  reachable = isReachable;
  for (const account of ACCOUNTS) {
    const jump = $(`[data-jump-for="${account}"]`);
    const scroller = $(`[data-scroll-for="${account}"]`);
    lists[account] = new MessageList({
      scroller,
      list: $(`[data-messages-for="${account}"]`),
      onNearEnd: () => { if (!older[account].failed) loadOlder(account); },
      onUnseen: (count) => {
        jump.hidden = count === 0;
        jump.textContent = count === 1 ? "1 new message ↑" : `${count} new messages ↑`;
        jump.setAttribute("aria-label", count === 1 ? "Show 1 new message" : `Show ${count} new messages`);
      },
    });
    jump.addEventListener("click", () => {
      lists[account].jumpToNewest();
      scroller.focus();
    });
    $(`[data-start-for="${account}"]`).tabIndex = -1;
    $(`[data-older-for="${account}"]`).addEventListener("click", () => loadOlder(account, { clicked: true }));
    // End is the true end: every older page is loaded first.
    scroller.addEventListener("keydown", (event) => {
      if (event.key !== "End" || event.ctrlKey || event.metaKey || event.altKey) return;
      event.preventDefault();
      loadToTheEnd(account);
    });
    new IntersectionObserver(([entry]) => { inView[account] = entry.isIntersecting; }, { threshold: 0.5 }).observe(scroller);
  }
}

/** Whether `account`'s newest messages are on screen now: its pane is in view, follows the
 *  newest (the reader is at the top, or the pane is scrolling up to it), and no dialog covers it. */
export function newestInView(account) {
  const list = lists[account];
  return inView[account] && !$(`#pane-${account}`).hidden && list.showsNewest() && !document.querySelector("dialog[open]");
}

/** What the pane says around its messages: its account's name, nothing yet, older ones to load,
 *  the start reached, and whether what it shows may be out of date. */
export function renderPane(account, { name, stale, heardAt }) {
  const list = lists[account];
  setText($(`[data-name-for="${account}"]`), name);
  $(`[data-empty-for="${account}"]`).hidden = list.size > 0 || list.hasOlder;
  const button = $(`[data-older-for="${account}"]`);
  button.hidden = !list.hasOlder;
  setText(button, older[account].loading ? "Loading older messages…" : "Show older messages");
  if (older[account].loading) button.setAttribute("aria-busy", "true"); else button.removeAttribute("aria-busy");
  $(`[data-start-for="${account}"]`).hidden = list.hasOlder || list.size === 0;
  const note = $(`[data-stale-for="${account}"]`);
  note.hidden = !stale;
  setText(note, stale ? `· as of ${heardAt}, may be out of date` : "");
}

/** Older history was stored for the account: a pane that had reached its oldest stored message
 *  can show older ones again. */
export function olderHistoryArrived(account) {
  const list = lists[account];
  if (!list || list.hasOlder || list.size === 0) return;
  list.setHasOlder(true);
  refresh(account);
}

/** Loads the next older page; `button` is the Try again clicked, which shows the progress. */
export async function loadOlder(account, { clicked = false, button = null } = {}) {
  const state = older[account];
  const list = lists[account];
  if (state.loading || !list.hasOlder || !reachable()) return false;
  const place = $(`[data-older-error-for="${account}"]`);
  state.loading = true;
  refresh(account);
  const query = new URLSearchParams({ account, limit: String(OLDER_PAGE) });
  const oldest = list.oldestId();
  if (oldest != null) query.set("before", String(oldest));
  const fetchPage = async () => {
    const page = await getJSON(`/api/messages?${query}`);
    if (!Array.isArray(page.messages)) throw new UnreadableAnswer("/api/messages");
    return page;
  };
  try {
    const page = await (button ? withProgress(button, fetchPage) : fetchPage());
    list.add(page.messages.map((message) => ({ ...message, account })));
    list.setHasOlder(page.nextBefore != null);
    state.failed = false;
    place.replaceChildren();
  } catch (failure) {
    state.failed = true;
    const retry = showReadFailure(place, "Older messages could not be loaded", reasonFor(failure),
      (again) => loadOlder(account, { clicked: true, button: again }));
    if (clicked) retry.focus();
  } finally {
    state.loading = false;
  }
  refresh(account);
  // The button went away with the last page: the note that the start is reached takes the focus.
  if (clicked && !list.hasOlder && !state.failed) focusFirst(["start-of-history"], account);
  return !state.failed;
}

async function loadToTheEnd(account) {
  const list = lists[account];
  while (list.hasOlder) {
    if (!(await loadOlder(account))) return;
  }
  list.scrollToOldest();
}

let refreshPane = () => {};

/** How a pane is drawn again after scroll-back changed it (app.js knows its name and staleness). */
export function onPaneChange(render) {
  refreshPane = render;
}

function refresh(account) {
  refreshPane(account);
}

/** Puts a snapshot's messages into the panes: anew for another account (or the first time), else added. */
export function takeSnapshotMessages(snapshot, before, { first }) {
  for (const account of ACCOUNTS) {
    const messages = snapshot.messages[account] ?? [];
    const list = lists[account];
    const sameAccount = before?.[account]?.userId === snapshot.accounts[account]?.userId;
    const newest = messages.reduce((highest, message) => Math.max(highest, message.id), -Infinity);
    if (first || !sameAccount || (list.size > 0 && newest < list.newestId())) {
      list.reset(messages, { hasOlder: messages.length >= 50 });
    } else {
      list.add(messages);
    }
  }
}
