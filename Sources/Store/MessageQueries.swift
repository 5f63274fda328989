import SQLite

/// Reads shared by the store and its read-only companion.
enum MessageQueries {
    static func page(_ connection: SQLiteConnection, account: AccountRole, before: Int64?, limit: Int) throws -> MessagePage {
        let limit = max(1, limit)
        let statement = try connection.statement("""
            SELECT m.id, m.chat_id, m.sender, m.text, m.sent_at, m.received_at, c.name FROM messages m
            LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
            WHERE m.account = ?1 AND m.id < ?2 ORDER BY m.id DESC LIMIT ?3
            """)
        // One row more than asked tells whether an older page exists.
        var rows = try statement.query([.integer(account.rawValue), .integer(before ?? Int64.max), .integer(Int64(limit + 1))]) {
            StoredMessage(account: account, id: $0.int64(at: 0), chatId: $0.int64(at: 1), sender: $0.string(at: 2),
                          text: $0.string(at: 3), sentAt: $0.string(at: 4), receivedAt: $0.string(at: 5),
                          chatName: $0.isNull(at: 6) ? nil : $0.string(at: 6))
        }
        let hasMore = rows.count > limit
        if hasMore { rows.removeLast() }
        return MessagePage(messages: rows, nextBefore: hasMore ? rows.last?.id : nil)
    }
}
