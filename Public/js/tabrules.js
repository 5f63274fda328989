// What the dashboard's tabs agree on, as plain functions (no DOM, no timers, no channel), so every
// rule is tested with Node's runner: who tells the person about a message (one notice per message
// across all tabs), and where an alert opens (the tab where the person acted).

/** How long a tab's word that it is visible holds without a heartbeat (visible tabs beat every
 *  few seconds; a tab that closed without a word stops being counted as the one that shows). */
export const VISIBLE_CLAIM_MS = 20_000;
/** How long a hidden tab counts as there without a heartbeat: background timers are throttled
 *  (once a minute after a while), so this is generous. */
export const HIDDEN_CLAIM_MS = 180_000;

/** The peers that count now: `peers` maps a tab id to `{ visible, seenAt }`. */
export function livePeers(peers, now) {
  const live = new Map();
  for (const [id, peer] of peers) {
    const age = now - peer.seenAt;
    if (age <= (peer.visible ? VISIBLE_CLAIM_MS : HIDDEN_CLAIM_MS)) live.set(id, peer);
  }
  return live;
}

/** What this tab does about notifying messages of `account` with `ids`:
 *  - `"toast"`: this tab is visible; it shows them.
 *  - `"notify"`: no tab is visible and this one is chosen (the lowest id among the live tabs);
 *    it fires a system notification, or, without permission, keeps them for a summary when a
 *    tab is next seen.
 *  - `"none"`: another tab tells, or they were all announced already (by any tab, before a reload).
 *  `fresh` is the ids not announced yet; `announced` maps an account to the highest id announced. */
export function noticeFor({ tabId, visible, peers, now, announced, account, ids }) {
  const fresh = ids.filter((id) => id > (announced?.[account] ?? -Infinity));
  if (fresh.length === 0) return { action: "none", fresh };
  if (visible) return { action: "toast", fresh };
  const live = livePeers(peers, now);
  if ([...live.values()].some((peer) => peer.visible)) return { action: "none", fresh };
  const chosen = [tabId, ...live.keys()].sort()[0];
  return { action: chosen === tabId ? "notify" : "none", fresh };
}

/** The announced marks after `fresh` ids of `account` were told. */
export function markAnnounced(announced, account, fresh) {
  if (fresh.length === 0) return announced;
  return { ...announced, [account]: Math.max(announced?.[account] ?? -Infinity, ...fresh) };
}

/** An action this recent says where the person is now. */
export const RECENT_ACTION_MS = 15_000;

/** How often a tab repeats that the person still acts in it (every key and click would flood
 *  the channel for nothing). */
export const ACTED_REPEAT_MS = 1000;

/** Whether an action in this tab is said to the others now: always when they last heard of an
 *  action in another tab (where the person is has changed, and an alert their action causes may
 *  come within milliseconds), else at most once every `ACTED_REPEAT_MS`. `lastActor` is what
 *  this tab knew before the action, `lastSaidAt` when it last said one. */
export function actedIsSaid({ tabId, lastActor, now, lastSaidAt }) {
  return lastActor?.tabId !== tabId || now - lastSaidAt >= ACTED_REPEAT_MS;
}

/** The person's last action, if it was in this tab or in one still open: a tab that closed
 *  (gone with a word, or silent past its claim) is nowhere the person can be now. */
export function presentActor({ tabId, lastActor, peers, now }) {
  if (!lastActor) return null;
  return lastActor.tabId === tabId || livePeers(peers, now).has(lastActor.tabId) ? lastActor : null;
}

/** Where an alert-presented error shows in this tab: `"dialog"` (modal) or `"note"` (a quiet
 *  toast with Show, the error's options in the banner). The tab that caused it (its own attempt's
 *  answer) shows the dialog; else the tab where the person acted within `RECENT_ACTION_MS`; else
 *  the tab whose attempt is running; else the tab where the person acted last; and when nobody has
 *  acted yet, or the tab where they did is closed, every visible tab. `lastActor` is
 *  `{ tabId, at }` or null; `peers` the other tabs as `livePeers` takes them. */
export function alertPlacement({ tabId, visible, now, causedHere, attemptRunningHere, attemptRunningElsewhere, lastActor: heard, peers }) {
  if (causedHere) return "dialog";
  const lastActor = presentActor({ tabId, lastActor: heard, peers, now });
  const recent = lastActor && now - lastActor.at <= RECENT_ACTION_MS;
  if (recent) return lastActor.tabId === tabId ? "dialog" : "note";
  if (attemptRunningHere) return "dialog";
  if (attemptRunningElsewhere) return "note";
  if (lastActor) return lastActor.tabId === tabId ? "dialog" : "note";
  return visible ? "dialog" : "note";
}
