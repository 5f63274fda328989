import SQLite

/// What SQLite's query planner is told of the store's shape, written to `sqlite_stat1` at every
/// open instead of measured with `ANALYZE`.
///
/// Without statistics the planner guesses that an equality on an index's first column leaves
/// about ten rows. Every key here begins with `account`, which has two values, so it took
/// `account = ?` on a primary key for a narrow search and scanned all of an account's rows rather
/// than use the index made for the query: a thread's latest reply (asked for every message read),
/// a message's reactions, a chat's newest message. On the first sync of a Matrix account of 200
/// rooms those scans were most of the time the store took to commit, and they grow with the store.
///
/// The figures are the store's shape, not counts: one account holds half of the rows, a chat
/// about a thousand messages, a thread a few replies, a message a few reactions and edits. They
/// are fixed on purpose. `ANALYZE` would measure a new store as empty, reading a large one costs a
/// scan of every table, and the plans the store relies on stay the same as it grows.
enum PlannerStatistics {
    /// One `sqlite_stat1` row: for `index` of `table` (a `WITHOUT ROWID` table's primary key goes
    /// by the table's name), the rows it holds, then how many rows share each prefix of its columns.
    struct Row: Equatable {
        var table: String
        var index: String
        var rows: Int
        var perPrefix: [Int]

        var stat: String { ([rows] + perPrefix).map(String.init).joined(separator: " ") }
    }

    private static let messages = 1_000_000
    private static let perAccount = messages / 2

    static let rows: [Row] = [
        Row(table: "messages", index: "messages", rows: messages, perPrefix: [perAccount, 1]),
        Row(table: "messages", index: "messages_by_chat", rows: messages, perPrefix: [perAccount, 1_000, 1]),
        Row(table: "messages", index: "messages_by_event_id", rows: messages, perPrefix: [perAccount, 1]),
        // Partial indexes count only their own rows: replies in threads, encrypted messages.
        Row(table: "messages", index: "messages_in_thread", rows: 20_000, perPrefix: [10_000, 5, 1]),
        Row(table: "messages", index: "messages_unreadable", rows: 10_000, perPrefix: [5_000, 100]),
        Row(table: "chats", index: "chats", rows: 2_000, perPrefix: [1_000, 1]),
        Row(table: "chat_history", index: "chat_history", rows: 2_000, perPrefix: [1_000, 1]),
        Row(table: "thread_unread", index: "thread_unread", rows: 200, perPrefix: [100, 1]),
        Row(table: "reactions", index: "reactions", rows: 200_000, perPrefix: [100_000, 1]),
        Row(table: "reactions", index: "reactions_by_target", rows: 200_000, perPrefix: [100_000, 3]),
        Row(table: "message_edits", index: "message_edits", rows: 20_000, perPrefix: [10_000, 1]),
        Row(table: "message_edits", index: "message_edits_by_target", rows: 20_000, perPrefix: [10_000, 2]),
        Row(table: "redacted_events", index: "redacted_events", rows: 20_000, perPrefix: [10_000, 1]),
        Row(table: "outbox_requests", index: "outbox_requests", rows: 1_000, perPrefix: [500, 1]),
        Row(table: "outbox", index: "sqlite_autoindex_outbox_1", rows: 100, perPrefix: [1]),
        Row(table: "settings", index: "settings", rows: 10, perPrefix: [1]),
        Row(table: "upstream_credentials", index: "upstream_credentials", rows: 10, perPrefix: [1]),
        Row(table: "purchases", index: "purchases", rows: 100, perPrefix: [1]),
    ]

    /// Writes the rows in one transaction and has the connection's planner read them. The search
    /// index's tables are not listed: the full-text module reads them by its own means.
    static func install(on connection: SQLiteConnection) throws {
        try connection.transaction {
            try connection.execute("ANALYZE sqlite_schema")  // makes sqlite_stat1 without reading any table
            try connection.execute("DELETE FROM sqlite_stat1")
            let insert = try connection.statement("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?1, ?2, ?3)")
            for row in rows {
                try insert.run(.text(row.table), .text(row.index), .text(row.stat))
            }
        }
        try connection.execute("ANALYZE sqlite_schema")  // the planner reads sqlite_stat1 again
    }
}
