import Foundation
import Upstream

/// What the engine decides, apart from what it does: whether a cycle should run, when to wait and
/// how long at least, when a refused token is a loop, which problems end. A plain value: each
/// input is a mutating call that returns the actions to perform, in order, so every rule is tested
/// without an actor, a clock, a task or a socket (as `HTTPRequestDecoder` is for HTTP).
/// `SyncEngine` owns one and performs what it says.
public struct SyncPolicy: Sendable, Equatable {
    /// What the runner is to do.
    public enum Action: Sendable, Equatable {
        /// Start a cycle (session, cursor sync, polls). `reconnect`: one failed before.
        case startCycle(reconnect: Bool)
        /// Stop the cycle: cancel its task and any wait, drop the token.
        case stopCycle
        /// Wait before the next try: backoff for the `attempt`-th failure in a row, at least `atLeast`.
        case wait(attempt: Int, atLeast: Duration)
        /// End the pending wait now (the cycle then tries at once).
        case endWait
        /// The lifecycle grace period: start its timer, or cancel it.
        case startGrace(Duration)
        case cancelGrace
        /// Open a problem (or the `noInternet` one); end problems of these kinds.
        case raise(EngineProblem)
        case raiseNoInternet
        case clear([EngineProblem.Kind])
        /// Tell whoever waits on this try (Try again, Free space) that it did not get through.
        case reportFailure(EngineProblem?)
        /// Forget the accounts the upstream was behind on (stopping answered that question).
        case forgetBehind
        /// The connection's state as the page shows it (no retry time).
        case show(ConnectionState)
        /// The failure count shown goes back to 0.
        case resetAttemptCount
    }

    public let alwaysOn: Bool
    public let lifecycleGrace: Duration
    /// The least wait after a 409 (another poller took over).
    public let anotherPollerWait: Duration
    public private(set) var userEnabled = true
    public private(set) var dashboardVisible = false
    public private(set) var withinGrace = false
    public private(set) var online: Bool
    /// Why syncing waits for the person (storage full, the upstream went back); nil otherwise.
    public private(set) var pausedBy: EngineProblem.Kind?
    public private(set) var cycleRunning = false
    public private(set) var waiting = false
    /// Failed tries in a row, for the backoff: it resets only when a poll answers (or the network
    /// returns), so a server that fails every poll still backs off further each time.
    public private(set) var failuresInARow = 0
    /// Tokens taken back within `quickExpiry` of being issued, in a row without a backoff between.
    public private(set) var quickExpiries = 0

    /// A token refused sooner than this after it was issued counts towards a loop.
    public static let quickExpiry: Duration = .milliseconds(500)
    /// A person linking and unlinking in quick succession expires a few tokens quickly; a loop
    /// expires hundreds a second. Ten tells the two apart at once.
    public static let silentQuickExpiries = 10

    public init(alwaysOn: Bool, lifecycleGrace: Duration, online: Bool, anotherPollerWait: Duration = .seconds(3)) {
        self.alwaysOn = alwaysOn
        self.lifecycleGrace = lifecycleGrace
        self.online = online
        self.anotherPollerWait = anotherPollerWait
    }

    /// Syncing runs when the person wants it, someone looks (or `--always-on`, or within the grace
    /// after the last tab went), nothing waits for the person, and there is a network.
    public var shouldRun: Bool {
        userEnabled && (alwaysOn || dashboardVisible || withinGrace) && pausedBy == nil && online
    }

    public var paused: Bool { pausedBy != nil }

    // MARK: Inputs from outside

    /// Begins: a cycle if it should run.
    public mutating func activate() -> [Action] {
        reconcile()
    }

    /// `POST /api/engine/start`: a fresh start, so the first failure after it waits as a first
    /// failure does, not as the tenth of the run before the stop.
    public mutating func start() -> [Action] {
        var actions: [Action] = []
        if !userEnabled {
            failuresInARow = 0
            quickExpiries = 0
            actions.append(.resetAttemptCount)
        }
        userEnabled = true
        return actions + reconcile()
    }

    /// `POST /api/engine/stop`: the problems of trying end with it (the connection's, the store's
    /// refusing a write, the network being gone: nothing is being tried that could fail); a pause
    /// because the upstream went back ends too (Start checks the upstream again).
    public mutating func stop() -> [Action] {
        userEnabled = false
        var actions: [Action] = []
        if pausedBy == .upstreamBehind {
            pausedBy = nil
            actions += [.forgetBehind, .clear([.upstreamBehind])]
        }
        actions += reconcile()
        actions.append(.clear(Self.problemsOfTrying))
        return actions
    }

    /// What can only be wrong while syncing is being tried.
    static let problemsOfTrying = EngineProblem.Kind.allCases.filter { $0.isConnectionProblem || $0 == .storageFailure || $0 == .noInternet }

    /// Whether any dashboard tab is visible now; the grace period starts when the last one goes.
    public mutating func dashboardVisibility(_ visible: Bool) -> [Action] {
        let previous = dashboardVisible
        dashboardVisible = visible
        var actions: [Action] = []
        if visible {
            if withinGrace { actions.append(.cancelGrace) }
            withinGrace = false
        } else if previous {
            withinGrace = true
            actions.append(.startGrace(lifecycleGrace))
        }
        return actions + reconcile()
    }

    public mutating func graceEnded() -> [Action] {
        guard withinGrace else { return [] }
        withinGrace = false
        return reconcile()
    }

    /// The machine's network went or came back. When it is back, a pending wait is moot: the
    /// cycle restarts at once, with a fresh failure count.
    public mutating func network(online: Bool) -> [Action] {
        guard online != self.online else { return [] }
        self.online = online
        var actions: [Action] = []
        if online {
            failuresInARow = 0
            actions += [.clear([.noInternet]), .resetAttemptCount]
        }
        return actions + reconcile()
    }

    /// "Retry now": the pending wait ends, or a cycle starts if none runs and it should.
    public mutating func retryNow() -> [Action] {
        if waiting {
            waiting = false
            return [.endWait]
        }
        return cycleRunning ? [] : reconcile()
    }

    /// After space was freed or bought, or the upstream's answer was accepted: sync again.
    public mutating func resume() -> [Action] {
        guard pausedBy != nil else { return [] }
        pausedBy = nil
        return reconcile()
    }

    // MARK: Inputs from the cycle

    /// A poll answered: the failure count and the loop count start again.
    public mutating func pollAnswered() {
        failuresInARow = 0
        quickExpiries = 0
    }

    /// A step was answered 401. Silent renewal, or, after more than `silentQuickExpiries` tokens
    /// refused within `quickExpiry` of being issued in a row, a refused token (the caller raises
    /// `tokenRefused` and fails the try).
    public mutating func tokenRefused(after lasted: Duration) -> TokenDecision {
        quickExpiries = lasted < Self.quickExpiry ? quickExpiries + 1 : 0
        return quickExpiries > Self.silentQuickExpiries ? .refused(inARow: quickExpiries) : .renew
    }

    public enum TokenDecision: Sendable, Equatable {
        case renew
        case refused(inARow: Int)
    }

    /// What to do about an upstream call that failed with `error`.
    public enum CallDecision: Sendable, Equatable {
        /// The token expired: a new session, silently, then the same call.
        case renewToken
        /// Transient, and the call may be tried again under the hood (after its next short pause).
        case tryAgain
        /// The try failed: raise `problem` and wait at least `atLeast` before the next.
        case fail(EngineProblem, atLeast: Duration)
        /// The call was cancelled: the cycle it belonged to is over.
        case cancelled
    }

    /// A call failed. `withToken`: it carried the session's token (a 401 then means expiry, unless
    /// tokens are refused in a loop; a 401 to the session call itself is a refusal).
    /// `tokenLasted`: how long that token had been issued. `mayTryAgain`: an important call
    /// (session, cursor sync) with pauses left, which gets them for a failure that looks transient.
    public mutating func callFailed(_ error: UpstreamError, withToken: Bool, tokenLasted: Duration, mayTryAgain: Bool) -> CallDecision {
        if error == .unauthorized && withToken {
            if case .refused(let inARow) = tokenRefused(after: tokenLasted) {
                return .fail(EngineProblem(kind: .tokenRefused, debug: "401 on \(inARow) new tokens in a row, each within \(Self.quickExpiry)"),
                             atLeast: .zero)
            }
            return .renewToken
        }
        switch error {
        case .unreachable, .timedOut, .serverError, .badResponse:
            if mayTryAgain { return .tryAgain }
        default:
            break
        }
        switch error {
        case .cancelled:
            return .cancelled
        case .anotherPoller:
            return .fail(EngineProblem(kind: .anotherPoller, debug: "\(error)"), atLeast: anotherPollerWait)
        case .serverError:
            return .fail(EngineProblem(kind: .upstreamError, debug: "\(error)"), atLeast: .zero)
        case .badResponse, .paymentDeclined, .forbidden, .tooLarge, .refused:
            return .fail(EngineProblem(kind: .badResponse, debug: "\(error)"), atLeast: .zero)
        case .unreachable, .timedOut:
            return .fail(EngineProblem(kind: .unreachable, debug: "\(error)"), atLeast: .zero)
        case .unauthorized:
            return .fail(EngineProblem(kind: .tokenRefused, debug: "\(error)"), atLeast: .zero)
        case .rateLimited(let retryAfter):
            return .fail(EngineProblem(kind: .upstreamError, debug: "\(error)"), atLeast: retryAfter ?? .zero)
        }
    }

    /// The try failed (with `problem`, or for an unexpected reason): wait, at least `atLeast`
    /// (3 s after a 409), then try again.
    public mutating func tryFailed(_ problem: EngineProblem?, atLeast: Duration) -> [Action] {
        guard cycleRunning else { return [] }
        failuresInARow += 1
        quickExpiries = 0  // a backoff follows: whatever comes next is not a loop
        waiting = true
        return (problem.map { [.raise($0)] } ?? []) + [.reportFailure(problem), .wait(attempt: failuresInARow, atLeast: atLeast)]
    }

    /// The wait ended by itself or was ended: the cycle tries again.
    public mutating func waitEnded() -> [Action] {
        waiting = false
        return cycleRunning ? [.show(.connecting)] : []
    }

    /// The cycle stopped itself and waits for the person: storage full, or the upstream went back.
    /// The upstream answered, so whatever was wrong with the connection is over.
    public mutating func paused(by problem: EngineProblem) -> [Action] {
        pausedBy = problem.kind
        var actions: [Action] = [.clear(EngineProblem.Kind.allCases.filter(\.isConnectionProblem)), .raise(problem),
                                 .reportFailure(problem)]
        if cycleRunning {
            cycleRunning = false
            waiting = false
            actions.append(.stopCycle)
        }
        return actions + [.show(.paused)]
    }

    // MARK: Deciding

    /// Starts or stops the cycle so that it runs exactly when it should.
    private mutating func reconcile() -> [Action] {
        if shouldRun {
            guard !cycleRunning else { return [] }
            cycleRunning = true
            return [.startCycle(reconnect: failuresInARow > 0)]
        }
        var actions: [Action] = []
        if cycleRunning {
            cycleRunning = false
            waiting = false
            actions.append(.stopCycle)
        }
        // Stopped by the person says so whatever else stands in the way; offline is news only to
        // someone who wants to sync and is not waiting on something else.
        if userEnabled && !paused && !online { actions.append(.raiseNoInternet) }
        actions.append(.show(!userEnabled ? .stopped : paused ? .paused : !online ? .offline : .stopped))
        return actions
    }
}
