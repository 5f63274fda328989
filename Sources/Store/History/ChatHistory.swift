import SQLite

/// Where a chat's older history is fetched from next: the upstream's own position in it (a Matrix
/// `prev_batch` or `/messages` `end`), opaque to the store.
public struct HistoryStart: Sendable, Equatable {
    public var chatId: Int64
    /// The upstream's name of the chat (a Matrix room id).
    public var upstreamChat: String
    public var position: String

    public init(chatId: Int64, upstreamChat: String, position: String) {
        self.chatId = chatId
        self.upstreamChat = upstreamChat
        self.position = position
    }
}

/// How far fetching the older history of an account's chats is (CONTRACT section 10, `history`).
public struct HistoryProgress: Sendable, Equatable {
    /// Chats whose first message has not been reached yet.
    public var roomsPending: Int
    /// Messages stored from older history so far.
    public var fetched: Int64

    public var complete: Bool { roomsPending == 0 }

    public init(roomsPending: Int = 0, fetched: Int64 = 0) {
        self.roomsPending = roomsPending
        self.fetched = fetched
    }
}

/// The `chat_history` table, inside the transactions of the batches that move it.
struct ChatHistoryWork {
    let connection: SQLiteConnection
    let account: AccountRole

    /// The first position known for each chat is where its history starts; later ones are ignored
    /// (the chat's history is being fetched from where it was first seen, back).
    func record(_ starts: [HistoryStart]) throws {
        guard !starts.isEmpty else { return }
        let insert = try connection.statement("""
            INSERT OR IGNORE INTO chat_history (account, chat_id, upstream_chat, position) VALUES (?1, ?2, ?3, ?4)
            """)
        for start in starts {
            try insert.run(.integer(account.rawValue), .integer(start.chatId), .text(start.upstreamChat), .text(start.position))
        }
    }

    /// After a page of `chatID`'s older history: `next` is where the next page starts (nil: the
    /// chat's first message is in the copy); `stored` messages of it were new.
    func advance(_ chatID: Int64, to next: String?, stored: Int) throws {
        try connection.statement("""
            UPDATE chat_history SET position = ?3, fetched = fetched + ?4 WHERE account = ?1 AND chat_id = ?2
            """).run(.integer(account.rawValue), .integer(chatID), next.map(SQLiteValue.text) ?? .null, .integer(Int64(stored)))
    }

    /// The chats still to fetch, the most recently active first (what a person opens first).
    func pending() throws -> [HistoryStart] {
        try connection.statement("""
            SELECT h.chat_id, h.upstream_chat, h.position FROM chat_history h
            LEFT JOIN chats c ON c.account = h.account AND c.chat_id = h.chat_id
            WHERE h.account = ?1 AND h.position IS NOT NULL
            ORDER BY c.last_message_at DESC, h.chat_id
            """).query([.integer(account.rawValue)]) {
            HistoryStart(chatId: $0.int64(at: 0), upstreamChat: $0.string(at: 1), position: $0.string(at: 2))
        }
    }

    func progress() throws -> HistoryProgress {
        let row = try connection.statement("""
            SELECT count(position), coalesce(sum(fetched), 0) FROM chat_history WHERE account = ?1
            """).query([.integer(account.rawValue)]) { (Int($0.int64(at: 0)), $0.int64(at: 1)) }.first ?? (0, 0)
        return HistoryProgress(roomsPending: row.0, fetched: row.1)
    }
}
