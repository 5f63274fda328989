import Foundation
import SQLite
import Testing
@testable import Store
import Upstream

/// A chat's older history (CONTRACT section 10) in a real SQLite file: stored below what is there,
/// so the chat reads in order; where it goes on from kept in the page's own transaction; edits and
/// redactions in either order; nothing counted unread.
@Suite("Older history in the copy")
struct OlderHistoryTests {
    let folder: TemporaryFolder
    let store: MessageStore
    let path: String

    init() throws {
        folder = try TemporaryFolder()
        path = folder.path + "/store.sqlite"
        store = try MessageStore(location: .file(path))
    }

    private static func time(_ second: Int) -> String {
        "2026-11-29T12:\(second / 60 < 10 ? "0" : "")\(second / 60):\(second % 60 < 10 ? "0" : "")\(second % 60).000Z"
    }

    private func message(_ number: Int, chat: Int64 = 9, from sender: String = "@bob:test") -> UpstreamMessage {
        UpstreamMessage(id: 0, chatId: chat, sender: sender, text: "message \(number)", sentAt: Self.time(number), eventId: "$\(chat)-\(number)")
    }

    /// Messages `range` of a chat, newest first, as a page of history comes.
    private func page(_ range: ClosedRange<Int>, chat: Int64 = 9) -> [UpstreamMessage] {
        range.reversed().map { message($0, chat: chat) }
    }

    private func texts(chat: Int64 = 9) async throws -> [String] {
        var all: [StoredMessage] = []
        var before: Int64?
        repeat {
            let page = try await store.messages(of: .primary, chat: chat, before: before, limit: 7)
            all = page.messages.reversed() + all
            before = page.nextBefore
        } while before != nil
        return all.map(\.text)
    }

    private func consistent() async throws {
        #expect(try await store.searchIndexIsSound())
        #expect(try await store.scannedUsage() == (await store.storageUsage()).usedBytes)
    }

    @Test func aPageThatLandsAfterItsArchivedChatWasRemovedBringsNothingBack() async throws {
        let start = HistoryStart(chatId: 9, upstreamChat: "!room", position: "t100")
        _ = try await store.applyBatch((41...50).map { message($0) }, to: .primary, receivedAt: "now", cursor: "s1", chats: ChatChanges(historyStarts: [start]))
        _ = try await store.applyBatch([], to: .primary, receivedAt: "now", cursor: "s2", chats: ChatChanges(membership: [9: .leave]))
        // A page on its way while the archive is still there keeps it an archive.
        _ = try await store.applyOlder(page(31...40), to: .primary, chat: 9, receivedAt: "now", next: "t30")
        #expect(try await store.chats(of: .primary).first { $0.id == 9 }?.membership == .leave, "storing history never changes membership")
        #expect(try await store.deleteChat(9, of: .primary) != nil)
        let late = try await store.applyOlder(page(21...30), to: .primary, chat: 9, receivedAt: "now", next: "t20")
        #expect(late.fresh.isEmpty)
        #expect(try await store.chats(of: .primary).isEmpty, "the removed chat does not come back as a joined one")
        #expect(try await store.messages(of: .primary, chat: 9, before: nil, limit: 50).messages.isEmpty)
        try await consistent()
    }

    @Test func olderPagesGoBelowWhatIsStoredSoTheChatReadsInOrderAndSearchFindsThem() async throws {
        let start = HistoryStart(chatId: 9, upstreamChat: "!room", position: "t100")
        _ = try await store.applyBatch((41...50).map { message($0) }, to: .primary, receivedAt: "now", cursor: "s1", chats: ChatChanges(historyStarts: [start]))
        #expect(try await store.pendingHistory(of: .primary) == [start])
        let first = try await store.applyOlder(page(21...40), to: .primary, chat: 9, receivedAt: "now", next: "t20")
        #expect(first.fresh.count == 20)
        _ = try await store.applyOlder(page(1...20), to: .primary, chat: 9, receivedAt: "now", next: nil)
        #expect(try await texts() == (1...50).map { "message \($0)" })
        #expect(try await store.pendingHistory(of: .primary).isEmpty)
        #expect(try await store.historyProgress(of: .primary) == HistoryProgress(roomsPending: 0, fetched: 40))
        #expect(try await store.search(SearchQuery("message 3"), account: .primary).results.contains { $0.message.text == "message 3" })
        let chat = try await store.chats(of: .primary).first { $0.id == 9 }
        #expect(chat?.messageCount == 50)
        #expect(chat?.unread == 0, "history is never unread")
        #expect(chat?.lastMessageAt == Self.time(50), "the newest stays the newest")
        try await consistent()
    }

    @Test func theFirstPositionOfAChatIsWhereItsHistoryStartsAndLaterOnesAreIgnored() async throws {
        let first = HistoryStart(chatId: 9, upstreamChat: "!room", position: "t100")
        _ = try await store.applyBatch([message(50)], to: .primary, receivedAt: "now", cursor: "s1", chats: ChatChanges(historyStarts: [first]))
        _ = try await store.applyBatch([message(51)], to: .primary, receivedAt: "now", cursor: "s2",
                                       chats: ChatChanges(historyStarts: [HistoryStart(chatId: 9, upstreamChat: "!room", position: "t200")]))
        #expect(try await store.pendingHistory(of: .primary).map(\.position) == ["t100"])
    }

    @Test func aPageThatComesTwiceIsStoredOnceAndAReopenedStoreGoesOnFromThePageAfter() async throws {
        _ = try await store.applyBatch([message(50)], to: .primary, receivedAt: "now", cursor: "s1",
                                       chats: ChatChanges(historyStarts: [HistoryStart(chatId: 9, upstreamChat: "!room", position: "t50")]))
        _ = try await store.applyOlder(page(30...49), to: .primary, chat: 9, receivedAt: "now", next: "t30")
        // The answer of the next page was lost (a kill before its commit): it is asked again and
        // overlaps what is there; and a page already stored comes again (duplicate event ids).
        let again = try await store.applyOlder(page(25...35), to: .primary, chat: 9, receivedAt: "now", next: "t25")
        #expect(again.fresh.map(\.text) == (25...29).reversed().map { "message \($0)" })
        let reopened = try MessageStore(location: .file(path))
        #expect(try await reopened.pendingHistory(of: .primary).map(\.position) == ["t25"])
        _ = try await reopened.applyOlder(page(1...24), to: .primary, chat: 9, receivedAt: "now", next: nil)
        let texts = try await reopened.messages(of: .primary, chat: 9, limit: 100).messages.reversed().map(\.text)
        #expect(texts == (1...50).map { "message \($0)" })
    }

    @Test func anEditAndARedactionNewerThanTheirTargetsActWhenTheTargetsComeInAnOlderPage() async throws {
        _ = try await store.applyBatch([message(50)], to: .primary, receivedAt: "now", cursor: "s1",
                                       chats: ChatChanges(historyStarts: [HistoryStart(chatId: 9, upstreamChat: "!room", position: "t50")]))
        let edit = UpstreamMessage(id: 0, chatId: 9, sender: "@bob:test", text: "message 10, corrected", sentAt: Self.time(45),
                                   eventId: "$edit", relation: .replaces(eventId: "$9-10"))
        let redaction = UpstreamMessage(id: 0, chatId: 9, sender: "@bob:test", text: "", sentAt: Self.time(44), eventId: "$redaction",
                                        relation: .redacts(eventId: "$9-11"))
        _ = try await store.applyOlder([edit, redaction], to: .primary, chat: 9, receivedAt: "now", next: "t20")
        _ = try await store.applyOlder(page(9...12), to: .primary, chat: 9, receivedAt: "now", next: nil)
        #expect(try await texts() == ["message 9", "message 10, corrected", "message 12", "message 50"])
        #expect(try await store.search(SearchQuery("corrected"), account: .primary).results.count == 1)
        try await consistent()
    }

    @Test func aReplyNamesItsOriginalOnceTheOriginalIsInTheCopyWhicheverCameFirst() async throws {
        var reply = message(50)
        reply.replyTo = "$9-10"
        let stored = try await store.applyBatch([reply], to: .primary, receivedAt: "now", cursor: "s1",
                                                chats: ChatChanges(historyStarts: [HistoryStart(chatId: 9, upstreamChat: "!room", position: "t50")]))
        #expect(stored.fresh.first?.isReply == true && stored.fresh.first?.replyTo == nil, "the original is not here yet")
        _ = try await store.applyOlder(page(9...11), to: .primary, chat: 9, receivedAt: "now", next: nil)
        let messages = try await store.messages(of: .primary, chat: 9).messages
        let original = try #require(messages.first { $0.text == "message 10" })
        #expect(messages.first { $0.text == "message 50" }?.replyTo == original.id)
        #expect(original.isReply == false && original.replyTo == nil)
    }

    @Test func aPageThatDoesNotFitIsNotWrittenAndTheChatStaysWhereItWas() async throws {
        try await store.setQuota(3_000)
        _ = try await store.applyBatch([message(50)], to: .primary, receivedAt: "now", cursor: "s1",
                                       chats: ChatChanges(historyStarts: [HistoryStart(chatId: 9, upstreamChat: "!room", position: "t50")]))
        await #expect(throws: StoreError.self) {
            _ = try await store.applyOlder(page(1...49), to: .primary, chat: 9, receivedAt: "now", next: nil)
        }
        #expect(try await store.pendingHistory(of: .primary).map(\.position) == ["t50"])
        #expect(try await texts() == ["message 50"])
    }

    @Test func pendingChatsComeMostRecentlyActiveFirst() async throws {
        _ = try await store.applyBatch([message(5, chat: 1), message(50, chat: 2), message(20, chat: 3)], to: .primary, receivedAt: "now", cursor: "s1",
                                       chats: ChatChanges(historyStarts: [1, 2, 3].map { HistoryStart(chatId: $0, upstreamChat: "!\($0)", position: "t") }))
        #expect(try await store.pendingHistory(of: .primary).map(\.chatId) == [2, 3, 1])
        #expect(try await store.historyProgress(of: .primary) == HistoryProgress(roomsPending: 3, fetched: 0))
        #expect(try await store.historyProgress(of: .linked) == nil, "an account without history to fetch says so")
    }

    @Test func messagesStoredByAnEarlierVersionAreMovedUpAndHistoryGoesBelowThem() async throws {
        let legacy = folder.path + "/legacy.sqlite"
        let connection = try SQLiteConnection(path: legacy)
        try Migrations.migrate(connection, to: 11)
        for number in 1...3 {
            try connection.statement("""
                INSERT INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size, event_id)
                VALUES (0, ?1, 9, '@bob:test', ?2, ?3, 'now', 10, ?4)
                """).run(.integer(Int64(number)), .text("old \(number)"), .text(Self.time(40 + number)), .text("$old-\(number)"))
            try connection.statement("INSERT INTO message_search (rowid, text) VALUES (?1, ?2)").run(.integer(Int64(number) * 2), .text("old \(number)"))
        }
        try connection.statement("""
            INSERT INTO chats (account, chat_id, message_count, last_message_id, last_message_at) VALUES (0, 9, 3, 3, ?1)
            """).run(.text(Self.time(43)))
        try connection.statement("UPDATE settings SET value = 30 WHERE key = 'used_bytes'").run()
        try connection.statement("INSERT INTO cursors (account, position, newest_id) VALUES (0, 's0', 3)").run()
        let upgraded = try MessageStore(location: .file(legacy))
        let ids = try await upgraded.messages(of: .primary, chat: 9).messages.reversed().map(\.id)
        #expect(ids.allSatisfy { $0 > Migrations.firstEventMessageID })
        #expect(try await upgraded.chats(of: .primary).first?.lastMessageId == ids.last)
        #expect(try await upgraded.search(SearchQuery("old"), account: .primary).results.count == 3)
        #expect(try await upgraded.searchIndexIsSound())
        _ = try await upgraded.applyBatch([message(50)], to: .primary, receivedAt: "now", cursor: "s1",
                                          chats: ChatChanges(historyStarts: [HistoryStart(chatId: 9, upstreamChat: "!room", position: "t")]))
        _ = try await upgraded.applyOlder(page(1...2), to: .primary, chat: 9, receivedAt: "now", next: nil)
        #expect(try await upgraded.messages(of: .primary, chat: 9).messages.reversed().map(\.text) == ["message 1", "message 2", "old 1", "old 2", "old 3", "message 50"])
    }
}
