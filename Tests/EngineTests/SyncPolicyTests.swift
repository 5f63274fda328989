import Testing
import TestSupport
import Upstream
@testable import Engine

/// The engine's decisions as a plain value: no actor, clock, task or socket.
@Suite("Sync policy")
struct SyncPolicyTests {
    private static let grace = Duration.seconds(30)
    private let connectionProblems = EngineProblem.Kind.allCases.filter(\.isConnectionProblem)

    private func policy(alwaysOn: Bool = false, online: Bool = true) -> SyncPolicy {
        SyncPolicy(alwaysOn: alwaysOn, lifecycleGrace: Self.grace, online: online)
    }

    // MARK: Lifecycle

    @Test func aCycleRunsOnlyWhileSomeoneLooksOrAlwaysOnAndStopsAfterTheGrace() {
        var policy = policy()
        #expect(policy.activate() == [.show(.stopped)], "nobody looks yet")
        #expect(policy.dashboardVisibility(true) == [.startCycle(reconnect: false)])
        #expect(policy.dashboardVisibility(true) == [], "a second report of the same changes nothing")
        #expect(policy.dashboardVisibility(false) == [.startGrace(Self.grace)], "the grace begins; the cycle goes on")
        #expect(policy.cycleRunning)
        #expect(policy.dashboardVisibility(true) == [.cancelGrace], "back within the grace: nothing restarts")
        _ = policy.dashboardVisibility(false)
        #expect(policy.graceEnded() == [.stopCycle, .show(.stopped)])
        #expect(policy.graceEnded() == [], "a late timer of a cancelled grace does nothing")

        var always = self.policy(alwaysOn: true)
        #expect(always.activate() == [.startCycle(reconnect: false)])
        #expect(always.dashboardVisibility(false) == [], "always on does not care who looks")
    }

    @Test func everyCombinationRunsACycleExactlyWhenItShould() {
        for alwaysOn in [false, true] {
            for online in [false, true] {
                for visible in [false, true] {
                    for stopped in [false, true] {
                        for paused in [false, true] {
                            var policy = policy(alwaysOn: alwaysOn, online: online)
                            _ = policy.activate()
                            _ = policy.dashboardVisibility(visible)
                            if stopped { _ = policy.stop() }
                            if paused, policy.cycleRunning { _ = policy.paused(by: EngineProblem(kind: .outOfSpace, debug: "")) }
                            let expected = !stopped && (alwaysOn || visible) && online && !policy.paused
                            #expect(policy.shouldRun == expected)
                            #expect(policy.cycleRunning == expected,
                                    "alwaysOn \(alwaysOn), online \(online), visible \(visible), stopped \(stopped), paused \(paused)")
                        }
                    }
                }
            }
        }
    }

    @Test func whatIsShownWhenNoCycleRunsSaysWhy() {
        var offline = policy(alwaysOn: true, online: false)
        #expect(offline.activate() == [.raiseNoInternet, .show(.offline)])
        #expect(offline.network(online: true) == [.clear([.noInternet]), .resetAttemptCount, .startCycle(reconnect: false)])
        #expect(offline.network(online: true) == [], "only transitions count")

        var stopped = policy(alwaysOn: true)
        _ = stopped.activate()
        #expect(stopped.stop() == [.stopCycle, .show(.stopped), .clear(SyncPolicy.problemsOfTrying)])
        #expect(stopped.start() == [.resetAttemptCount, .startCycle(reconnect: false)])
    }

    @Test func stoppedByThePersonIsWhatIsShownWhateverElseStandsInTheWay() {
        var offline = policy(alwaysOn: true, online: false)
        _ = offline.activate()
        #expect(offline.stop() == [.show(.stopped), .clear(SyncPolicy.problemsOfTrying)], "not Offline: the person stopped it")
        #expect(SyncPolicy.problemsOfTrying.contains(.noInternet) && SyncPolicy.problemsOfTrying.contains(.storageFailure))
        #expect(offline.start() == [.resetAttemptCount, .raiseNoInternet, .show(.offline)], "Start while offline says offline again")

        var paused = policy(alwaysOn: true)
        _ = paused.activate()
        _ = paused.paused(by: EngineProblem(kind: .outOfSpace, debug: "quota"))
        #expect(paused.stop() == [.show(.stopped), .clear(SyncPolicy.problemsOfTrying)], "not Paused: the person stopped it")
        #expect(paused.start() == [.resetAttemptCount, .show(.paused)], "the pause is still there after Start")
    }

    @Test func startBeginsWithAFreshFailureCount() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        for attempt in 1...3 {
            #expect(policy.tryFailed(nil, atLeast: .zero).last == .wait(attempt: attempt, atLeast: .zero))
            _ = policy.waitEnded()
        }
        _ = policy.stop()
        _ = policy.start()
        #expect(policy.tryFailed(nil, atLeast: .zero).last == .wait(attempt: 1, atLeast: .zero), "the first failure after Start waits as a first")
    }

    // MARK: Failures and waits

    @Test func eachFailureInARowWaitsLongerUntilAPollAnswers() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        let problem = EngineProblem(kind: .upstreamError, debug: "500")
        #expect(policy.tryFailed(problem, atLeast: .zero) == [.raise(problem), .reportFailure(problem), .wait(attempt: 1, atLeast: .zero)])
        #expect(policy.waitEnded() == [.show(.connecting)])
        #expect(policy.tryFailed(nil, atLeast: .seconds(3)) == [.reportFailure(nil), .wait(attempt: 2, atLeast: .seconds(3))])
        _ = policy.waitEnded()
        #expect(policy.tryFailed(problem, atLeast: .zero).last == .wait(attempt: 3, atLeast: .zero),
                "connecting again is not success: only an answered poll resets the count")
        _ = policy.waitEnded()
        policy.pollAnswered()
        #expect(policy.tryFailed(problem, atLeast: .zero).last == .wait(attempt: 1, atLeast: .zero))
    }

    @Test func retryNowEndsTheWaitOrStartsACycleButNeverASecond() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        #expect(policy.retryNow() == [], "a cycle runs and does not wait: nothing to do")
        _ = policy.tryFailed(nil, atLeast: .zero)
        #expect(policy.retryNow() == [.endWait])
        #expect(policy.retryNow() == [], "the wait is over already")
        _ = policy.stop()
        #expect(policy.retryNow() == [.show(.stopped)], "stopped by the person: retry does not start it")
    }

    @Test func theNetworkComingBackStartsAgainWithAFreshCount() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        _ = policy.tryFailed(nil, atLeast: .zero)
        _ = policy.tryFailed(nil, atLeast: .zero)
        #expect(policy.network(online: false) == [.stopCycle, .raiseNoInternet, .show(.offline)])
        #expect(policy.network(online: true) == [.clear([.noInternet]), .resetAttemptCount, .startCycle(reconnect: false)])
        #expect(policy.failuresInARow == 0)
    }

    // MARK: Tokens

    @Test func tenQuickRefusalsAreRenewedSilentlyTheEleventhIsALoop() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        for _ in 1...SyncPolicy.silentQuickExpiries {
            #expect(policy.tokenRefused(after: .milliseconds(10)) == .renew)
        }
        #expect(policy.tokenRefused(after: .milliseconds(10)) == .refused(inARow: 11))
    }

    @Test func aTokenThatLastedAnAnswerOrABackoffStartsTheLoopCountAgain() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        for reset in 0..<3 {
            for _ in 1...SyncPolicy.silentQuickExpiries { _ = policy.tokenRefused(after: .milliseconds(10)) }
            switch reset {
            case 0: #expect(policy.tokenRefused(after: .seconds(20)) == .renew, "a held poll ended by an expiry")
            case 1: policy.pollAnswered()
            default:
                _ = policy.tryFailed(nil, atLeast: .zero)
                _ = policy.waitEnded()
            }
            #expect(policy.quickExpiries == 0, "reset \(reset)")
        }
    }

    // MARK: Failed calls

    @Test func eachFailureOfACallIsDecidedByItsKind() {
        var policy = SyncPolicy(alwaysOn: true, lifecycleGrace: Self.grace, online: true, anotherPollerWait: .seconds(3))
        func kind(_ decision: SyncPolicy.CallDecision) -> String {
            switch decision {
            case .renewToken: "renew"
            case .tryAgain: "again"
            case .cancelled: "cancelled"
            case .fail(let problem, let atLeast): "\(problem.kind.rawValue) \(atLeast)"
            }
        }
        let cases: [(UpstreamError, String)] = [
            (.serverError(status: 503), "upstreamError 0.0 seconds"), (.badResponse("x"), "badResponse 0.0 seconds"),
            (.paymentDeclined, "badResponse 0.0 seconds"), (.unreachable("refused"), "unreachable 0.0 seconds"),
            (.timedOut, "unreachable 0.0 seconds"), (.anotherPoller, "anotherPoller 3.0 seconds"), (.cancelled, "cancelled"),
            (.rateLimited(retryAfter: .milliseconds(7_500)), "upstreamError 7.5 seconds"), (.rateLimited(retryAfter: nil), "upstreamError 0.0 seconds"),
        ]
        for (error, expected) in cases {
            #expect(kind(policy.callFailed(error, withToken: true, tokenLasted: .seconds(60), mayTryAgain: false)) == expected, "\(error)")
        }
        for transient in [UpstreamError.serverError(status: 500), .badResponse("x"), .unreachable("reset"), .timedOut] {
            #expect(policy.callFailed(transient, withToken: true, tokenLasted: .seconds(60), mayTryAgain: true) == .tryAgain,
                    "an important call tries \(transient) again under the hood")
        }
        #expect(policy.callFailed(.anotherPoller, withToken: true, tokenLasted: .seconds(60), mayTryAgain: true) != .tryAgain,
                "a takeover is no transient failure")
        #expect(policy.callFailed(.rateLimited(retryAfter: .seconds(1)), withToken: true, tokenLasted: .seconds(60), mayTryAgain: true) != .tryAgain,
                "asked to slow down, an important call does not try again at once")
        #expect(policy.callFailed(.unauthorized, withToken: true, tokenLasted: .seconds(60), mayTryAgain: true) == .renewToken)
        #expect(kind(policy.callFailed(.unauthorized, withToken: false, tokenLasted: .seconds(60), mayTryAgain: true)) == "tokenRefused 0.0 seconds",
                "a 401 to the session call itself is a refusal")
    }

    // MARK: Pauses

    @Test func aPauseEndsConnectionTroubleStopsAndWaitsForThePerson() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        let full = EngineProblem(kind: .outOfSpace, debug: "quota")
        #expect(policy.paused(by: full) == [.clear(connectionProblems), .raise(full), .reportFailure(full), .stopCycle, .show(.paused)])
        #expect(policy.retryNow() == [.show(.paused)], "Try again does not end a pause")
        #expect(policy.start() == [.show(.paused)])
        #expect(policy.resume() == [.startCycle(reconnect: false)])
        #expect(policy.resume() == [], "nothing to resume")
    }

    @Test func stoppingAnswersAnUpstreamThatWentBack() {
        var policy = policy(alwaysOn: true)
        _ = policy.activate()
        _ = policy.paused(by: EngineProblem(kind: .upstreamBehind, debug: "newest id 2"))
        #expect(policy.stop() == [.forgetBehind, .clear([.upstreamBehind]), .show(.stopped), .clear(SyncPolicy.problemsOfTrying)])
        #expect(!policy.paused)
        #expect(policy.start() == [.resetAttemptCount, .startCycle(reconnect: false)], "Start checks the upstream again")
    }

    // MARK: Any order

    /// What the engine may be told, in any order: never two cycles, a stop only of a running one,
    /// a wait only within one, and a cycle exactly when it should run.
    @Test func aThousandRandomSequencesNeverRunTwoCyclesAndRunOneExactlyWhenItShould() {
        var random = TestRandom(seed: 2026)
        for sequence in 0..<1000 {
            var policy = policy(alwaysOn: Bool.random(using: &random), online: Bool.random(using: &random))
            var running = policy.activate().contains(.startCycle(reconnect: false))
            var waiting = false
            for step in 0..<60 {
                var actions: [SyncPolicy.Action] = []
                switch Int.random(in: 0..<12, using: &random) {
                case 0: actions = policy.activate()
                case 1: actions = policy.start()
                case 2: actions = policy.stop()
                case 3: actions = policy.dashboardVisibility(Bool.random(using: &random))
                case 4: actions = policy.graceEnded()
                case 5: actions = policy.network(online: Bool.random(using: &random))
                case 6: actions = policy.retryNow()
                case 7: actions = policy.resume()
                case 8: if running && !waiting { actions = policy.tryFailed(nil, atLeast: .zero) }
                case 9: if waiting { actions = policy.waitEnded() }
                case 10: if running && !waiting { actions = policy.paused(by: EngineProblem(kind: .outOfSpace, debug: "")) }
                default: if running { policy.pollAnswered() }
                }
                for action in actions {
                    switch action {
                    case .startCycle:
                        #expect(!running, "sequence \(sequence), step \(step): a second cycle")
                        running = true
                    case .stopCycle:
                        #expect(running, "sequence \(sequence), step \(step): stopping what does not run")
                        running = false
                        waiting = false
                    case .wait:
                        #expect(running && !waiting, "sequence \(sequence), step \(step): a wait outside a cycle")
                        waiting = true
                    case .endWait:
                        #expect(waiting, "sequence \(sequence), step \(step)")
                        waiting = false
                    default:
                        break
                    }
                }
                if case .show(.connecting) = actions.last { waiting = false }
                #expect(running == policy.cycleRunning && waiting == policy.waiting, "sequence \(sequence), step \(step)")
                #expect(running == policy.shouldRun, "sequence \(sequence), step \(step): runs exactly when it should")
            }
        }
    }
}
