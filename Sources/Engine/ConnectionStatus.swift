import Foundation

/// Where syncing stands (CONTRACT section 5, `connection`).
public enum ConnectionState: String, Sendable, Codable, CaseIterable {
    /// Not syncing: stopped by the user, or no dashboard tab is visible.
    case stopped
    /// Getting a token, syncing cursors, or retrying after a failure.
    case connecting
    /// A poll has succeeded in this cycle; messages arrive as they are sent.
    case live
    /// Failed; waiting `retryAt` before trying again.
    case waiting
    /// The machine has no network; nothing is tried until it returns.
    case offline
    /// Waiting for the person: storage is full, or the upstream went back (reset or restored).
    case paused
}

/// The `connection` object of the state snapshot.
public struct ConnectionStatus: Sendable, Equatable, Codable {
    public var state: ConnectionState
    /// Failures in a row; 0 after a success.
    public var attempt: Int
    public var retryAt: Date?
    public var lastSuccessAt: Date?
    /// 0 or 1: whether a sync cycle is current.
    public var activeCycles: Int
    public var upstream: String
    /// How long the upstream holds a poll: a live connection hears from it at least this often, so
    /// a page can tell a quiet account from a stalled upstream.
    public var holdSeconds: Int

    public init(state: ConnectionState = .stopped, attempt: Int = 0, retryAt: Date? = nil, lastSuccessAt: Date? = nil,
                activeCycles: Int = 0, upstream: String, holdSeconds: Int = 25) {
        self.state = state
        self.attempt = attempt
        self.retryAt = retryAt
        self.lastSuccessAt = lastSuccessAt
        self.activeCycles = activeCycles
        self.upstream = upstream
        self.holdSeconds = holdSeconds
    }

    /// `retryAt` and `lastSuccessAt` are written as null, not left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(attempt, forKey: .attempt)
        try container.encode(retryAt, forKey: .retryAt)
        try container.encode(lastSuccessAt, forKey: .lastSuccessAt)
        try container.encode(activeCycles, forKey: .activeCycles)
        try container.encode(upstream, forKey: .upstream)
        try container.encode(holdSeconds, forKey: .holdSeconds)
    }
}

/// Counters for metrics and tests.
public struct EngineCounters: Sendable, Equatable {
    /// Results (answers or failures) that arrived for a cycle that was no longer current.
    public var staleResultsDropped = 0
    public var cyclesStarted = 0
    public var pollsStarted = 0
    public var pollsSucceeded = 0
    public var pollsFailed = 0
    /// Cycles started again after a failure.
    public var reconnects = 0
    public var tokenRefreshes = 0
    public var unknownStreamsIgnored = 0
    /// Times the cursor sync found the upstream behind the local copy (reset or restored).
    public var upstreamBehind = 0
    /// Long polls refused because another was in flight: the seeds' loud guard, never by construction.
    public var secondPollsRefused = 0
    public var messagesStored: [String: Int] = [:]
    /// Backoff waits drawn (a fixed-size histogram: a long outage must not grow memory).
    public var backoff = Histogram(bounds: [0.1, 0.5, 1, 2, 4, 8, 16, 30])

    public init() {}
}
