import Foundation
import SQLite
import Testing
@testable import Store
import Upstream

/// The chat list (unread counts that rise with live messages only, newest activity first), one
/// chat's pages, export slices, and the one-time indexing of an upgraded store.
@Suite("Chat history")
struct ChatHistoryTests {
    let folder: TemporaryFolder
    let path: String

    init() throws {
        folder = try TemporaryFolder()
        path = folder.path + "/store.sqlite"
    }

    private func said(_ ids: ClosedRange<Int64>, chat: Int64, at sentAt: String = "2026-11-29T12:00:00.000Z") -> [UpstreamMessage] {
        ids.map { UpstreamMessage(id: $0, chatId: chat, sender: "bob", text: "message \($0)", sentAt: sentAt) }
    }

    private func chat(_ store: MessageStore, _ id: Int64, _ account: AccountRole = .primary) async throws -> ChatSummary? {
        try await store.chats(of: account).first { $0.id == id }
    }

    @Test func onlyMessagesThatCameLiveAreUnread() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...5, chat: 1), to: .primary, receivedAt: now, cursor: "5", unread: .none)
        #expect(try await chat(store, 1)?.unread == 0, "history is not news")
        _ = try await store.apply(said(6...9, chat: 1), to: .primary, receivedAt: now, cursor: "9", unread: .above(7))
        #expect(try await chat(store, 1)?.unread == 2, "a catch-up up to 7, then two live ones")
        _ = try await store.apply(said(8...10, chat: 1), to: .primary, receivedAt: now, cursor: "10", unread: .all)
        #expect(try await chat(store, 1)?.unread == 3, "a message stored already counts once")
        #expect(try await chat(store, 1)?.messageCount == 10)
    }

    @Test func aBatchSaysTheNewCountsOfTheChatsItChangedAsTheListWouldAfterIt() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...3, chat: 1) + said(4...5, chat: 2) + said(6...6, chat: 3), to: .primary, receivedAt: now,
                                  cursor: "6", unread: .all)
        let outcome = try await store.applyBatch(said(7...8, chat: 2) + said(9...9, chat: 1), to: .primary, receivedAt: now, cursor: "9",
                                                 unread: .all)
        let listed = try await store.chats(of: .primary)
        #expect(outcome.chats == listed.filter { [1, 2].contains($0.id) }, "the same summaries, in the list's order")
        #expect(outcome.chats.map(\.id) == [1, 2], "chat 1 has the newest message")
        #expect(outcome.chats.map(\.unread) == [4, 4] && outcome.chats.map(\.messageCount) == [4, 4])
        let again = try await store.applyBatch(said(9...9, chat: 1), to: .primary, receivedAt: now, cursor: "9", unread: .all)
        #expect(again.chats.isEmpty, "a batch that changed nothing changed no chat")
    }

    @Test func aChatReadElsewhereIsReadInTheBatchThatSaysSoAndOnlyChatsThatHadUnreadAreTold() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...3, chat: 1) + said(4...5, chat: 2), to: .primary, receivedAt: now, cursor: "5", unread: .all)
        _ = try await store.markRead(chat: 2, of: .primary)
        let outcome = try await store.applyBatch(said(6...6, chat: 3), to: .primary, receivedAt: now, cursor: "6", unread: .all,
                                                 chats: ChatChanges(readElsewhere: [1, 2, 99]))
        #expect(outcome.read == [1], "chat 2 was read already and 99 is unknown")
        #expect(try await chat(store, 1)?.unread == 0)
        #expect(try await chat(store, 3)?.unread == 1, "a chat not read elsewhere keeps its count")
    }

    @Test func aChatLeftStaysAsAnArchiveAndRemovingItTakesEveryMessageOfItAndNothingElse() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...3, chat: 1) + said(4...5, chat: 2), to: .primary, receivedAt: now, cursor: "5", unread: .all)
        let before = await store.storageUsage().usedBytes
        let left = try await store.applyBatch([], to: .primary, receivedAt: now, cursor: "6", chats: ChatChanges(membership: [1: .leave, 2: .join]))
        #expect(left.membershipChanged == [1], "only a change is told")
        #expect(try await chat(store, 1)?.membership == .leave)
        #expect(try await chat(store, 1)?.messageCount == 3, "nothing deleted by leaving")
        #expect(try await store.deleteChat(1, of: .primary) == [1, 2, 3])
        #expect(try await chat(store, 1) == nil)
        #expect(try await store.messages(of: .primary).messages.map(\.id) == [5, 4])
        #expect(try await store.search(SearchQuery("message"), account: .primary).results.count == 2)
        #expect(await store.storageUsage().usedBytes < before)
        #expect(try await store.scannedUsage() == (await store.storageUsage()).usedBytes)
        #expect(try await store.searchIndexIsSound())
        #expect(try await store.deleteChat(1, of: .primary) == nil, "gone already")
    }

    @Test func markingReadSetsTheCountBackToZeroForThatChatOnly() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...3, chat: 1) + said(4...5, chat: 2), to: .primary, receivedAt: now, cursor: "5", unread: .all)
        _ = try await store.apply(said(1...2, chat: 1), to: .linked, receivedAt: now, cursor: "2", unread: .all)
        #expect(try await store.markRead(chat: 1, of: .primary))
        #expect(try await chat(store, 1)?.unread == 0)
        #expect(try await chat(store, 2)?.unread == 2)
        #expect(try await chat(store, 1, .linked)?.unread == 2, "the other account's chat 1 is another chat")
        #expect(try await store.markRead(chat: 1, of: .primary), "marking a read chat read again is fine")
        #expect(try await !store.markRead(chat: 99, of: .primary), "no such chat")
        // Across a restart.
        await store.close()
        let reopened = try MessageStore(location: .file(path))
        #expect(try await reopened.chats(of: .primary).map(\.unread).sorted() == [0, 2])
    }

    @Test func aChatReadUpToAMessageKeepsTheNewerOnesUnread() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...4, chat: 1), to: .primary, receivedAt: now, cursor: "4")  // history: never unread
        _ = try await store.apply(said(5...9, chat: 1), to: .primary, receivedAt: now, cursor: "9", unread: .all)
        #expect(try await chat(store, 1)?.unread == 5)
        #expect(try await store.markRead(chat: 1, of: .primary, through: 3), "a search result among the history")
        #expect(try await chat(store, 1)?.unread == 5, "nothing unread was shown")
        #expect(try await store.markRead(chat: 1, of: .primary, through: 6))
        #expect(try await chat(store, 1)?.unread == 3, "7, 8 and 9 are still unread")
        #expect(try await store.markRead(chat: 1, of: .primary, through: 5))
        #expect(try await chat(store, 1)?.unread == 3, "reading less again unreads nothing")
        #expect(try await store.markRead(chat: 1, of: .primary))
        #expect(try await chat(store, 1)?.unread == 0)
    }

    @Test func chatsComeNewestActivityFirstWithTheirLastMessageTime() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...2, chat: 7, at: "2026-11-29T10:00:00.000Z"), to: .primary, receivedAt: now)
        _ = try await store.apply(said(3...3, chat: 8, at: "2026-11-29T11:00:00.000Z"), to: .primary, receivedAt: now)
        _ = try await store.apply(said(4...4, chat: 7, at: "2026-11-29T12:00:00.000Z"), to: .primary, receivedAt: now)
        let chats = try await store.chats(of: .primary)
        #expect(chats.map(\.id) == [7, 8])
        #expect(chats.map(\.lastMessageAt) == ["2026-11-29T12:00:00.000Z", "2026-11-29T11:00:00.000Z"])
        // An older message arriving late (a gap filled) does not make the chat look newer.
        _ = try await store.apply([UpstreamMessage(id: 0, chatId: 8, sender: "bob", text: "late", sentAt: "2026-11-29T09:00:00.000Z")],
                                  to: .primary, receivedAt: now, cursor: nil)
        #expect(try await chat(store, 8)?.lastMessageAt == "2026-11-29T11:00:00.000Z")
    }

    @Test func freeSpaceNeverLeavesMoreUnreadThanMessages() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...10, chat: 1), to: .primary, receivedAt: now, cursor: "10", unread: .all)
        let used = await store.storageUsage().usedBytes
        try await store.setQuota(used)
        let freed = try await store.freeSpace(neededBytes: used / 2)
        let chat = try #require(try await chat(store, 1))
        #expect(freed != nil && chat.messageCount < 10)
        #expect(chat.unread == chat.messageCount)
    }

    @Test func oneChatsPagesHoldOnlyItsMessagesNewestFirst() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...30, chat: 1).map { var m = $0; m.chatId = $0.id % 3; return m }, to: .primary, receivedAt: now)
        let first = try await store.messages(of: .primary, chat: 2, limit: 4)
        #expect(first.messages.map(\.id) == [29, 26, 23, 20])
        let second = try await store.messages(of: .primary, chat: 2, before: first.nextBefore, limit: 100)
        #expect(second.messages.map(\.id) == [17, 14, 11, 8, 5, 2] && second.nextBefore == nil)
        let reader = try StoreReader(path: path)
        #expect(try await reader.messages(of: .primary, chat: 2, limit: 100).messages.count == 10)
    }

    @Test func exportSlicesGoOldestFirstAndMeetEveryMessageOnce() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(1...50, chat: 1).map { var m = $0; m.chatId = $0.id % 2; return m }, to: .primary, receivedAt: now)
        _ = try await store.apply(said(1...5, chat: 1), to: .linked, receivedAt: now)
        let reader = try StoreReader(path: path)
        var seen: [Int64] = []
        var after = Int64.min
        while case let slice = try await reader.messages(of: .primary, after: after, limit: 7), let last = slice.last {
            seen += slice.map(\.id)
            after = last.id
        }
        #expect(seen == Array(1...50))
        let oneChat = try await store.messages(of: .primary, chat: 1, after: .min, limit: 100)
        #expect(oneChat.map(\.id) == Array(stride(from: 1, through: 49, by: 2)))
    }

    @Test func anUpgradedStoreIsIndexedInSlicesThatSayHowFarTheyAre() async throws {
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, to: 6)
        let insert = try connection.statement("""
            INSERT INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size) VALUES (?1, ?2, 1, 'bob', ?3, 'x', 'y', 80)
            """)
        for account: Int64 in [0, 1] {
            for id: Int64 in 1...23 { try insert.run(.integer(account), .integer(id), .text("walrus \(account) \(id)")) }
        }
        try connection.transaction {
            try connection.execute(Migrations.steps[6])
            var lines: [String] = []
            try Migrations.indexStoredMessages(connection, slice: 10, reportingFrom: 40) { lines.append($0) }
            #expect(lines.first == "indexing 46 stored messages for search (once, after the upgrade)")
            #expect(lines.dropFirst().prefix(5) == ["indexed 10 of 46 messages (21 %)", "indexed 20 of 46 messages (43 %)",
                                                    "indexed 30 of 46 messages (65 %)", "indexed 40 of 46 messages (86 %)",
                                                    "indexed 46 of 46 messages (100 %)"])
            #expect(lines.last?.hasPrefix("search index ready: 46 messages in ") == true)
            #expect(lines.count == 7, "each slice said once, the empty one past the end not at all")
            try connection.execute("PRAGMA user_version = 7")
        }
        connection.close()
        let store = try MessageStore(location: .file(path))
        #expect(try await store.search(SearchQuery("walrus"), account: .primary, limit: 100).results.count == 23)
        #expect(try await store.search(SearchQuery("walrus"), account: .linked, limit: 100).results.count == 23)
        #expect(try await store.searchIndexIsSound())
        // Small stores upgrade without a word.
        var said: [String] = []
        let small = try SQLiteConnection(path: folder.path + "/small.sqlite")
        try Migrations.migrate(small, to: 6)
        try small.execute("INSERT INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size) VALUES (0, 1, 1, 'a', 'b', 'x', 'y', 80)")
        try Migrations.migrate(small) { said.append($0) }
        #expect(said.isEmpty)
    }
}
