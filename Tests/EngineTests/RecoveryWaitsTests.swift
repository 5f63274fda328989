@testable import Engine
import Foundation
import Testing
import TestSupport
import Upstream
@testable import Store

/// What recovery options wait on, and which messages notify, in virtual time.
@Suite("Engine: notifications and recovery waits")
struct RecoveryWaitsTests {
    // MARK: Which messages notify (CONTRACT 4.6)

    @Test func messagesMissedDuringAnOutageAreOneCatchUpNotTheFirstLoadsSilence() async throws {
        var settings = FakeUpstream.Settings()
        settings.lastMessageInfo = LastMessageInfo(primaryLastId: 2, linkedLastId: 0)
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: [1, 2]))
        await harness.upstream.next(.messages).succeed(answer(primary: [3]))
        await harness.upstream.next(.messages).fail(.unreachable("refused"))
        _ = await harness.recorder.connectionState(.waiting)
        // Three messages arrive on the server while the engine waits.
        harness.upstream.settings.withLock { $0.lastMessageInfo = LastMessageInfo(primaryLastId: 6, linkedLastId: 0) }
        await harness.engine.retryNow()
        await harness.upstream.next(.messages).succeed(answer(primary: [4, 5, 6]))
        await harness.upstream.next(.messages).succeed(answer(primary: [7]))
        _ = await harness.upstream.next(.messages)
        let events = harness.recorder.messageEvents
        #expect(events.map(\.ids) == [[1, 2], [3], [4, 5, 6], [7]])
        #expect(events.map(\.delivery) == [.silent, .live, .caughtUp, .live])
    }

    @Test func aLinkedAccountAttachedMidCycleBringsItsHistorySilently() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: [1]))
        let poll = await harness.upstream.next(.messages)
        harness.upstream.settings.withLock {
            $0.session?.linkedUserId = 3
            $0.lastMessageInfo = LastMessageInfo(primaryLastId: 1, linkedLastId: 4)
        }
        poll.fail(.unauthorized)  // the simulator expires the token when an account is attached
        await harness.upstream.next(.messages).succeed(answer(extra: ["3": [1, 2, 3, 4]]))
        await harness.upstream.next(.messages).succeed(answer(extra: ["3": [5]]))
        _ = await harness.upstream.next(.messages)
        let linked = harness.recorder.messageEvents.filter { $0.account == "linked" }
        #expect(linked.map(\.ids) == [[1, 2, 3, 4], [5]])
        #expect(linked.map(\.delivery) == [.silent, .live], "its history is not news; what comes after is")
    }

    @Test func aPrimaryUserChangeRemovesThePreviousUsersMessages() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: [1, 2], linked: [1]))
        let poll = await harness.upstream.next(.messages)
        harness.upstream.settings.withLock { $0.session = UpstreamSession(token: "t2", primaryUserId: 7, linkedUserId: nil, storageQuotaBytes: 1_000_000) }
        poll.fail(.unauthorized)
        let afterChange = await harness.upstream.next(.messages)
        #expect(afterChange.cursors == StreamCursors(primaryAfter: 0, linkedAfter: nil), "the new user starts from the beginning")
        #expect(try await harness.store.messages(of: .primary).messages.isEmpty)
        #expect(try await harness.store.messages(of: .linked).messages.isEmpty)
        #expect(await harness.store.storageUsage().usedBytes == 0)
        #expect(harness.recorder.events.contains { if case .primaryAccountChanged(1, 7, 3) = $0 { true } else { false } })
        afterChange.succeed(answer(extra: ["7": [1]]))
        _ = await harness.upstream.next(.messages)
        #expect(try await harness.store.accountIDs() == AccountIDs(primaryUserId: 7, linkedUserId: nil))
        #expect(try await harness.store.messages(of: .primary).messages.map(\.id) == [1])
    }

    // MARK: Waiting for the truth

    @Test func resumeAndWaitAnswersOnlyOnceTheWaitingBatchIsStored() async throws {
        let harness = try EngineHarness(options: EngineOptions(alwaysOn: true, quotaOverride: 1000))
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: Array(1...40), textLength: 50))
        _ = await harness.recorder.connectionState(.paused)

        // Not enough: the same batch still does not fit, and the answer says so.
        let stillFull = Task { await harness.engine.resumeAndWait() }
        await harness.upstream.next(.messages).succeed(answer(primary: Array(1...40), textLength: 50))
        guard case .notStored(let problem?) = await stillFull.value else { Issue.record("expected a problem"); return }
        #expect(problem.kind == .outOfSpace)
        #expect(await harness.engine.problems().map(\.kind) == [.outOfSpace], "open until a batch is stored")

        await harness.engine.noteStoragePurchased(bytes: 1_000_000, newUpstreamQuota: 2_000_000, idempotencyKey: "k")
        let enough = Task { await harness.engine.resumeAndWait() }
        let again = await harness.upstream.next(.messages)
        #expect(again.cursors?.primaryAfter == 0)
        #expect(await harness.engine.problems().map(\.kind) == [.outOfSpace], "resuming alone proves nothing")
        again.succeed(answer(primary: Array(1...40), textLength: 50))
        #expect(await enough.value == .stored)
        #expect(await harness.engine.problems().isEmpty, "the stored batch clears it")
    }

    @Test func resumeAndWaitReportsAConnectionFailureInsteadOfWaitingThroughTheBackoff() async throws {
        let harness = try EngineHarness(options: EngineOptions(alwaysOn: true, quotaOverride: 1000))
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer(primary: Array(1...40), textLength: 50))
        _ = await harness.recorder.connectionState(.paused)
        await harness.engine.noteStoragePurchased(bytes: 1_000_000, newUpstreamQuota: 2_000_000, idempotencyKey: "k")
        let waiting = Task { await harness.engine.resumeAndWait() }
        await harness.upstream.next(.messages).fail(.serverError(status: 503))
        guard case .notStored(let problem?) = await waiting.value else { Issue.record("expected a problem"); return }
        #expect(problem.kind == .upstreamError)
    }

    @Test func aCancelledWaiterStopsWaitingAndTheEngineGoesOn() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).fail(.unreachable("refused"))
        _ = await harness.recorder.connectionState(.waiting)
        await harness.clock.waitForSleepers()
        let waiter = Task { await harness.engine.resumeAndWait() }
        let retried = await harness.upstream.next(.messages)
        waiter.cancel()
        #expect(await waiter.value == .notStored(nil))
        retried.succeed(answer(primary: [1]))
        _ = await harness.upstream.next(.messages)
        #expect(await harness.store.cursor(for: .primary) == "1")
    }

    @Test func tryAgainIsRecoveredOnlyWhenThePollIsNotRefusedAtOnce() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).fail(.anotherPoller)
        _ = await harness.recorder.connectionState(.waiting)
        let refused = Task { await harness.engine.retryAndWait() }
        await harness.upstream.next(.messages).fail(.anotherPoller)  // connected, and taken over again at once
        #expect(await refused.value == false)
        #expect(await harness.engine.problems().map(\.kind) == [.anotherPoller])

        let accepted = Task { await harness.engine.retryAndWait() }
        _ = await harness.upstream.next(.messages)  // held: nobody took it over
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(1))
        #expect(await accepted.value)
        #expect(await harness.engine.problems().isEmpty)
    }

    @Test func tryAgainWhileLiveAnswersAtOnce() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.retryAndWait(), "nothing to wait for: the connection is live")
    }

    @Test func aStorageFailureClearsWhenTheStoreTakesWritesAgain() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        let poll = await harness.upstream.next(.messages)  // the session is stored; now the store stops taking writes
        try await harness.store.executeForTesting("PRAGMA query_only = 1")
        poll.succeed(answer(primary: [1]))
        _ = await harness.recorder.connectionState(.waiting)
        #expect(await harness.engine.problems().map(\.kind) == [.storageFailure])

        // Try again while the store still refuses: the check before polling fails, nothing hangs.
        #expect(await harness.engine.retryAndWait() == false)
        #expect(await harness.engine.problems().map(\.kind) == [.storageFailure])
        #expect(harness.upstream.livePolls == 0, "no poll while the store cannot write")

        try await harness.store.executeForTesting("PRAGMA query_only = 0")
        let recovered = Task { await harness.engine.retryAndWait() }
        let retried = await harness.upstream.next(.messages)
        #expect(await harness.engine.problems().isEmpty, "the check passed")
        await harness.clock.waitForSleepers()
        harness.clock.advance(by: .seconds(1))  // the poll was not refused: recovered
        #expect(await recovered.value)
        retried.succeed(answer(primary: [1]))
        _ = await harness.upstream.next(.messages)
        #expect(await harness.store.cursor(for: .primary) == "1", "the batch that failed is stored now")
    }
}
