import SQLite
import Upstream

/// Threads (a Matrix `m.thread`): a reply in one keeps its first message's event id, whether
/// that message is stored yet or not. A chat's timeline leaves out the replies whose first
/// message is in the copy (they are read in their thread); a reply whose first message is not
/// here yet stays in the timeline, so nothing stored is out of sight.
enum ThreadQueries {
    /// The SQL condition, on messages `m`, of a message read in the chat's timeline.
    static let inTimeline = """
        (m.thread_root_event IS NULL OR NOT EXISTS (SELECT 1 FROM messages t WHERE t.account = m.account AND t.event_id = m.thread_root_event))
        """

    /// The thread under the stored message `root`, newest first, ids below `before`; nil when
    /// `root` is not a stored message with an event id.
    static func replies(_ connection: SQLiteConnection, account: AccountRole, root: Int64, before: Int64?, limit: Int) throws -> MessagePage? {
        guard let rootEvent = try connection.statement("SELECT event_id FROM messages WHERE account = ?1 AND id = ?2 AND event_id IS NOT NULL")
            .query([.integer(account.rawValue), .integer(root)], row: { $0.string(at: 0) }).first else { return nil }
        let limit = max(1, limit)
        var rows = try connection.statement("""
            SELECT \(MessageQueries.columns) FROM messages m LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
            WHERE m.account = ?1 AND m.thread_root_event = ?2 AND m.id < ?3 ORDER BY m.id DESC LIMIT ?4
            """).query([.integer(account.rawValue), .text(rootEvent), .integer(before ?? Int64.max), .integer(Int64(limit + 1))]) {
                MessageQueries.message($0, account: account)
            }
        let hasMore = rows.count > limit
        if hasMore { rows.removeLast() }
        try ReactionQueries.attach(to: &rows, connection, account: account)
        return MessagePage(messages: rows, nextBefore: hasMore ? rows.last?.id : nil)
    }
}

extension RelationWork {
    /// The first message of the thread the stored message `eventID` replies in, if any.
    func threadRoot(of eventID: String) throws -> String? {
        try connection.statement("SELECT thread_root_event FROM messages WHERE account = ?1 AND event_id = ?2 AND thread_root_event IS NOT NULL")
            .query([accountValue, .text(eventID)]) { $0.string(at: 0) }.first
    }

    /// Whether replies in a thread under `eventID` are stored (one index probe).
    func hasThreadReplies(_ eventID: String) throws -> Bool {
        try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM messages WHERE account = ?1 AND thread_root_event = ?2)", accountValue, .text(eventID)) == 1
    }

    /// The message `root` as its thread now stands (how many replies, the latest's time): in
    /// this batch's fresh messages when it is one, else among the changed.
    func showThread(of root: String, outcome: inout AppliedBatch) throws {
        guard let id = try connection.scalarInt("SELECT id FROM messages WHERE account = ?1 AND event_id = ?2", accountValue, .text(root)) else { return }
        let summary = try ThreadQueries.summary(connection, account: account, rootEvent: root)
        if let index = outcome.fresh.firstIndex(where: { $0.id == id }) {
            outcome.fresh[index].thread = summary
        } else if let changed = try MessageQueries.one(connection, account: account, id: id) {
            outcome.changed.removeAll { $0.id == id }
            outcome.changed.append(changed)
        }
    }
}

extension ThreadQueries {
    /// How many replies the thread under `rootEvent` has and when the latest came; nil: none.
    static func summary(_ connection: SQLiteConnection, account: AccountRole, rootEvent: String) throws -> ThreadSummary? {
        try connection.statement("""
            SELECT count(*), max(sent_at),
                   (SELECT notifications FROM thread_unread WHERE account = ?1 AND root_event = ?2),
                   (SELECT highlights FROM thread_unread WHERE account = ?1 AND root_event = ?2)
            FROM messages WHERE account = ?1 AND thread_root_event = ?2
            """).query([.integer(account.rawValue), .text(rootEvent)]) { row in
                row.int64(at: 0) == 0 ? nil : ThreadSummary(replies: Int(row.int64(at: 0)), lastReplyAt: row.string(at: 1),
                                                            unread: row.isNull(at: 2) ? 0 : Int(row.int64(at: 2)),
                                                            highlights: row.isNull(at: 3) ? 0 : Int(row.int64(at: 3)))
            }.first ?? nil
    }

    /// The two columns, of messages `m`, of what is unread in the thread under it (NULL: nothing).
    static let unreadColumns = """
        CASE WHEN m.event_id IS NULL THEN NULL ELSE \
        (SELECT u.notifications FROM thread_unread u WHERE u.account = m.account AND u.root_event = m.event_id) END, \
        CASE WHEN m.event_id IS NULL THEN NULL ELSE \
        (SELECT u.highlights FROM thread_unread u WHERE u.account = m.account AND u.root_event = m.event_id) END
        """
}

extension RelationWork {
    /// Makes `threads` the unread counts of every thread in `chat` (a thread not in it has none)
    /// and returns the first messages whose counts changed, to be shown again.
    func setThreadCounts(of chat: Int64, to threads: [String: NotificationCounts]) throws -> [String] {
        let old = try connection.statement("SELECT root_event, notifications, highlights FROM thread_unread WHERE account = ?1 AND chat_id = ?2")
            .query([accountValue, .integer(chat)]) { ($0.string(at: 0), NotificationCounts(notifications: $0.int64(at: 1), highlights: $0.int64(at: 2))) }
        let before = Dictionary(old, uniquingKeysWith: { first, _ in first })
        let after = threads.filter { $0.value.notifications > 0 || $0.value.highlights > 0 }
            .mapValues { NotificationCounts(notifications: $0.notifications, highlights: $0.highlights) }
        guard before != after else { return [] }
        try connection.statement("DELETE FROM thread_unread WHERE account = ?1 AND chat_id = ?2").run(accountValue, .integer(chat))
        let insert = try connection.statement("INSERT OR REPLACE INTO thread_unread (account, root_event, chat_id, notifications, highlights) VALUES (?1, ?2, ?3, ?4, ?5)")
        for (root, counts) in after.sorted(by: { $0.key < $1.key }) {
            try insert.run(accountValue, .text(root), .integer(chat), .integer(counts.notifications), .integer(counts.highlights))
        }
        return Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
    }
}
