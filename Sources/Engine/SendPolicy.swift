import Store
import Upstream

/// The decisions of sending what the person wrote (CONTRACT section 11), as a plain value: what
/// the sender learnt goes in, what it does next comes out. No clock, task or socket, so every rule
/// is tested on its own; `OutboxSender` performs the actions.
///
/// - One request at a time, the oldest queued entry first, so a chat's messages arrive in the
///   order they were written. An entry that failed for good is out of the line until Try again.
/// - Only while syncing is live: offline, backing off, stopped or signing in again, entries stay
///   `queued` (never `failed`); syncing going live again wakes the sender.
/// - Every request has its own deadline. An answer that did not come (a cut connection, the
///   deadline, a 5xx) may have reached the upstream or not: the entry goes again under the same
///   key after a full-jitter backoff, so the upstream keeps it once.
/// - A 429 waits what it asks (at least `minimumRateLimitWait`), and nothing ends that wait early.
/// - A refusal that trying again will not change (too large, not allowed, a chat gone) fails the
///   entry, with the upstream's reason.
public struct SendPolicy: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Send this entry now, and give up on its answer after `deadline`.
        case send(OutboxEntry, deadline: Duration)
        /// Wait this long, or until something ends the wait (``ends(_:by:)``), then look again.
        case wait(Duration, SendPause)
    }

    /// What a try that was not sent comes to.
    public enum Failure: Sendable, Equatable {
        /// Back to `queued`; wait, then try again under the same key.
        case retry(after: Duration, SendPause)
        /// Trying again will not change it: the entry is `failed`.
        case refused(SendRefusal)
    }

    public var backoff: Backoff
    /// How long a request may take before its answer counts as lost.
    public var deadline: Duration
    /// How long to wait, unless woken, when there is nothing to send or syncing is not live.
    public var idleWait: Duration
    public var minimumRateLimitWait: Duration
    public var fullStorageWait: Duration
    /// Tries in a row whose answer did not come.
    public private(set) var failures = 0

    public init(backoff: Backoff = Backoff(base: .seconds(1), cap: .seconds(30)), deadline: Duration = .seconds(20),
                idleWait: Duration = .seconds(30), minimumRateLimitWait: Duration = .milliseconds(500),
                fullStorageWait: Duration = .seconds(30)) {
        self.backoff = backoff
        self.deadline = deadline
        self.idleWait = idleWait
        self.minimumRateLimitWait = minimumRateLimitWait
        self.fullStorageWait = fullStorageWait
    }

    /// What to do when ready: `live` is whether syncing is live now, `oldestQueued` the account's
    /// oldest entry waiting to go (a failed one is out of the line until Try again puts it back).
    public func next(live: Bool, oldestQueued: OutboxEntry?) -> Action {
        guard let oldestQueued else { return .wait(idleWait, .nothingQueued) }
        guard live else { return .wait(idleWait, .notSyncing) }
        return .send(oldestQueued, deadline: deadline)
    }

    /// The upstream answered the send: the next backoff starts from the first ceiling again.
    public mutating func sent() {
        failures = 0
    }

    /// The send failed with `error`; `jitter` is a draw in 0...1 for the backoff.
    public mutating func failed(_ error: UpstreamError, jitter: Double) -> Failure {
        switch error {
        case .refused(let refusal):
            failures = 0
            return .refused(refusal)
        case .forbidden(let detail):
            failures = 0
            return .refused(SendRefusal(.forbidden, detail: detail))
        case .rateLimited(let asked):
            failures += 1
            return .retry(after: max(asked ?? backoff.ceiling(afterFailure: failures), minimumRateLimitWait), .rateLimited)
        case .unauthorized:
            // The engine's own sync hears the same, signs in again (or asks the person) and goes
            // live again, which wakes the sender.
            return .retry(after: idleWait, .notSyncing)
        case .cancelled:
            return .retry(after: .zero, .notSyncing)
        case .unreachable, .timedOut, .serverError, .badResponse, .anotherPoller, .paymentDeclined, .tooLarge:
            failures += 1
            return .retry(after: backoff.ceiling(afterFailure: failures) * min(max(jitter, 0), 1), .answerLost)
        }
    }

    /// Whether a try that ended with `error` may have left the message with the upstream all the
    /// same: the request may have reached it and only the answer was lost (cut, late, garbled, a
    /// gateway's 5xx, the try cancelled mid-way). Such an entry is no longer the person's to
    /// delete as never sent: its next try, under the same key, tells what became of it.
    public static func mayHaveArrived(after error: UpstreamError) -> Bool {
        switch error {
        case .unreachable, .timedOut, .serverError, .badResponse, .tooLarge, .cancelled: true
        case .refused, .forbidden, .rateLimited, .unauthorized, .anotherPoller, .paymentDeclined: false
        }
    }

    /// What to do after the copy could not store a sent message (or read the outbox): wait, then
    /// look again. The upstream has the message; the same key again later answers the same
    /// message, and storing it is tried then.
    public func storeFailed() -> Action {
        .wait(fullStorageWait, .storageFull)
    }

    /// Whether `wake` ends a wait for `pause`. A backoff ends when the network or syncing comes
    /// back or the person asks to try again, not because another message was written; what the
    /// upstream asked for (a 429) is waited out whatever happens.
    public func ends(_ pause: SendPause, by wake: SendWake) -> Bool {
        switch pause {
        case .nothingQueued, .notSyncing: true
        case .answerLost, .storageFull: wake != .written
        case .rateLimited: false
        }
    }
}

/// Why the sender waits.
public enum SendPause: String, Sendable, Equatable {
    case nothingQueued
    /// Offline, backing off, stopped or signing in again: the engine's sync is not live.
    case notSyncing
    /// A try's answer did not come: backing off before the same key goes again.
    case answerLost
    case rateLimited
    /// Sent, but not stored here.
    case storageFull
}

/// What wakes the sender.
public enum SendWake: Sendable, Equatable {
    /// A message was written (queued).
    case written
    /// Syncing went live (the network came back, a new session, syncing started).
    case syncing
    /// The person asked to send a failed message again.
    case tryAgain
}
