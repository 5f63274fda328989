import Foundation
import SQLite
import Store
import Testing
import TestSupport
import Upstream
@testable import Engine

/// A cycle that went stale while it waited (a stop, the network going, the grace ending) acts on
/// nothing when its await returns; what it stored is still told; a cause that comes back is shown
/// again; the engine's start and Start begin from what is true now. In virtual time, with the
/// engine held at each of its awaits in turn (`GatedStore`, `FakeUpstream`).
@Suite("Engine: stale cycles and what is told")
struct StaleCycleTests {
    static let diskError = StoreError.ioFailure(SQLiteError(code: 10, message: "disk I/O error"))

    /// Where the cycle is held while the network goes away.
    enum AwaitPoint: CaseIterable, CustomStringConvertible {
        case session, adoptingTheSession, lastMessageInfo, storedPosition, writabilityCheck

        var description: String {
            switch self {
            case .session: "the session call"
            case .adoptingTheSession: "the store's account ids while the session is adopted"
            case .lastMessageInfo: "the cursor sync"
            case .storedPosition: "the store's newest ids after the cursor sync"
            case .writabilityCheck: "the store's writability check"
            }
        }
    }

    /// Each await of the way to "connected": the network goes while the cycle waits there, the
    /// await returns after, and the stale cycle neither goes live, nor clears a problem, nor
    /// notes anything.
    @Test(arguments: AwaitPoint.allCases)
    func aCycleThatWentStaleAtAnAwaitActsOnNothing(_ point: AwaitPoint) async throws {
        var settings = FakeUpstream.Settings()
        settings.endCancelledCalls = false  // answers arrive after the cycle went stale, as real ones can
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        let problem: EngineProblem.Kind
        if point == .writabilityCheck {
            // A write failed: the next try checks the store before it polls.
            harness.gate.failNext(.apply, with: Self.diskError)
            await harness.upstream.next(.messages).succeed(answer(primary: [1]))
            problem = .storageFailure
        } else {
            await harness.upstream.next(.messages).fail(.serverError(status: 500))
            problem = .upstreamError
        }
        _ = await harness.recorder.connectionState(.waiting)
        #expect(await harness.engine.problems().map(\.kind) == [problem])

        // The next try, held at `point`.
        var pending: FakeUpstream.Call?
        switch point {
        case .session: harness.upstream.settings.withLock { $0.session = nil }
        case .lastMessageInfo: harness.upstream.settings.withLock { $0.lastMessageInfo = nil }
        case .adoptingTheSession: harness.gate.holdNext(.accountIDs)
        case .storedPosition: harness.gate.holdNext(.newestID)
        case .writabilityCheck: harness.gate.holdNext(.checkWritable)
        }
        await harness.engine.retryNow()
        switch point {
        case .session: pending = await harness.upstream.next(.session)
        case .lastMessageInfo: pending = await harness.upstream.next(.lastMessageInfo)
        case .adoptingTheSession: await harness.gate.waitUntilHeld(.accountIDs)
        case .storedPosition: await harness.gate.waitUntilHeld(.newestID)
        case .writabilityCheck: await harness.gate.waitUntilHeld(.checkWritable)
        }

        let dropped = await harness.engine.engineCounters().staleResultsDropped
        harness.network.set(online: false)
        _ = await harness.recorder.connectionState(.offline)
        switch point {
        case .session: pending?.succeed(UpstreamSession(token: "t2", primaryUserId: 1, linkedUserId: 2, storageQuotaBytes: 1_000_000))
        case .lastMessageInfo: pending?.succeed(LastMessageInfo(primaryLastId: 1, linkedLastId: 0) as LastMessageInfo?)
        case .adoptingTheSession: harness.gate.release(.accountIDs)
        case .storedPosition: harness.gate.release(.newestID)
        case .writabilityCheck: harness.gate.release(.checkWritable)
        }
        #expect(await eventually { await harness.engine.engineCounters().staleResultsDropped == dropped + 1 }, "dropped, at \(point)")
        let status = await harness.engine.connectionStatus()
        #expect(status.state == .offline, "not live: no cycle runs (\(point))")
        #expect(status.activeCycles == 0)
        #expect(Set(await harness.engine.problems().map(\.kind)) == [problem, .noInternet], "nothing cleared (\(point))")
        #expect(harness.upstream.openCalls(.messages).isEmpty, "and nothing polled")
    }

    /// A stale cycle that gets through to "connected" would set Live for the cycle after it and
    /// let a waiting Try again believe it worked.
    @Test func aStaleCycleDoesNotMakeTheNextCyclesTryAgainLookRecovered() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).fail(.serverError(status: 500))
        _ = await harness.recorder.connectionState(.waiting)
        harness.gate.holdNext(.newestID)
        await harness.engine.retryNow()
        await harness.gate.waitUntilHeld(.newestID)

        // Stop and Start: a new cycle, whose cursor sync the test answers.
        await harness.engine.stop()
        harness.upstream.settings.withLock { $0.lastMessageInfo = nil }
        await harness.engine.start()
        let newSync = await harness.upstream.next(.lastMessageInfo)
        let tryAgain = Task { await harness.engine.retryAndWait() }
        #expect(await eventually { await !harness.engine.outcomeWaiters.isEmpty })

        harness.gate.release(.newestID)
        #expect(await eventually { await harness.engine.engineCounters().staleResultsDropped == 1 })
        #expect(await harness.engine.connectionStatus().state == .connecting, "the new cycle has not connected")
        #expect(await harness.engine.settleWait == nil, "nothing counts down to a recovery")
        newSync.fail(.anotherPoller)
        #expect(await tryAgain.value == false, "the new cycle's failure is the answer")
    }

    // MARK: What is stored is told

    enum Interruption: CaseIterable { case stop, networkGone, graceEnded }

    @Test(arguments: Interruption.allCases)
    func aBatchCommittedForACycleThatWentStaleIsStillToldSilently(_ interruption: Interruption) async throws {
        let harness = try EngineHarness(options: EngineOptions(alwaysOn: false))
        await harness.engine.setDashboardVisible(true)
        await harness.engine.activate()
        harness.gate.holdNext(.apply)
        await harness.upstream.next(.messages).succeed(answer(primary: [1, 2]))
        await harness.gate.waitUntilHeld(.apply)
        switch interruption {
        case .stop:
            await harness.engine.stop()
        case .networkGone:
            harness.network.set(online: false)
            _ = await harness.recorder.connectionState(.offline)
        case .graceEnded:
            await harness.engine.setDashboardVisible(false)
            await harness.clock.waitForSleepers()
            harness.clock.advance(by: .seconds(30))
            _ = await harness.recorder.connectionState(.stopped)
        }
        harness.gate.release(.apply)
        #expect(await eventually { !harness.recorder.messageEvents.isEmpty }, "told after \(interruption)")
        let events = harness.recorder.messageEvents
        #expect(events.map(\.ids) == [[1, 2]])
        #expect(events.map(\.delivery) == [.silent], "nobody asked to hear of it now")
        #expect(try await harness.store.messages(of: .primary).messages.map(\.id).sorted() == [1, 2])
        #expect(await harness.engine.engineCounters().staleResultsDropped == 1)
    }

    // MARK: A cause that persists is shown again

    @Test func aStorageFailureThatPersistsAfterStopAndStartIsRaisedAgain() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        harness.gate.failNext(.apply, with: Self.diskError)
        await harness.upstream.next(.messages).succeed(answer(primary: [1]))
        _ = await harness.recorder.connectionState(.waiting)
        let raised = { harness.recorder.events.filter { if case .problemRaised(let problem) = $0 { problem.kind == .storageFailure } else { false } }.count }
        #expect(raised() == 1)

        await harness.engine.stop()  // the person's Stop syncing on that error
        #expect(await harness.engine.problems().isEmpty, "nothing is tried, so nothing can fail")
        #expect(harness.recorder.events.contains { if case .problemCleared(.storageFailure) = $0 { true } else { false } })

        // Start: the disk still refuses, the same way.
        harness.gate.failNext(.checkWritable, with: Self.diskError)
        harness.gate.failNext(.apply, with: Self.diskError)
        await harness.engine.start()
        await harness.upstream.next(.messages).succeed(answer(primary: [1]))
        #expect(await eventually { raised() == 2 }, "raised again, so the registry shows it again")
    }

    @Test func theSameProblemRaisedAgainIsToldAgain() {
        var board = ProblemBoard()
        let problem = EngineProblem(kind: .storageFailure, debug: "disk I/O error")
        let first = board.raise(problem), again = board.raise(problem)
        #expect(first.count == 1)
        #expect(again.count == 1, "the registry, not the board, knows whether it is shown")
    }

    // MARK: Starting

    @Test func theNetworkComingUpBeforeTheFirstSubscriptionIsNotMissed() async throws {
        let harness = try EngineHarness(online: false)
        harness.network.set(online: true)  // before `activate` subscribes: not a transition it hears
        await harness.engine.activate()
        #expect(await harness.engine.connectionStatus().state == .connecting)
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.problems().isEmpty, "no offline error")
    }

    @Test func startBeginsWithAFreshBackoffCount() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        for attempt in 1...3 {
            await harness.upstream.next(.messages).fail(.serverError(status: 500))
            #expect(await harness.recorder.connectionState(.waiting).attempt == attempt)
            await harness.engine.retryNow()
        }
        await harness.engine.stop()
        await harness.engine.start()
        await harness.upstream.next(.messages).fail(.serverError(status: 500))
        let waiting = await harness.recorder.connectionState(.waiting)
        #expect(waiting.attempt == 1, "the first failure after Start")
        let wait = try #require(waiting.retryAt).timeIntervalSince(EngineHarness.epoch.addingTimeInterval(harness.elapsed))
        #expect(wait <= 2, "so it waits within the first backoff step (base 2 s)")
    }

    @Test func stopWhileOfflineOrPausedShowsStopped() async throws {
        let offline = try EngineHarness(online: false)
        await offline.engine.activate()
        #expect(await offline.engine.connectionStatus().state == .offline)
        await offline.engine.stop()
        #expect(await offline.engine.connectionStatus().state == .stopped)
        #expect(await offline.engine.problems().isEmpty, "no offline error while stopped")

        let paused = try EngineHarness(options: EngineOptions(alwaysOn: true, quotaOverride: 100))
        await paused.engine.activate()
        await paused.upstream.next(.messages).succeed(answer(primary: Array(1...10), textLength: 50))
        _ = await paused.recorder.connectionState(.paused)
        await paused.engine.stop()
        #expect(await paused.engine.connectionStatus().state == .stopped)
        await paused.engine.start()
        #expect(await paused.engine.connectionStatus().state == .paused, "the storage problem is still there")
    }

    // MARK: Money

    @Test func aPurchaseAnsweredTwiceIsCreditedOnce() async throws {
        let harness = try EngineHarness(options: EngineOptions(alwaysOn: true, quotaOverride: 1000))
        #expect(await harness.engine.noteStoragePurchased(bytes: 500, newUpstreamQuota: 9999, idempotencyKey: "buy-1") == 1500)
        #expect(await harness.engine.noteStoragePurchased(bytes: 500, newUpstreamQuota: 9999, idempotencyKey: "buy-1") == 1500,
                "the replayed answer of the same purchase")
        #expect(await harness.engine.noteStoragePurchased(bytes: 500, newUpstreamQuota: 9999, idempotencyKey: "buy-2") == 2000)
    }

    // MARK: The loud guard

    @Test func theGuardRefusesAndCountsASecondPollAndFreesOnlyItsOwnSlot() {
        var guardian = SinglePollGuard()
        let first = UUID(), second = UUID()
        var began = guardian.begin(first)
        #expect(began)
        began = guardian.begin(second)
        #expect(!began, "a second poll while one is in flight")
        #expect(guardian.refused == 1)
        guardian.end(second)
        began = guardian.begin(second)
        #expect(!began, "another cycle's end frees nothing")
        #expect(guardian.refused == 2)
        guardian.end(first)
        began = guardian.begin(second)
        #expect(began)
        guardian.cycleStopped()
        began = guardian.begin(first)
        #expect(began, "a stopped cycle's poll no longer counts")
        #expect(guardian.refused == 2)
    }

    @Test func anEngineNeverTripsTheGuard() async throws {
        var settings = FakeUpstream.Settings()
        settings.endCancelledCalls = false
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        for _ in 0..<5 {
            _ = await harness.upstream.next(.messages)
            await harness.engine.stop()
            await harness.engine.start()
        }
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.engineCounters().secondPollsRefused == 0)
        #expect(harness.upstream.livePolls == 1, "the stopped cycles' polls were cancelled")
    }
}
