import Engine
import Testing
import TestSupport
import Upstream

/// The seeds' invariant under random orderings: at most one active cycle, and the engine never
/// has two polls running at once, whatever the order of user actions, network flaps, timers and
/// late answers.
@Suite("Random interleavings")
struct InterleavingTests {
    enum Step: CaseIterable {
        case start, stop, retryNow, networkDown, networkUp, answerSuccess, answerFailure, answerLate, advanceTime, tabs
    }

    @Test func aThousandRandomInterleavingsNeverShowTwoCycles() async throws {
        var random = TestRandom(seed: 20261129)
        for run in 0..<1000 {
            var settings = FakeUpstream.Settings()
            settings.endCancelledCalls = Bool.random(using: &random)  // half the runs get late answers
            let harness = try EngineHarness(options: EngineOptions(alwaysOn: Bool.random(using: &random)), settings: settings,
                                            seed: UInt64(run))
            await harness.engine.activate()
            var nextID: Int64 = 1
            for _ in 0..<15 {
                switch Step.allCases.randomElement(using: &random)! {
                case .start: await harness.engine.start()
                case .stop: await harness.engine.stop()
                case .retryNow: await harness.engine.retryNow()
                case .networkDown: harness.network.set(online: false)
                case .networkUp: harness.network.set(online: true)
                case .answerSuccess:
                    if let call = harness.upstream.openCalls(.messages).randomElement(using: &random) {
                        call.succeed(answer(primary: [nextID]))
                        nextID += 1
                    }
                case .answerFailure:
                    let errors: [UpstreamError] = [.unauthorized, .anotherPoller, .serverError(status: 500), .badResponse("x"), .timedOut]
                    harness.upstream.openCalls(.messages).randomElement(using: &random)?.fail(errors.randomElement(using: &random)!)
                case .answerLate:
                    // Answer a call the engine already gave up on, as a response racing cancellation.
                    harness.upstream.calls.filter { $0.isCancelled && $0.isOpen }.randomElement(using: &random)?.succeed(answer(primary: [nextID]))
                case .advanceTime:
                    harness.clock.advance(by: .milliseconds(Int64.random(in: 0...40_000, using: &random)))
                case .tabs:
                    await harness.engine.setDashboardVisible(Bool.random(using: &random))
                }
                for _ in 0..<20 { await Task.yield() }
                let status = await harness.engine.connectionStatus()
                #expect(status.activeCycles <= 1)
                #expect(harness.upstream.livePolls <= 1, "run \(run): two polls running")
            }
            #expect(harness.upstream.mostConcurrentPolls <= 1, "run \(run)")
            await harness.engine.stop()
        }
    }
}
