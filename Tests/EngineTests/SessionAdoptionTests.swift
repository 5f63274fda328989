import Store
import Testing
import Upstream
@testable import Engine

/// A session answer applied to a real (in-memory) store, without the engine.
@Suite("Session adoption")
struct SessionAdoptionTests {
    private func describe(_ events: [EngineEvent]) -> [String] {
        events.map { event in
            switch event {
            case .primaryAccountChanged(let from, let to, let removed): "primary \(from) -> \(to), \(removed) removed"
            case .accountLinked(let id, let first): "linked \(id)\(first ? ", first sync" : "")"
            case .accountUnlinked(let id): "unlinked \(id)"
            case .storage(let usage): "storage quota \(usage.quotaBytes.map(String.init) ?? "none")"
            case .outboxLeftBehind(let entries): "left behind \(entries.map(\.text))"
            default: "other"
            }
        }
    }

    private func adopt(_ session: UpstreamSession, _ store: MessageStore, quotaOverride: Int64? = nil) async throws -> SessionAdoption.Outcome {
        var outcome = SessionAdoption.Outcome()
        try await SessionAdoption(store: store, quotaOverride: quotaOverride).adopt(session, into: &outcome)
        return outcome
    }

    private func message(_ id: Int64) -> UpstreamMessage {
        UpstreamMessage(id: id, chatId: 1, sender: "a", text: "b", sentAt: "2026-11-30T12:00:00.000Z")
    }

    @Test func aFirstSessionRecordsTheAccountsAndTheQuota() async throws {
        let store = try MessageStore(location: .memory)
        let outcome = try await adopt(UpstreamSession(token: "t", primaryUserId: 1, linkedUserId: 2, storageQuotaBytes: 5000), store)
        #expect(describe(outcome.events) == ["linked 2, first sync", "storage quota 5000"])
        #expect(try await store.accountIDs() == AccountIDs(primaryUserId: 1, linkedUserId: 2))
        #expect(!outcome.everythingForgotten && outcome.linkedForgotten)
    }

    @Test func anotherPrimaryUserRemovesEverythingOfThePreviousOne() async throws {
        let store = try MessageStore(location: .memory)
        _ = try await adopt(UpstreamSession(token: "t", primaryUserId: 1, linkedUserId: 2, storageQuotaBytes: 5000), store)
        _ = try await store.apply([message(1), message(2)], to: .primary, receivedAt: "now", cursor: "2")
        _ = try await store.apply([message(1)], to: .linked, receivedAt: "now", cursor: "1")
        let outcome = try await adopt(UpstreamSession(token: "t", primaryUserId: 7, linkedUserId: nil, storageQuotaBytes: 5000), store)
        #expect(describe(outcome.events) == ["primary 1 -> 7, 3 removed", "storage quota 5000", "left behind []"])
        #expect(outcome.everythingForgotten)
        #expect(await store.cursor(for: .primary) == nil)
        #expect(await store.cursor(for: .linked) == nil)
        #expect(outcome.notes.first?.warning == true, "worth a warning in the log")
    }

    @Test func whatTheUserWhoWentHadNotSentIsLeftBehindAndTold() async throws {
        let store = try MessageStore(location: .memory)
        _ = try await adopt(UpstreamSession(token: "t", primaryUserId: 1, linkedUserId: 2, storageQuotaBytes: 5000), store)
        _ = try await store.apply([message(1)], to: .primary, receivedAt: "now", cursor: "1")
        _ = try await store.apply([message(1)], to: .linked, receivedAt: "now", cursor: "1")
        _ = try await store.enqueue("unsent of 1", to: 1, of: .primary, requestKey: "a", upstreamKey: "ua", createdAt: "now")
        _ = try await store.enqueue("unsent of 2", to: 1, of: .linked, requestKey: "b", upstreamKey: "ub", createdAt: "now")
        let detached = try await adopt(UpstreamSession(token: "t", primaryUserId: 1, linkedUserId: nil, storageQuotaBytes: 5000), store)
        #expect(describe(detached.events) == ["unlinked 2", "left behind [\"unsent of 2\"]"])
        let another = try await adopt(UpstreamSession(token: "t", primaryUserId: 7, linkedUserId: nil, storageQuotaBytes: 5000), store)
        #expect(describe(another.events) == ["primary 1 -> 7, 1 removed", "storage quota 5000", "left behind [\"unsent of 1\", \"unsent of 2\"]"])
        #expect(try await store.nextToSend(of: .primary, limit: 10).isEmpty, "nothing of 1's goes as 7")
    }

    @Test func aDetachedLinkedAccountIsPurgedAndTheQuotaOverrideKeepsWhatWasBought() async throws {
        let store = try MessageStore(location: .memory)
        _ = try await adopt(UpstreamSession(token: "t", primaryUserId: 1, linkedUserId: 2, storageQuotaBytes: 5000), store, quotaOverride: 800)
        _ = try await store.apply([message(1)], to: .linked, receivedAt: "now", cursor: "1")
        try await store.addPurchasedBytes(1000, idempotencyKey: "k")
        let outcome = try await adopt(UpstreamSession(token: "t", primaryUserId: 1, linkedUserId: nil, storageQuotaBytes: 5000), store,
                                      quotaOverride: 800)
        #expect(describe(outcome.events) == ["unlinked 2", "left behind []", "storage quota 1800"])
        #expect(try await store.messages(of: .linked, before: nil, limit: 10).messages.isEmpty)
        #expect(await store.storageUsage().quotaBytes == 1800)
    }
}
