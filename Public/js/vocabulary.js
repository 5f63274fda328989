/**
 * The recoverable errors' kinds and options as the server names them: the page's one copy of
 * these strings (the server's is `ProblemKind` and `OptionID` in Sources/Recovery/Vocabulary.swift;
 * a test holds both against openapi.json).
 */

/** Error kinds, by their problem `type`. */
export const PROBLEM = Object.freeze({
  upstreamError: "/problems/upstream-error",
  badResponse: "/problems/bad-response",
  upstreamUnreachable: "/problems/upstream-unreachable",
  noInternet: "/problems/no-internet",
  outOfSpace: "/problems/out-of-space",
  purchaseDeclined: "/problems/purchase-declined",
  tokenRefused: "/problems/token-refused",
  anotherPoller: "/problems/another-poller",
  upstreamBehind: "/problems/upstream-behind",
  storageFailure: "/problems/storage-failure",
  sendFailed: "/problems/send-failed",
  unsentLeftBehind: "/problems/unsent-left-behind",
});

/** Option ids, as posted back in an attempt. */
export const OPTION = Object.freeze({
  tryAgain: "try-again",
  notNow: "not-now",
  stopSyncing: "stop-syncing",
  dismiss: "dismiss",
  freeSpace: "free-space",
  buySpace: "buy-space",
  signIn: "sign-in",
  resync: "resync",
  discard: "discard",
  export: "export",
});

/** The errors about storage: what they lead to is told in the storage card. */
export const STORAGE_PROBLEMS = Object.freeze([PROBLEM.outOfSpace, PROBLEM.purchaseDeclined]);

/** The errors whose recovery changes what is stored, told in every window and on the storage card:
 *  a purchase, Free space, and the messages a resync set aside (they leave the page, still stored). */
export const STORAGE_NEWS_PROBLEMS = Object.freeze([...STORAGE_PROBLEMS, PROBLEM.upstreamBehind]);

/** The errors with a place of their own in the pane (a view), never the connection's banner. */
export const PANE_PROBLEMS = Object.freeze([PROBLEM.outOfSpace, PROBLEM.upstreamBehind]);

/** The errors shown at a message in its chat (an unsent one), never in the pane or the status bar. */
export const MESSAGE_PROBLEMS = Object.freeze([PROBLEM.sendFailed]);
