import Engine
import Foundation
import Testing
import Upstream
@testable import Store

/// An upstream like a Matrix homeserver: no newest ids to sync cursors with, string identities,
/// answers that say what they are. The engine asks for a catch-up at once after every
/// (re)connection, and only then; a token renewed mid-cycle stays live.
@Suite("Engine: an upstream without newest ids")
struct UpstreamWithoutNewestIDsTests {
    private func harness() throws -> EngineHarness {
        var settings = FakeUpstream.Settings()
        settings.tellsNewestIDs = false
        settings.session = UpstreamSession(token: "t1", primaryUserId: 1, linkedUserId: nil, storageQuotaBytes: nil)
        return try EngineHarness(settings: settings)
    }

    private func events(_ names: [String], cursor: String, delivery: AnswerDelivery) -> MessagesAnswer {
        let messages = names.map { UpstreamMessage(id: 0, chatId: 7, sender: "@bob:x", text: $0, sentAt: "2026-11-30T12:00:00.000Z", eventId: "$" + $0) }
        return MessagesAnswer(messages: messages.isEmpty ? [:] : ["1": messages], cursors: ["1": cursor], delivery: delivery)
    }

    @Test func itIsLiveOnlyOnceTheFirstSyncIsStoredAndHistoryWaitsForThat() async throws {
        let harness = try harness()
        await harness.engine.activate()
        let first = await harness.upstream.next(.messages)
        // A new device's first sync can take seconds: a message sent meanwhile shows only after it.
        #expect(await harness.engine.connectionStatus().state == .connecting)
        #expect(await harness.engine.liveToken() == nil, "history does not start beside the first sync")
        #expect(harness.engine.liveSession.token == nil, "nor sending: what the history fetcher and the senders read says so too")
        first.succeed(events(["a"], cursor: "s1", delivery: .history))
        _ = await harness.upstream.next(.messages)
        #expect(await harness.engine.connectionStatus().state == .live)
        #expect(await harness.engine.liveToken() == "t1")
        #expect(harness.engine.liveSession.token == "t1")
        await harness.engine.stop()
        #expect(harness.engine.liveSession.token == nil, "stopped is not live")
    }

    @Test func catchUpIsAskedAfterEachConnectionAndTheDeclaredDeliveryIsKept() async throws {
        let harness = try harness()
        await harness.engine.activate()

        let first = await harness.upstream.next(.messages)
        #expect(first.cursors?.primary == nil && first.wait == .catchUp, "a first sync answers at once")
        first.succeed(events(["a", "b"], cursor: "s1", delivery: .history))

        let second = await harness.upstream.next(.messages)
        #expect(second.cursors?.primary == "s1" && second.wait == .hold(seconds: 25), "then it waits")
        second.succeed(events(["c"], cursor: "s2", delivery: .live))

        // A token taken back mid-cycle: a new session, and the next poll still waits (it is live).
        await harness.upstream.next(.messages).fail(.unauthorized)
        let renewed = await harness.upstream.next(.messages)
        #expect(renewed.wait == .hold(seconds: 25), "a renewed token is no reconnection")
        renewed.fail(.unreachable("cut"))
        _ = await harness.recorder.connectionState(.waiting)
        await harness.engine.retryNow()
        let reconnected = await harness.upstream.next(.messages)
        #expect(reconnected.cursors?.primary == "s2" && reconnected.wait == .catchUp, "after a reconnection: what arrived meanwhile, at once")
        reconnected.succeed(events(["c", "d"], cursor: "s3", delivery: .missed))
        _ = await harness.upstream.next(.messages)

        #expect(harness.recorder.messageEvents.map(\.delivery) == [.silent, .live, .caughtUp])
        let base = harness.recorder.messageEvents.first?.ids.first ?? 0
        #expect(harness.recorder.messageEvents.map(\.ids) == [[base, base + 1], [base + 2], [base + 3]], "numbered by the store, $c stored once")
        #expect(await harness.store.cursor(for: .primary) == "s3")
    }
}
