// One pane's messages, newest first: every message the page has loaded stays in memory, but only
// the rows near what the pane shows are in the DOM (about three screens, at most MAX_ROWS), with
// padding standing in for the rest. Rows are measured once shown; unmeasured rows count at the
// average height so far.
//
// The reader keeps their place: every change (new messages, older pages, removals, a row measured
// at another height than guessed) is laid out again around the first row in view, so the text
// under the reader does not move. Only a reader at the very top, with nothing selected in the
// pane, follows the newest messages; anyone else gets "N new messages" to jump to. Following is
// done by scrolling: the rows stay where they were and the pane then scrolls up to the new ones,
// so what moves is the view, never the layout under the reader. Rows are never rebuilt or moved
// once in the DOM, so a selection in them survives every update.

import { editedMark, element, mentionMark, messageClass, messageText, senderOf, threadMark, timeElement } from "./dom.js";
import { reactionsRow } from "./reactionchips.js";

const MAX_ROWS = 160;
const FOLLOW_SLACK_PX = 4;
/** How fast following scrolls up to new rows: the way left shrinks by e every this many ms. */
const FOLLOW_EASE_MS = 90;
const NEAR_END_SCREENS = 2;
/** `contentFrame` when new rows were put in place between frames: the next frame draws them. */
const NEXT_FRAME = Symbol("next frame");

export class MessageList {
  /** `onNearEnd()` is called when the reader nears the oldest loaded message and `hasOlder` is
   *  true; `onUnseen(count)` when the number of new messages above the reader changes. */
  constructor({ scroller, list, onNearEnd = () => {}, onUnseen = () => {} }) {
    this.scroller = scroller;
    this.list = list;
    this.onNearEnd = onNearEnd;
    this.onUnseen = onUnseen;
    this.items = []; // newest first
    this.ids = new Set();
    this.nodes = new Map(); // id -> <li> now in the DOM
    this.heights = new Map(); // id -> measured height (px)
    this.measuredTotal = 0;
    this.tops = null; // tops[i]: offset of row i; tops[items.length]: total height. null when stale.
    this.hasOlder = false;
    this.unseen = 0;
    this.renderQueued = false;
    this.anchor = null;
    this.keptPlace = null; // { id, shownAt, scrollTop }: the place held while the reader has not scrolled
    this.contentChanged = false; // messages came or went, or widths changed, since the last layout
    this.width = 0;
    this.nearEndCheckDue = false;
    this.followDue = false; // new messages came while following: scroll up to them after layout
    this.followNewer = 0; // how many: counted as "N new messages" instead if the reader scrolls away first
    this.followScrolling = false; // the page itself is scrolling up to the newest
    this.followStepQueued = false; // its next step is due at the next frame
    this.lastFollowStep = null; // when it took the last one
    this.contentFrame = null; // the last frame that laid out new content (NEXT_FRAME: the coming one)
    this.placedTop = null; // where the page itself last put the view (a layout or a follow step)
    // Room below everything while following: a list shorter than the pane could not be scrolled
    // to keep its rows in place, and they would be pushed down instead.
    this.slack = element("div", { className: "follow-slack", attributes: { "aria-hidden": "true" } });
    scroller.append(this.slack);
    scroller.addEventListener("scroll", () => {
      // The page's own steps up to the newest are not the reader's: nothing to read for them
      // (reading the position would lay the page out before the frame does).
      if (!this.followScrolling && this.atTop()) {
        this.slack.style.height = "0px";
        if (this.unseen) this.setUnseen(0);
      }
      this.schedule();
      this.nearEndCheckDue = true;
    }, { passive: true });
    // The reader taking the wheel ends the page's own scrolling to the newest.
    for (const type of ["wheel", "touchstart", "keydown", "pointerdown"]) {
      scroller.addEventListener(type, () => { this.followScrolling = false; }, { passive: true });
    }
    new ResizeObserver(() => {
      const width = this.list.clientWidth;
      if (width === this.width) return;
      // Another width wraps text differently: rows in the DOM are measured again now, the others
      // when they are shown.
      this.holdPlace();
      this.width = width;
      this.heights.clear();
      this.measuredTotal = 0;
      for (const [id, node] of this.nodes) this.remember(id, node.getBoundingClientRect().height);
      this.tops = null;
      this.contentChanged = true;
      this.schedule();
    }).observe(scroller);
  }

  get size() { return this.items.length; }

  has(id) { return this.ids.has(id); }

  /** The loaded message with `id`, if any. */
  find(id) { return this.ids.has(id) ? this.items.find((message) => message.id === id) : undefined; }

  /** The oldest loaded id, for the next page of scroll-back. */
  oldestId() { return this.items.at(-1)?.id; }

  newestId() { return this.items[0]?.id; }

  /** Replaces everything (a snapshot, another account). */
  reset(messages, { hasOlder }) {
    for (const node of this.nodes.values()) node.remove();
    this.nodes.clear();
    this.items = [...messages].sort((a, b) => b.id - a.id);
    this.ids = new Set(this.items.map((message) => message.id));
    this.hasOlder = hasOlder;
    this.tops = null;
    this.anchor = null;
    this.setUnseen(0);
    this.scroller.scrollTop = 0;
    this.schedule();
  }

  /** Adds messages (new ones at the top, an older page at the bottom, or anywhere between);
   *  returns how many were not loaded before. */
  add(messages) {
    const fresh = messages.filter((message) => !this.ids.has(message.id));
    if (fresh.length === 0) return 0;
    const following = this.following();
    this.holdPlace();
    const newestBefore = this.newestId() ?? -Infinity;
    fresh.sort((a, b) => b.id - a.id);
    for (const message of fresh) this.ids.add(message.id);
    this.items = mergeNewestFirst(this.items, fresh);
    this.tops = null;
    this.contentChanged = true;
    const newer = fresh.filter((message) => message.id > newestBefore).length;
    if (newer && following) {
      this.followDue = true;
      this.followNewer += newer;
    } else if (newer) this.setUnseen(this.unseen + newer);
    if (newer) this.renderNow(); else this.schedule();
    return fresh.length;
  }

  /** Lays new messages out in the task that brought them: waiting for the next frame added up to
   *  16 ms to a message's way into the page. The page's poll is what paces it: one answer at a
   *  time, and what comes while a layout runs waits in the next answer. A hidden page draws no
   *  frames and lays out nothing until it is shown. */
  renderNow() {
    if (document.hidden) return this.schedule();
    this.contentFrame = NEXT_FRAME;
    this.render();
  }

  /** A stored message changed (its sender edited it): its row shows the new text in place. */
  change(message) {
    const index = this.items.findIndex((item) => item.id === message.id);
    if (index < 0) return;
    this.holdPlace();
    this.items[index] = { ...this.items[index], ...message };
    // The row is drawn again, and measured again at the next layout: the new text may wrap otherwise.
    this.nodes.get(message.id)?.remove();
    this.nodes.delete(message.id);
    this.contentChanged = true;
    this.tops = null;
    this.schedule();
  }

  /** Removes messages by id (freed space, a detached account, a deletion elsewhere). */
  remove(ids) {
    const gone = new Set(ids.filter((id) => this.ids.has(id)));
    if (gone.size === 0) return;
    this.holdPlace();
    this.items = this.items.filter((message) => !gone.has(message.id));
    this.contentChanged = true;
    for (const id of gone) {
      this.ids.delete(id);
      this.nodes.get(id)?.remove();
      this.nodes.delete(id);
    }
    this.tops = null;
    this.schedule();
  }

  setHasOlder(hasOlder) {
    if (this.hasOlder === hasOlder) return;
    this.hasOlder = hasOlder;
    this.schedule();
  }

  /** To the very end: the oldest loaded message in view (End, once every page is loaded). */
  scrollToOldest() {
    this.anchor = null;
    this.keptPlace = null;
    // Rows measured on the way change the total height: laid out, then down again, twice.
    for (let pass = 0; pass < 3; pass += 1) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.render();
    }
  }

  /** Back to the newest message, as "N new messages" does. */
  jumpToNewest() {
    this.anchor = null;
    this.followScrolling = false;
    this.scroller.scrollTop = 0;
    this.setUnseen(0);
    this.schedule();
  }

  // MARK: Layout

  atTop() { return this.scroller.scrollTop <= FOLLOW_SLACK_PX; }

  /** True when the newest messages are what the pane shows, or what it is scrolling up to. */
  showsNewest() { return this.followScrolling || this.atTop(); }

  /** True when the reader follows the newest messages: at the top (or on the way there by the
   *  page's own scrolling) with nothing selected in the pane. */
  following() { return this.showsNewest() && !this.selectionInside(); }

  /** True when part of the current selection is in this pane: the reader is busy with it. */
  selectionInside() {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return false;
    return this.list.contains(selection.anchorNode) || this.list.contains(selection.focusNode);
  }

  /** Notes the first row in view and where it is, before the rows change. */
  holdPlace() {
    if (this.anchor) return;
    const tops = this.offsets();
    const scrollTop = this.scroller.scrollTop;
    const index = Math.min(this.items.length - 1, this.rowAt(tops, scrollTop));
    if (index < 0) return;
    const id = this.items[index].id;
    this.anchor = { id, offset: tops[index] - scrollTop, shownAt: this.shownTop(id), scrollTop };
    // The browser keeps whole-pixel scroll positions: measured afresh on every update, the place
    // would drift by the rounding each time. Until the reader scrolls, the place first held stands.
    const kept = this.keptPlace;
    if (kept && kept.scrollTop === scrollTop && this.nodes.has(kept.id) && kept.shownAt !== null) {
      const keptIndex = this.indexOf(kept.id);
      if (keptIndex >= 0) this.anchor = { id: kept.id, offset: tops[keptIndex] - scrollTop, shownAt: kept.shownAt, scrollTop };
    }
  }

  /** Where row `id` is now, relative to the pane's top edge; null when it is not in the DOM. */
  shownTop(id) {
    const node = this.nodes.get(id);
    return node ? node.getBoundingClientRect().top - this.scroller.getBoundingClientRect().top : null;
  }

  schedule() {
    this.noteLoaded();
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame((now) => {
      this.renderQueued = false;
      if (this.contentChanged) this.contentFrame = now;
      this.render();
    });
  }

  /** What is loaded, for tests and the curious (the DOM holds only a window of it), said at
   *  once: a hidden page draws no frames, but what it holds is true already. */
  noteLoaded() {
    this.list.dataset.loaded = String(this.items.length);
    this.list.dataset.newest = String(this.newestId() ?? "");
    this.list.dataset.oldest = String(this.oldestId() ?? "");
  }

  /** Lays the rows out now (tests and the scheduler call it). */
  render() {
    this.holdPlace();
    const anchor = this.anchor;
    this.anchor = null;
    // The reader may have scrolled since the place was held (a smooth scroll runs on between a
    // change and this frame): the row moved with them, and writing the old place back would
    // undo their scrolling.
    if (anchor && anchor.scrollTop !== this.scroller.scrollTop) {
      const scrolled = this.scroller.scrollTop - anchor.scrollTop;
      anchor.offset -= scrolled;
      if (anchor.shownAt !== null) anchor.shownAt -= scrolled;
    }
    // New messages came while the reader was at the top, and they scrolled away before this frame
    // laid them out: where they went is theirs, and the new messages are counted instead.
    if (this.followDue && anchor && anchor.scrollTop !== this.scroller.scrollTop && !this.atTop()) {
      this.followDue = false;
      this.setUnseen(this.unseen + this.followNewer);
      this.followNewer = 0;
    }
    if (this.followDue) this.slack.style.height = `${this.scroller.clientHeight}px`;
    // Twice at most: rows measured in the first pass may move the anchor, the second puts it back.
    for (let pass = 0; pass < 2; pass += 1) {
      const tops = this.offsets();
      let scrollTop = this.scroller.scrollTop;
      if (anchor) {
        const index = this.indexOf(anchor.id);
        if (index >= 0) scrollTop = Math.max(0, tops[index] - anchor.offset);
      }
      const changed = this.layOut(tops, scrollTop);
      if (Math.abs(this.scroller.scrollTop - scrollTop) >= 1) this.scroller.scrollTop = scrollTop;
      if (!changed) break;
    }
    // The offsets are sums of measured heights and the browser rounds scroll positions: what is
    // left is corrected by where the anchor row really is, as the browser's own scroll anchoring does.
    // Only after a change of content: a correction written while the reader scrolls would stop
    // the browser's smooth scrolling (End, Page Down) half-way.
    const contentChanged = this.contentChanged;
    this.contentChanged = false;
    if (contentChanged && anchor && anchor.shownAt !== null) {
      const now = this.shownTop(anchor.id);
      if (now !== null && Math.abs(now - anchor.shownAt) >= 0.5) this.scroller.scrollTop = Math.round(this.scroller.scrollTop + now - anchor.shownAt);
    }
    this.keptPlace = anchor ? { id: anchor.id, shownAt: anchor.shownAt, scrollTop: this.scroller.scrollTop } : null;
    // New rows were put in place: where the view is now is the page's doing.
    if (contentChanged) this.placedTop = this.scroller.scrollTop;
    if (this.followDue) {
      this.followDue = false;
      this.followNewer = 0;
      this.scrollUpToNewest();
    }
    this.noteLoaded();
    // Only a reader who scrolls asks for older pages; a page that merely opened does not.
    if (this.nearEndCheckDue) {
      this.nearEndCheckDue = false;
      this.checkNearEnd();
    }
  }

  /** Follows the newest: the rows stayed in place, now the view moves up to the new ones, a step
   *  each frame from the next one on (the frame with the rows in place is drawn first). The steps
   *  are the page's own rather than the browser's smooth scrolling, which runs beside the page: a
   *  row arriving mid-way is put in place against a scroll position the page knows, and the view
   *  goes on from there. */
  scrollUpToNewest() {
    if (this.atTop() && !this.followScrolling) {
      this.slack.style.height = "0px";
      return;
    }
    this.keptPlace = null;
    if (!this.followScrolling) this.lastFollowStep = null;
    this.followScrolling = true;
    if (this.followStepQueued) return;
    this.followStepQueued = true;
    requestAnimationFrame((now) => {
      this.followStepQueued = false;
      // The reader took the wheel meanwhile, or selected text: their place stays theirs.
      if (this.selectionInside()) this.followScrolling = false;
      // The view is elsewhere than the page put it: the reader moved it (the scroll bar, a script,
      // a find in page), and their place is theirs.
      if (this.placedTop !== null && Math.abs(this.scroller.scrollTop - this.placedTop) > 1) this.followScrolling = false;
      if (!this.followScrolling) return;
      // A frame that puts new rows in place does not scroll too: the reader is shown the rows
      // where they were, then the view moves (both in one frame is drawn as a jump).
      if (this.contentChanged || this.contentFrame === now || this.contentFrame === NEXT_FRAME) {
        if (this.contentFrame === NEXT_FRAME) this.contentFrame = now;
        this.scrollUpToNewest();
        return;
      }
      const reduced = matchMedia("(prefers-reduced-motion: reduce)").matches;
      const elapsed = this.lastFollowStep === null ? 16 : Math.max(1, now - this.lastFollowStep);
      this.lastFollowStep = now;
      // A constant share of the way left per time: fast at first, gentle at the end; a frame late
      // on a busy machine takes a longer step, never a longer way.
      const top = reduced ? 0 : Math.floor(this.scroller.scrollTop * Math.exp(-elapsed / FOLLOW_EASE_MS));
      this.scroller.scrollTop = top;
      this.placedTop = this.scroller.scrollTop;
      if (top > 0) {
        this.scrollUpToNewest();
      } else {
        this.followScrolling = false;
        this.slack.style.height = "0px";
        if (this.unseen) this.setUnseen(0);
      }
    });
  }

  /** Puts the rows for `scrollTop` in the DOM; true when measuring them changed the heights. */
  layOut(tops, scrollTop) {
    const view = this.scroller.clientHeight || 600;
    const count = this.items.length;
    let first = Math.max(0, this.rowAt(tops, scrollTop - view) );
    // On its way up to the newest, the view is going to the rows above it: they are in the DOM
    // already, not only once the view comes within a screen of them.
    if (this.followScrolling || this.followDue) first = 0;
    let last = Math.min(count - 1, this.rowAt(tops, scrollTop + 2 * view));
    if (last - first + 1 > MAX_ROWS) {
      const inView = Math.max(0, this.rowAt(tops, scrollTop));
      first = Math.max(0, inView - MAX_ROWS / 4);
      last = Math.min(count - 1, first + MAX_ROWS - 1);
    }
    const wanted = new Set();
    for (let index = first; index <= last; index += 1) wanted.add(this.items[index].id);
    for (const [id, node] of this.nodes) {
      if (!wanted.has(id)) {
        node.remove();
        this.nodes.delete(id);
      }
    }
    // Rows already there stay where they are (a selection in them survives); new ones go
    // between them in order.
    const added = [];
    let next = null;
    for (let index = last; index >= first; index -= 1) {
      const message = this.items[index];
      let node = this.nodes.get(message.id);
      if (!node) {
        node = messageRow(message);
        this.nodes.set(message.id, node);
        this.list.insertBefore(node, next);
        added.push(message.id);
      }
      node.setAttribute("aria-posinset", String(index + 1));
      node.setAttribute("aria-setsize", this.hasOlder ? "-1" : String(count));
      next = node;
    }
    this.list.style.paddingTop = `${count ? tops[first] : 0}px`;
    this.list.style.paddingBottom = `${count ? tops[count] - tops[last + 1] : 0}px`;
    let changed = false;
    for (const id of added) {
      const guess = this.heights.get(id) ?? this.estimate();
      const height = this.remember(id, this.nodes.get(id).getBoundingClientRect().height);
      if (Math.abs(guess - height) >= 0.5) changed = true;
    }
    if (changed) this.tops = null;
    return changed;
  }

  remember(id, height) {
    const before = this.heights.get(id);
    if (before !== undefined) this.measuredTotal -= before;
    this.heights.set(id, height);
    this.measuredTotal += height;
    return height;
  }

  estimate() {
    return this.heights.size ? this.measuredTotal / this.heights.size : 56;
  }

  offsets() {
    if (this.tops && this.tops.length === this.items.length + 1) return this.tops;
    const estimate = this.estimate();
    const tops = new Float64Array(this.items.length + 1);
    for (let index = 0; index < this.items.length; index += 1) {
      tops[index + 1] = tops[index] + (this.heights.get(this.items[index].id) ?? estimate);
    }
    this.tops = tops;
    return tops;
  }

  /** The row covering `y` (binary search over the offsets). */
  rowAt(tops, y) {
    let low = 0;
    let high = this.items.length - 1;
    if (high < 0) return -1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (tops[middle] <= y) low = middle; else high = middle - 1;
    }
    return low;
  }

  indexOf(id) {
    // Newest first, so ids fall: binary search.
    let low = 0;
    let high = this.items.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const here = this.items[middle].id;
      if (here === id) return middle;
      if (here > id) low = middle + 1; else high = middle - 1;
    }
    return -1;
  }

  /** Asks for older messages when less than two screens of loaded ones are left below. */
  checkNearEnd() {
    if (!this.hasOlder) return;
    const tops = this.offsets();
    const below = tops[this.items.length] - (this.scroller.scrollTop + this.scroller.clientHeight);
    if (below < NEAR_END_SCREENS * this.scroller.clientHeight) this.onNearEnd();
  }

  setUnseen(count) {
    if (this.unseen === count) return;
    this.unseen = count;
    this.onUnseen(count);
  }
}

/** Two lists sorted newest first, as one; the usual cases (all newer, all older) are one concat. */
function mergeNewestFirst(items, fresh) {
  if (items.length === 0) return fresh;
  if (fresh.at(-1).id > items[0].id) return fresh.concat(items);
  if (fresh[0].id < items.at(-1).id) return items.concat(fresh);
  const merged = [];
  let i = 0;
  let j = 0;
  while (i < items.length || j < fresh.length) {
    if (j >= fresh.length || (i < items.length && items[i].id > fresh[j].id)) merged.push(items[i++]);
    else merged.push(fresh[j++]);
  }
  return merged;
}

function messageRow(message) {
  const chat = message.chatName ?? `chat ${message.chatId}`;
  // In a direct chat the chat is the person: said once.
  const sender = senderOf(message);
  const who = chat === sender ? sender : `${sender} · ${chat}`;
  return element("li", { className: messageClass(message), attributes: { "data-id": String(message.id) } }, [
    element("div", { className: "meta" }, [document.createTextNode(`${who} · `), timeElement(message.sentAt), ...threadMark(message), ...editedMark(message), ...mentionMark(message)]),
    messageText(message),
    ...reactionsRow(message, null, [], { interactive: false }),
  ]);
}

