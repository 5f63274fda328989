import Foundation

/// What the engine takes from the outside world, so tests can run it in virtual time.
public struct EngineEnvironment: Sendable {
    /// Measures waits (backoff, grace, retries under the hood).
    public var clock: any Clock<Duration>
    /// Stamps `retryAt`, `lastSuccessAt` and `receivedAt`.
    public var now: @Sendable () -> Date
    /// Draws backoff jitter.
    public var random: any RandomNumberGenerator & Sendable
    public var network: any NetworkMonitor
    /// Where the cycle runs: the thread the upstream's sockets are served on, so that a message
    /// on its way in is read, stored and passed on without waking another thread (nil: the
    /// global pool, as in tests).
    public var executor: (any TaskExecutor)?

    public init(clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Date = { Date() },
                random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
                network: any NetworkMonitor = AlwaysOnline(), executor: (any TaskExecutor)? = nil) {
        self.clock = clock
        self.now = now
        self.random = random
        self.network = network
        self.executor = executor
    }

    /// Starts timing on `clock`: the closure tells the time since.
    public func stopwatch() -> @Sendable () -> Duration {
        clock.startStopwatch()
    }
}

extension Clock where Duration == Swift.Duration {
    fileprivate func startStopwatch() -> @Sendable () -> Duration {
        let began = now
        return { began.duration(to: now) }
    }
}

/// Tuning from the command line.
public struct EngineOptions: Sendable {
    /// Sync even when no dashboard tab is visible.
    public var alwaysOn: Bool
    public var backoff: Backoff
    /// How long the upstream holds a poll.
    public var holdSeconds: Int
    /// Replaces the quota the upstream announces (`--quota`); purchases add to it.
    public var quotaOverride: Int64?
    /// How long syncing goes on after the last visible tab went away.
    public var lifecycleGrace: Duration
    /// Waits between the tries of an important request (session, cursor sync) before its failure counts.
    public var importantRetryDelays: [Duration]
    /// The least wait after a 409.
    public var anotherPollerWait: Duration
    /// How long a "Try again" waits, once connected, for the poll to be refused before it counts
    /// as recovered (a takeover or an error comes back at once; a held poll does not).
    public var tryAgainSettle: Duration

    public init(alwaysOn: Bool = false, backoff: Backoff = Backoff(), holdSeconds: Int = 25, quotaOverride: Int64? = nil,
                lifecycleGrace: Duration = .seconds(30),
                importantRetryDelays: [Duration] = [.milliseconds(250), .milliseconds(750)],
                anotherPollerWait: Duration = .seconds(3), tryAgainSettle: Duration = .seconds(1)) {
        self.alwaysOn = alwaysOn
        self.backoff = backoff
        self.holdSeconds = holdSeconds
        self.quotaOverride = quotaOverride
        self.lifecycleGrace = lifecycleGrace
        self.importantRetryDelays = importantRetryDelays
        self.anotherPollerWait = anotherPollerWait
        self.tryAgainSettle = tryAgainSettle
    }
}
