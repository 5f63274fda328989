import Foundation
import Testing
@testable import Store
import Upstream

/// Upstreams whose message ids are strings (Matrix event ids): stored once, numbered locally in
/// the order they come, chats named.
@Suite("Messages identified by event id")
struct EventIdentityTests {
    let folder: TemporaryFolder
    let path: String

    init() throws {
        folder = try TemporaryFolder()
        path = folder.path + "/store.sqlite"
    }

    /// Live messages known by event id are numbered from here up (older history goes below).
    private let n = Migrations.firstEventMessageID - 1

    private func events(_ ids: [String], chat: Int64 = 9, name: String? = nil) -> [UpstreamMessage] {
        ids.map { UpstreamMessage(id: 0, chatId: chat, sender: "@bob:test", text: "text of \($0)", sentAt: now, eventId: $0, chatName: name) }
    }

    @Test func eachEventIsStoredOnceAndNumberedInTheOrderItCame() async throws {
        let store = try MessageStore(location: .file(path))
        let first = try await store.apply(events(["$a", "$b", "$a"]), to: .primary, receivedAt: now, cursor: "s1")
        #expect(first.map(\.id) == [n + 1, n + 2])
        #expect(first.map(\.text) == ["text of $a", "text of $b"])
        let second = try await store.apply(events(["$b", "$c", "$d"]), to: .primary, receivedAt: now, cursor: "s2")
        #expect(second.map(\.id) == [n + 3, n + 4], "$b was stored already; the new ones follow the newest id")
        #expect(try await store.allIDs(.primary) == [n + 1, n + 2, n + 3, n + 4])
        #expect(await store.newestID(for: .primary) == n + 4)
        #expect(await store.cursor(for: .primary) == "s2")
        #expect(try await store.scannedUsage() == (await store.storageUsage()).usedBytes)
    }

    @Test func numberingGoesOnAfterAReopenAndAfterTheOldestAreFreed() async throws {
        do {
            let store = try MessageStore(location: .file(path))
            _ = try await store.apply(events(["$a", "$b", "$c"]), to: .primary, receivedAt: now, cursor: "s1")
            _ = try await store.freeSpace(neededBytes: 1)
        }
        let reopened = try MessageStore(location: .file(path))
        let fresh = try await reopened.apply(events(["$c", "$d"]), to: .primary, receivedAt: now, cursor: "s2")
        #expect(fresh.map(\.id) == [n + 4], "a freed id is never given again, and $c is still known")
    }

    @Test func aChatKeepsTheNameTheUpstreamGaveLast() async throws {
        let store = try MessageStore(location: .file(path))
        let named = try await store.apply(events(["$a"], name: "Lunch"), to: .primary, receivedAt: now, cursor: "s1")
        let unnamed = try await store.apply(events(["$b"]), to: .primary, receivedAt: now, cursor: "s2")
        #expect(try await store.scalarTextForTesting("SELECT name FROM chats WHERE chat_id = 9") == "Lunch")
        #expect(named.map(\.chatName) == ["Lunch"] && unnamed.map(\.chatName) == ["Lunch"], "a message left unnamed carries the name kept")
        #expect(try await store.messages(of: .primary).messages.map(\.chatName) == ["Lunch", "Lunch"], "and so does every page")
        _ = try await store.apply(events(["$c"], name: "Lunch on Friday"), to: .primary, receivedAt: now, cursor: "s3")
        #expect(try await store.scalarTextForTesting("SELECT name FROM chats WHERE chat_id = 9") == "Lunch on Friday")
    }

    @Test func aBatchOfKnownEventsMovesOnlyTheCursor() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(events(["$a", "$b"]), to: .primary, receivedAt: now, cursor: "s1")
        let fresh = try await store.apply(events(["$a", "$b"]), to: .primary, receivedAt: now, cursor: "s2")
        #expect(fresh.isEmpty)
        #expect(await store.cursor(for: .primary) == "s2")
        #expect(await store.newestID(for: .primary) == n + 2)
    }

    @Test func credentialsAreKeptAcrossAReopenAndCanBeForgotten() async throws {
        do {
            let store = try MessageStore(location: .file(path))
            try await store.setCredential("matrix.access_token", "syt_secret")
            try await store.setCredential("matrix.device_id", "DEVICE")
        }
        let reopened = try MessageStore(location: .file(path))
        #expect(try await reopened.credential("matrix.access_token") == "syt_secret")
        try await reopened.setCredential("matrix.access_token", nil)
        #expect(try await reopened.credential("matrix.access_token") == nil)
        #expect(try await reopened.credential("matrix.device_id") == "DEVICE")
    }
}
