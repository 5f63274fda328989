import Engine
import Foundation
import Testing
import TestSupport
import Upstream
@testable import Store

/// An upstream that went back (reset, restored from a backup) and a connection that stays truthful
/// about when it last heard from the upstream, in virtual time.
@Suite("Engine: an upstream that went back")
struct RestartTests {
    /// Stores ids 1...5 for the primary account, then makes the server forget all but 2.
    private func behindHarness() async throws -> EngineHarness {
        var settings = FakeUpstream.Settings()
        settings.lastMessageInfo = nil
        let harness = try EngineHarness(settings: settings)
        await harness.engine.activate()
        await harness.upstream.next(.lastMessageInfo).succeed(LastMessageInfo(primaryLastId: 5, linkedLastId: 0))
        await harness.upstream.next(.messages).succeed(answer(primary: [1, 2, 3, 4, 5]))
        let poll = await harness.upstream.next(.messages)
        poll.fail(.unreachable("the server restarts"))
        _ = await harness.recorder.connectionState(.waiting)
        await harness.engine.retryNow()
        await harness.upstream.next(.lastMessageInfo).succeed(LastMessageInfo(primaryLastId: 2, linkedLastId: 0))
        _ = await harness.recorder.connectionState(.paused)
        return harness
    }

    private func primaryIDs(_ harness: EngineHarness) async throws -> [Int64] {
        try await harness.store.messages(of: .primary, limit: 500).messages.map(\.id).sorted()
    }

    @Test func aServerBehindTheCursorPausesWithAProblemInsteadOfWaitingSilently() async throws {
        let harness = try await behindHarness()
        let problem = try #require(await harness.engine.problems().first)
        #expect(problem.kind == .upstreamBehind)
        #expect(problem.debug.contains("newest id is 2") && problem.debug.contains("newest stored 5"))
        #expect(await harness.engine.engineCounters().upstreamBehind == 1)
        #expect(harness.upstream.livePolls == 0, "no poll for ids the server may never reach")
    }

    @Test func resyncKeepsTheOldMessagesAsideAndFetchesTheServersAnew() async throws {
        let harness = try await behindHarness()
        let resynced = Task { await harness.engine.resyncFromServer() }
        await harness.upstream.next(.lastMessageInfo).succeed(LastMessageInfo(primaryLastId: 2, linkedLastId: 0))
        let fresh = await harness.upstream.next(.messages)
        #expect(fresh.cursors?.primaryAfter == 0, "from the beginning")
        fresh.succeed(answer(primary: [1, 2], textLength: 20))
        #expect(await resynced.value == (live: true, setAside: 5), "the five stored before are set aside")
        let setAside = harness.recorder.events.compactMap { event -> (AccountRole, Int)? in
            if case let .accountSetAside(account, count, _) = event { (account, count) } else { nil }
        }
        #expect(setAside.map(\.0) == [.primary] && setAside.map(\.1) == [5], "the page is told, so it drops what it showed of the account")
        #expect(await harness.engine.problems().isEmpty)
        _ = await harness.upstream.next(.messages)
        #expect(try await harness.store.archivedCount() == 5, "the five stored before are kept")
        #expect(try await primaryIDs(harness) == [1, 2], "the server's two, once each")
        let scanned = try await harness.store.scalarForTesting(
            "SELECT (SELECT sum(size) FROM messages) + (SELECT sum(size) FROM archived_messages)")
        #expect(scanned == (await harness.store.storageUsage().usedBytes), "all still counted")
        let delivered = harness.recorder.messageEvents.suffix(1)
        #expect(delivered.map(\.delivery) == [.silent], "the server's history is not news")
    }

    @Test func stopIsAnAnswerTooAndStartChecksAgain() async throws {
        let harness = try await behindHarness()
        await harness.engine.stop()
        #expect(await harness.engine.problems().isEmpty)
        #expect(await harness.engine.connectionStatus().state == .stopped)
        await harness.engine.start()
        await harness.upstream.next(.lastMessageInfo).succeed(LastMessageInfo(primaryLastId: 2, linkedLastId: 0))
        _ = await harness.recorder.connectionState(.paused)
        #expect(await harness.engine.problems().map(\.kind) == [.upstreamBehind])
        #expect(try await primaryIDs(harness) == [1, 2, 3, 4, 5], "nothing touched")
        #expect(await harness.engine.engineCounters().upstreamBehind == 2)
    }

    @Test func theLastAnswerTimeReachesThePageAtMostEveryTenSeconds() async throws {
        let harness = try EngineHarness()
        await harness.engine.activate()
        await harness.upstream.next(.messages).succeed(answer())
        let announced = { harness.recorder.events.compactMap { event -> Date? in
            if case .connection(let status) = event { status.lastSuccessAt } else { nil }
        } }
        let before = announced().count
        harness.clock.advance(by: .seconds(4))
        await harness.upstream.next(.messages).succeed(answer())
        _ = await harness.upstream.next(.messages)
        #expect(announced().count == before, "4 s later: not worth waking every tab")
        harness.clock.advance(by: .seconds(25))
        harness.upstream.openCalls(.messages).first!.succeed(answer())
        _ = await harness.upstream.next(.messages)
        #expect(announced().count == before + 1, "after a whole hold: the page hears of it")
        #expect(announced().last == EngineHarness.epoch.addingTimeInterval(29))
    }
}
