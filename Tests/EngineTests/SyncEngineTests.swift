@testable import Engine
import Foundation
import Store
import Testing
import TestSupport
import Upstream

@Suite("Sync engine in virtual time")
struct SyncEngineTests {
    // MARK: The cycle

    @Test func theBacklogOfAFirstLoadIsSilentAndLiveMessagesNotify() async throws {
        var settings = FakeUpstream.Settings()
        settings.lastMessageInfo = LastMessageInfo(primaryLastId: 3, linkedLastId: 0)
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        let first = await harness.upstream.next(.messages)
        #expect(first.cursors == StreamCursors(primaryAfter: 0, linkedAfter: 0))
        first.succeed(answer(primary: [1, 2, 3]))
        let second = await harness.upstream.next(.messages)
        #expect(second.cursors == StreamCursors(primaryAfter: 3, linkedAfter: 0), "the cursor moved with the batch")
        second.succeed(answer(primary: [4], linked: [1]))
        _ = await harness.upstream.next(.messages)
        let events = harness.recorder.messageEvents
        #expect(events.map(\.account) == ["primary", "primary", "linked"])
        #expect(events.map(\.ids) == [[1, 2, 3], [4], [1]])
        #expect(events.map(\.notify) == [false, true, true])
        #expect(await harness.store.cursor(for: .primary) == "4")
        #expect(await harness.engine.connectionStatus().state == .live)
    }

    @Test func aFailureWaitsAJitteredBackoffAndSuccessResetsTheCount() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).fail(.serverError(status: 500))
        let waiting = await harness.recorder.connectionState(.waiting)
        #expect(waiting.attempt == 1)
        let wait = try #require(waiting.retryAt).timeIntervalSince(EngineHarness.epoch)
        #expect(wait >= 0 && wait <= 2, "the first wait is within 0...2 s")
        #expect(await harness.engine.problems().map(\.kind) == [.upstreamError])

        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(2))
        let second = await harness.upstream.next(.messages)
        #expect(await harness.engine.connectionStatus().attempt == 0, "live shows no failure count")
        #expect(await harness.engine.problems().isEmpty, "reconnecting cleared the problem")
        second.fail(.serverError(status: 503))
        #expect(await harness.recorder.connectionState(.waiting).attempt == 2)
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(4))
        await harness.upstream.next(.messages).succeed(answer(primary: [1]))
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.connectionStatus().attempt == 0)
        #expect(await harness.engine.engineCounters().backoff.count == 2)
    }

    @Test func retryNowSkipsTheWait() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).fail(.unreachable("refused"))
        _ = await harness.recorder.connectionState(.waiting)
        await harness.engine.retryNow()
        let again = await harness.upstream.next(.messages)
        #expect(again.isOpen)
        #expect(harness.elapsed == 0, "no virtual time passed")
    }

    @Test func aStaleResultAfterStopAndStartIsDroppedAndCounted() async throws {
        var settings = FakeUpstream.Settings()
        settings.endCancelledCalls = false
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        let old = await harness.upstream.next(.messages)
        await harness.engine.stop()
        await harness.engine.start()
        let current = await harness.upstream.next(.messages)
        #expect(old.isCancelled)
        old.succeed(answer(primary: [1, 2]))  // the answer that raced the cancellation
        #expect(await eventually { await harness.engine.engineCounters().staleResultsDropped == 1 })
        #expect(harness.recorder.messageEvents.isEmpty, "the feed never hears of it")
        #expect(await harness.store.cursor(for: .primary) == nil)
        #expect(current.isOpen && !current.isCancelled)
        current.succeed(answer(primary: [1, 2]))
        _ = await harness.upstream.next(.messages)
        #expect(harness.recorder.messageEvents.map(\.ids) == [[1, 2]])
    }

    // MARK: Tokens and takeovers

    @Test func expiriesAreSilentEvenRightAfterANewTokenAndARefusedSessionIsAnError() async throws {
        var settings = FakeUpstream.Settings()
        settings.lastMessageInfo = nil
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        let noMessages = LastMessageInfo(primaryLastId: 0, linkedLastId: 0)
        await harness.upstream.next(.lastMessageInfo).succeed(noMessages)
        await harness.upstream.next(.messages).fail(.unauthorized)
        // Expired again before the cursor sync (linking and unlinking in a row does this): still silent.
        await harness.upstream.next(.lastMessageInfo).fail(.unauthorized)
        await harness.upstream.next(.lastMessageInfo).succeed(noMessages)
        let poll = await harness.upstream.next(.messages)
        #expect(await harness.engine.problems().isEmpty)
        #expect(await harness.engine.engineCounters().tokenRefreshes == 2)
        #expect(harness.upstream.calls.filter { $0.kind == .session }.isEmpty, "sessions were answered automatically")

        // The session call itself refused: that is the user-visible error.
        harness.upstream.settings.withLock { $0.session = nil }
        poll.fail(.unauthorized)
        await harness.upstream.next(.session).fail(.unauthorized)
        _ = await harness.recorder.connectionState(.waiting)
        #expect(await harness.engine.problems().map(\.kind) == [.tokenRefused])
    }

    @Test func tokensTakenBackRightAfterEveryCursorSyncAreRefusedAfterTenSilentRefreshes() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        for _ in 1...10 {
            await harness.upstream.next(.messages).fail(.unauthorized)  // no time passes: each token lasted nothing
        }
        #expect(await harness.engine.problems().isEmpty)
        await harness.upstream.next(.messages).fail(.unauthorized)
        _ = await harness.recorder.connectionState(.waiting)
        #expect(await harness.engine.problems().map(\.kind) == [.tokenRefused])
        #expect(await harness.engine.engineCounters().tokenRefreshes == 10)
    }

    @Test func tokensThatLastedAWhileExpireSilentlyAsOftenAsTheyLike() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        for _ in 1...6 {
            let poll = await harness.upstream.next(.messages)
            harness.clock.advance(by: .seconds(5))  // a held poll, ended by an expiry
            poll.fail(.unauthorized)
        }
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.problems().isEmpty)
        #expect(await harness.engine.engineCounters().tokenRefreshes == 6)
    }

    @Test func a409WaitsAtLeastThreeSecondsAndIsReported() async throws {
        let harness = try EngineHarness(options: EngineOptions(alwaysOn: true, backoff: Backoff(base: .milliseconds(100), cap: .milliseconds(200))))
        await harness.engine.activate()
        await harness.upstream.next(.messages).fail(.anotherPoller)
        let waiting = await harness.recorder.connectionState(.waiting)
        #expect(try #require(waiting.retryAt).timeIntervalSince(EngineHarness.epoch) >= 3)
        #expect(await harness.engine.problems().map(\.kind) == [.anotherPoller])
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .milliseconds(2999))
        #expect(harness.upstream.livePolls == 0, "nothing before 3 s")
        harness.clock.advance(by: .milliseconds(1))
        _ = await harness.upstream.next(.messages)
    }

    @Test func importantRequestsAreRetriedUnderTheHoodBeforeAFailureCounts() async throws {
        var settings = FakeUpstream.Settings()
        let session = settings.session!
        settings.session = nil
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        await harness.upstream.next(.session).fail(.unreachable("reset"))
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .milliseconds(250))
        await harness.upstream.next(.session).fail(.serverError(status: 502))
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .milliseconds(750))
        await harness.upstream.next(.session).succeed(session)
        _ = await harness.upstream.next(.messages)
        let states = harness.recorder.events.compactMap { if case .connection(let status) = $0 { status.state } else { nil } }
        #expect(!states.contains(.waiting), "two transient failures never reached the user")
        #expect(await harness.engine.problems().isEmpty)
    }

    // MARK: Streams and accounts

    @Test func unknownUserIDsAreIgnored() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: [1], extra: ["99": [5, 6], "not-a-number": [1]]))
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.engineCounters().unknownStreamsIgnored == 2)
        #expect(harness.recorder.messageEvents.map(\.ids) == [[1]])
    }

    @Test func linkedAccountsAttachAndDetachThroughTheSession() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: [1], linked: [1, 2]))
        _ = await harness.upstream.next(.messages)
        #expect(await harness.store.cursor(for: .linked) == "2")

        harness.upstream.settings.withLock { $0.session?.linkedUserId = nil }
        harness.upstream.calls.last!.fail(.unauthorized)  // as the simulator expires the token on detach
        let afterDetach = await harness.upstream.next(.messages)
        #expect(afterDetach.cursors == StreamCursors(primaryAfter: 1, linkedAfter: nil))
        #expect(try await harness.store.messages(of: .linked).messages.isEmpty, "purged")
        #expect(await harness.store.cursor(for: .linked) == nil)
        #expect(harness.recorder.events.contains { if case .accountUnlinked(2) = $0 { true } else { false } })

        afterDetach.succeed(answer())
        let next = await harness.upstream.next(.messages)
        harness.upstream.settings.withLock { $0.session?.linkedUserId = 3 }
        next.fail(.unauthorized)
        let afterAttach = await harness.upstream.next(.messages)
        #expect(afterAttach.cursors == StreamCursors(primaryAfter: 1, linkedAfter: 0))
        #expect(harness.recorder.events.contains { if case .accountLinked(3, firstSync: false) = $0 { true } else { false } })
        afterAttach.succeed(answer(extra: ["3": [1]]))
        _ = await harness.upstream.next(.messages)
        #expect(try await harness.store.messages(of: .linked).messages.map(\.id) == [1])
    }

    // MARK: Storage

    @Test func aFullQuotaPausesWithNothingStoredAndResumesFromTheSameCursor() async throws {
        let harness = try EngineHarness(options: EngineOptions(alwaysOn: true, quotaOverride: 1000))
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: [1, 2], textLength: 50))
        let full = await harness.upstream.next(.messages)
        #expect(full.cursors?.primaryAfter == 2)
        full.succeed(answer(primary: Array(3...40), textLength: 50))
        _ = await harness.recorder.connectionState(.paused)
        let problem = try #require(await harness.engine.problems().first)
        #expect(problem.kind == .outOfSpace)
        #expect((problem.neededBytes ?? 0) > 1000)
        #expect(await harness.store.cursor(for: .primary) == "2", "the cursor did not move")
        #expect(harness.upstream.livePolls == 0, "paused: nothing is fetched")

        await harness.engine.noteStoragePurchased(bytes: 1_000_000, newUpstreamQuota: 2_000_000, idempotencyKey: "k")
        await harness.engine.resume()
        let again = await harness.upstream.next(.messages)
        #expect(again.cursors?.primaryAfter == 2, "the same messages are fetched again")
        again.succeed(answer(primary: Array(3...40), textLength: 50))
        _ = await harness.upstream.next(.messages)
        #expect(await harness.store.cursor(for: .primary) == "40")
        #expect(try await harness.store.messages(of: .primary, limit: 500).messages.count == 40, "nothing lost")
        #expect(await harness.engine.problems().isEmpty)
    }

    // MARK: Network and lifecycle

    @Test func offlineBurnsNoRetriesAndTheNetworkReturningRestartsAtOnce() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        let poll = await harness.upstream.next(.messages)
        harness.network.set(online: false)
        let offline = await harness.recorder.connectionState(.offline)
        #expect(offline.attempt == 0)
        #expect(poll.isCancelled)
        #expect(await harness.engine.problems().map(\.kind) == [.noInternet])
        harness.clock.advance(by: .seconds(120))
        #expect(harness.upstream.livePolls == 0)
        #expect(await harness.engine.engineCounters().backoff.count == 0, "no retries burnt")
        harness.network.set(online: true)
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.problems().isEmpty)
    }

    @Test func withoutAlwaysOnItRunsWhileATabIsVisibleAndThirtySecondsAfter() async throws {
        let harness = try EngineHarness(options: EngineOptions(alwaysOn: false))
        await harness.engine.activate()
        #expect(await harness.engine.connectionStatus().state == .stopped)
        #expect(harness.upstream.calls.isEmpty)
        await harness.engine.setDashboardVisible(true)
        let poll = await harness.upstream.next(.messages)
        await harness.engine.setDashboardVisible(false)
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(29))
        #expect(await harness.engine.connectionStatus().state == .live, "still within the grace")
        harness.clock.advance(by: .seconds(1))
        _ = await harness.recorder.connectionState(.stopped)
        #expect(poll.isCancelled)
        await harness.engine.setDashboardVisible(true)
        _ = await harness.upstream.next(.messages)
    }

    @Test func stopCancelsTheRequestAndEveryPendingTimer() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).fail(.timedOut)
        _ = await harness.recorder.connectionState(.waiting)
        await harness.clock.waitForSleepers()
        await harness.engine.stop()
        #expect(await eventually { harness.clock.sleeperCount == 0 }, "the backoff wait was cancelled")
        harness.clock.advance(by: .seconds(60))
        #expect(harness.upstream.livePolls == 0)
        #expect(await harness.engine.connectionStatus() == ConnectionStatus(state: .stopped, attempt: 1, retryAt: nil, lastSuccessAt: EngineHarness.epoch, activeCycles: 0, upstream: "fake://upstream"))
    }
}
