import Foundation
@testable import Store
import Testing
import Upstream

/// Threads of a Matrix account (`m.thread`) in a real SQLite file: a reply in a thread is read in
/// its thread, not in the chat's timeline, its first message counts the replies, whichever comes
/// first; and a message written here can answer in a thread.
@Suite("Threads in the copy")
struct ThreadsTests {
    let folder: TemporaryFolder
    let store: MessageStore

    init() async throws {
        folder = try TemporaryFolder()
        store = try MessageStore(location: .file(folder.path + "/store.sqlite"))
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1001, linkedUserId: nil))
    }

    private func message(_ id: String, _ text: String, at second: Int, inThreadOf root: String? = nil) -> UpstreamMessage {
        var message = UpstreamMessage(id: 0, chatId: 9, sender: "@bob:test", text: text, sentAt: Self.time(second), eventId: id)
        message.threadRoot = root
        return message
    }

    private static func time(_ second: Int) -> String { "2026-11-29T12:00:\(second < 10 ? "0" : "")\(second).000Z" }

    private func batch(_ events: [UpstreamMessage]) async throws -> AppliedBatch {
        try await store.applyBatch(events, to: .primary, receivedAt: now, cursor: "s")
    }

    private func timeline() async throws -> [StoredMessage] {
        try await store.messages(of: .primary, chat: 9).messages
    }

    private func stored(_ eventID: String) async throws -> StoredMessage {
        try #require(try await store.messages(of: .primary, limit: 500).messages.first { $0.eventId == eventID })
    }

    @Test func repliesInAThreadAreReadInItAndItsFirstMessageCountsThem() async throws {
        _ = try await batch([message("$root", "who is in for Friday?", at: 1), message("$other", "unrelated", at: 2)])
        let root = try await stored("$root")
        let first = try await batch([message("$r1", "me", at: 3, inThreadOf: "$root")])
        #expect(first.fresh.map(\.threadId) == [root.id], "a live reply names its thread")
        #expect(first.changed.map(\.id) == [root.id] && first.changed.first?.thread == ThreadSummary(replies: 1, lastReplyAt: Self.time(3)),
                "the first message changes: one reply now")
        let second = try await batch([message("$r2", "me too", at: 4, inThreadOf: "$root")])
        #expect(second.changed.first?.thread == ThreadSummary(replies: 2, lastReplyAt: Self.time(4)))

        #expect(try await timeline().map(\.text) == ["unrelated", "who is in for Friday?"], "the chat's timeline leaves the replies out")
        #expect(try await timeline().last?.thread == ThreadSummary(replies: 2, lastReplyAt: Self.time(4)))
        let thread = try #require(try await store.threadReplies(of: .primary, root: root.id))
        #expect(thread.messages.map(\.text) == ["me too", "me"], "the thread, newest first")
        #expect(thread.messages.allSatisfy { $0.threadId == root.id })
        #expect(try await store.messages(of: .primary).messages.count == 4, "the account's whole stream still has every message")
    }

    @Test func aThreadsPagesGoBackwardsAndAMessageWithoutThreadOrEventHasNone() async throws {
        _ = try await batch([message("$root", "start", at: 1)] + (1...5).map { message("$r\($0)", "reply \($0)", at: 1 + $0, inThreadOf: "$root") })
        let root = try await stored("$root")
        let page = try #require(try await store.threadReplies(of: .primary, root: root.id, limit: 2))
        #expect(page.messages.map(\.text) == ["reply 5", "reply 4"])
        let older = try #require(try await store.threadReplies(of: .primary, root: root.id, before: page.nextBefore, limit: 10))
        #expect(older.messages.map(\.text) == ["reply 3", "reply 2", "reply 1"] && older.nextBefore == nil)
        #expect(try await store.threadReplies(of: .primary, root: 999_999) == nil, "no such message")
        let plain = UpstreamMessage(id: 7, chatId: 9, sender: "ann", text: "no event id", sentAt: Self.time(9))
        _ = try await batch([plain])
        #expect(try await store.threadReplies(of: .primary, root: 7) == nil, "a message of this project's protocol has no thread")
    }

    @Test func aReplyWhoseFirstMessageIsNotHereYetStaysInTheTimelineUntilItComes() async throws {
        _ = try await batch([message("$r1", "answer to something older", at: 5, inThreadOf: "$old")])
        #expect(try await timeline().map(\.text) == ["answer to something older"], "nothing stored is out of sight")
        #expect(try await timeline().first?.threadId == nil)
        // History brings the first message later (newest first, below what is stored).
        let older = try await store.applyOlder([message("$old", "the question", at: 1)], to: .primary, chat: 9, receivedAt: now, next: nil)
        #expect(older.fresh.first?.thread == ThreadSummary(replies: 1, lastReplyAt: Self.time(5)), "it counts the reply that came first")
        #expect(try await timeline().map(\.text) == ["the question"])
        #expect(try await stored("$r1").threadId == older.fresh.first?.id)
    }

    @Test func aDeletedReplyLeavesItsThreadsCount() async throws {
        _ = try await batch([message("$root", "start", at: 1), message("$r1", "one", at: 2, inThreadOf: "$root"),
                             message("$r2", "two", at: 3, inThreadOf: "$root")])
        let outcome = try await batch([UpstreamMessage(id: 0, chatId: 9, sender: "@bob:test", text: "", sentAt: Self.time(9), eventId: "$x",
                                                       relation: .redacts(eventId: "$r2"))])
        #expect(outcome.changed.first?.thread == ThreadSummary(replies: 1, lastReplyAt: Self.time(2)))
        let last = try await batch([UpstreamMessage(id: 0, chatId: 9, sender: "@bob:test", text: "", sentAt: Self.time(9), eventId: "$y",
                                                    relation: .redacts(eventId: "$r1"))])
        #expect(last.changed.count == 1 && last.changed.first?.thread == nil, "no replies: no thread to show")
    }

    @Test func searchFindsARepliesWithTheirThread() async throws {
        _ = try await batch([message("$root", "start", at: 1), message("$r1", "the pineapple question", at: 2, inThreadOf: "$root")])
        let root = try await stored("$root")
        let found = try await store.search(try SearchQuery("pineapple"), account: .primary)
        #expect(found.results.map(\.message.threadId) == [root.id], "a result opens in its thread")
    }

    @Test func aMessageWrittenHereAnswersInTheThreadOfTheMessageAskedOrOfItsOwnThread() async throws {
        _ = try await batch([message("$root", "start", at: 1), message("$r1", "one", at: 2, inThreadOf: "$root")])
        let root = try await stored("$root"), reply = try await stored("$r1")
        guard case .queued(let entry) = try await store.enqueue("in the thread", to: 9, of: .primary, requestKey: "a", upstreamKey: "k1",
                                                                createdAt: now, inThreadOf: root.id) else {
            Issue.record("not queued")
            return
        }
        #expect(entry.threadRoot == "$root" && entry.targetMessageId == root.id && entry.action == .message)
        guard case .queued(let fromReply) = try await store.enqueue("from a reply", to: 9, of: .primary, requestKey: "b", upstreamKey: "k2",
                                                                    createdAt: now, inThreadOf: reply.id) else {
            Issue.record("not queued")
            return
        }
        #expect(fromReply.threadRoot == "$root", "a thread has one first message: answering a reply answers in its thread")
        #expect(try await store.outbox().map(\.threadRoot) == ["$root", "$root"], "read back as written")
        #expect(try await store.enqueue("x", to: 9, of: .primary, requestKey: "c", upstreamKey: "k3", createdAt: now, inThreadOf: 424_242) == .noSuchThread)
        var elsewhere = message("$elsewhere", "another chat", at: 3)
        elsewhere.chatId = 8
        _ = try await batch([elsewhere])
        #expect(try await store.enqueue("x", to: 8, of: .primary, requestKey: "d", upstreamKey: "k4", createdAt: now, inThreadOf: root.id) == .noSuchThread,
                "a thread is answered in its own chat")
        // The echo of what was sent carries its thread and takes the entry out.
        var echo = message("$mine", "in the thread", at: 5, inThreadOf: "$root")
        echo.sendKey = "k1"
        let stored = try await batch([echo])
        #expect(stored.sent == [entry.id] && stored.fresh.first?.threadId == root.id)
    }

    // MARK: Read state per thread

    private func counts(main: Int64, threads: [String: Int64], highlights: [String: Int64] = [:]) -> ChatChanges {
        let perThread = threads.mapValues { NotificationCounts(notifications: $0, highlights: 0) }
            .merging(highlights.mapValues { NotificationCounts(notifications: 0, highlights: $0) }) {
                NotificationCounts(notifications: $0.notifications, highlights: $1.highlights)
            }
        let sum = perThread.values.reduce(0) { $0 + $1.notifications }, mentions = perThread.values.reduce(0) { $0 + $1.highlights }
        return ChatChanges(counts: [9: NotificationCounts(notifications: main + sum, highlights: mentions, threads: perThread)])
    }

    private func chat() async throws -> ChatSummary {
        try #require(try await store.chats(of: .primary).first { $0.id == 9 })
    }

    @Test func eachThreadKeepsTheUpstreamsUnreadCountAndItsFirstMessageShowsIt() async throws {
        _ = try await batch([message("$root", "who is in for Friday?", at: 1), message("$other", "a question", at: 2)])
        let root = try await stored("$root")
        let replies = try await store.applyBatch([message("$r1", "me", at: 3, inThreadOf: "$root"), message("$r2", "me too", at: 4, inThreadOf: "$root")],
                                                 to: .primary, receivedAt: now, cursor: "s2", chats: counts(main: 1, threads: ["$root": 2], highlights: ["$root": 1]))
        #expect(replies.changed.first { $0.id == root.id }?.thread == ThreadSummary(replies: 2, lastReplyAt: Self.time(4), unread: 2, highlights: 1),
                "the first message shows what is unread in its thread")
        #expect(try await chat().unread == 3, "the chat counts its timeline's and its threads'")
        #expect(try await timeline().last?.thread?.unread == 2, "read back the same")

        // Read in another client: the thread leaves the counts, and its first message shows it.
        let readElsewhere = try await store.applyBatch([], to: .primary, receivedAt: now, cursor: "s3", chats: counts(main: 1, threads: [:]))
        #expect(readElsewhere.changed.map(\.id) == [root.id] && readElsewhere.changed.first?.thread?.unread == 0)
        #expect(try await chat().unread == 1)
        // The same counts again change nothing, so nothing is shown again.
        let same = try await store.applyBatch([], to: .primary, receivedAt: now, cursor: "s4", chats: counts(main: 1, threads: [:]))
        #expect(same.changed.isEmpty)
    }

    @Test func aThreadReadHereLeavesItsChatsCountsAndTheWholeChatReadReadsItsThreads() async throws {
        _ = try await batch([message("$root", "plans", at: 1), message("$r1", "yes", at: 2, inThreadOf: "$root"),
                             message("$r2", "no", at: 3, inThreadOf: "$root"), message("$later", "in the timeline", at: 4)])
        let root = try await stored("$root")
        _ = try await store.applyBatch([], to: .primary, receivedAt: now, cursor: "s2", chats: counts(main: 1, threads: ["$root": 2]))
        #expect(try await chat().unread == 3)

        let read = try #require(try await store.markThreadRead(root: root.id, of: .primary))
        #expect(read.chatId == 9 && read.rootEvent == "$root" && read.newestReplyEvent == "$r2", "the receipt goes on the thread's newest reply")
        #expect(read.root.thread == ThreadSummary(replies: 2, lastReplyAt: Self.time(3), unread: 0, highlights: 0))
        #expect(try await chat().unread == 1, "the chat keeps its main timeline's unread")
        #expect(try await store.markThreadRead(root: 424_242, of: .primary) == nil, "no such message")

        // The whole chat read: one marker at its newest message reads its threads as well.
        _ = try await store.applyBatch([], to: .primary, receivedAt: now, cursor: "s3", chats: counts(main: 1, threads: ["$root": 1]))
        #expect(try await store.markRead(chat: 9, of: .primary))
        #expect(try await chat().unread == 0)
        #expect(try await timeline().last?.thread?.unread == 0)
    }
}
