import SQLite
import Upstream

/// Reads shared by the store and its read-only companion.
enum MessageQueries {
    static let columns = """
        m.id, m.chat_id, m.sender, m.text, m.sent_at, m.received_at, c.name, m.edited_at, m.kind, m.sender_name, \
        m.media_name, m.media_type, m.media_size, m.media_source, m.reply_to_event IS NOT NULL, \
        CASE WHEN m.reply_to_event IS NULL THEN NULL ELSE \
        (SELECT r.id FROM messages r WHERE r.account = m.account AND r.event_id = m.reply_to_event) END, m.attention, m.event_id, \
        CASE WHEN m.thread_root_event IS NULL THEN NULL ELSE \
        (SELECT r.id FROM messages r WHERE r.account = m.account AND r.event_id = m.thread_root_event) END, \
        CASE WHEN m.event_id IS NULL THEN 0 ELSE \
        (SELECT count(*) FROM messages t WHERE t.account = m.account AND t.thread_root_event = m.event_id) END, \
        CASE WHEN m.event_id IS NULL THEN NULL ELSE \
        (SELECT max(t.sent_at) FROM messages t WHERE t.account = m.account AND t.thread_root_event = m.event_id) END, \
        \(ThreadQueries.unreadColumns)
        """
    private static let joinChats = "LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id"

    /// Newest first, ids below `before`; one chat's timeline when `chat` is given (without the
    /// replies read in their thread, `ThreadQueries`). A statement each, so that
    /// SQLite picks the chat index for the one and the primary key for the other.
    static func page(_ connection: SQLiteConnection, account: AccountRole, chat: Int64? = nil, before: Int64?, limit: Int) throws -> MessagePage {
        let limit = max(1, limit)
        let statement = try connection.statement(chat == nil ? """
            SELECT \(columns) FROM messages m \(joinChats)
            WHERE m.account = ?1 AND m.id < ?2 ORDER BY m.id DESC LIMIT ?3
            """ : """
            SELECT \(columns) FROM messages m \(joinChats)
            WHERE m.account = ?1 AND m.chat_id = ?4 AND m.id < ?2 AND \(ThreadQueries.inTimeline) ORDER BY m.id DESC LIMIT ?3
            """)
        // One row more than asked tells whether an older page exists.
        var bindings: [SQLiteValue] = [.integer(account.rawValue), .integer(before ?? Int64.max), .integer(Int64(limit + 1))]
        if let chat { bindings.append(.integer(chat)) }
        var rows = try statement.query(bindings) { message($0, account: account) }
        let hasMore = rows.count > limit
        if hasMore { rows.removeLast() }
        try ReactionQueries.attach(to: &rows, connection, account: account)
        return MessagePage(messages: rows, nextBefore: hasMore ? rows.last?.id : nil)
    }

    /// Oldest first, ids above `after`: the next slice of an export.
    static func slice(_ connection: SQLiteConnection, account: AccountRole, chat: Int64?, after: Int64, limit: Int) throws -> [StoredMessage] {
        let statement = try connection.statement(chat == nil ? """
            SELECT \(columns) FROM messages m \(joinChats)
            WHERE m.account = ?1 AND m.id > ?2 ORDER BY m.id LIMIT ?3
            """ : """
            SELECT \(columns) FROM messages m \(joinChats)
            WHERE m.account = ?1 AND m.chat_id = ?4 AND m.id > ?2 ORDER BY m.id LIMIT ?3
            """)
        var bindings: [SQLiteValue] = [.integer(account.rawValue), .integer(after), .integer(Int64(max(1, limit)))]
        if let chat { bindings.append(.integer(chat)) }
        var rows = try statement.query(bindings) { message($0, account: account) }
        try ReactionQueries.attach(to: &rows, connection, account: account)
        return rows
    }

    /// The stored message `id`, or nil.
    static func one(_ connection: SQLiteConnection, account: AccountRole, id: Int64) throws -> StoredMessage? {
        var rows = try connection.statement("SELECT \(columns) FROM messages m \(joinChats) WHERE m.account = ?1 AND m.id = ?2")
            .query([.integer(account.rawValue), .integer(id)]) { message($0, account: account) }
        try ReactionQueries.attach(to: &rows, connection, account: account)
        return rows.first
    }

    /// A row of `columns` (search reads the same ones).
    static func message(_ row: SQLiteStatement, account: AccountRole) -> StoredMessage {
        var message = StoredMessage(account: account, id: row.int64(at: 0), chatId: row.int64(at: 1), sender: row.string(at: 2),
                      text: row.string(at: 3), sentAt: row.string(at: 4), receivedAt: row.string(at: 5),
                      chatName: row.isNull(at: 6) ? nil : row.string(at: 6), editedAt: row.isNull(at: 7) ? nil : row.string(at: 7),
                      kind: UpstreamMessage.Kind(rawValue: row.string(at: 8)) ?? .text, senderName: row.isNull(at: 9) ? nil : row.string(at: 9),
                      media: row.isNull(at: 10) ? nil : UpstreamMessage.Media(name: row.string(at: 10), mimetype: row.isNull(at: 11) ? nil : row.string(at: 11),
                                                                     size: row.isNull(at: 12) ? nil : row.int64(at: 12),
                                                                     source: row.isNull(at: 13) ? nil : row.string(at: 13)),
                      isReply: row.int64(at: 14) != 0, replyTo: row.isNull(at: 15) ? nil : row.int64(at: 15))
        message.attention = row.isNull(at: 16) ? nil : UpstreamMessage.Attention(rawValue: row.string(at: 16))
        message.eventId = row.isNull(at: 17) ? nil : row.string(at: 17)
        message.threadId = row.isNull(at: 18) ? nil : row.int64(at: 18)
        if row.int64(at: 19) > 0 {
            message.thread = ThreadSummary(replies: Int(row.int64(at: 19)), lastReplyAt: row.string(at: 20),
                                           unread: row.isNull(at: 21) ? 0 : Int(row.int64(at: 21)), highlights: row.isNull(at: 22) ? 0 : Int(row.int64(at: 22)))
        }
        return message
    }
}
