import SQLite

/// One chat of an account, as the chat list shows it.
public struct ChatSummary: Sendable, Equatable {
    public var id: Int64
    /// The name its upstream gave; nil when none.
    public var name: String?
    public var messageCount: Int64
    /// Messages that arrived live since the chat was last marked read (history never counts).
    public var unread: Int64
    /// The sending time of its newest message, as the upstream sent it.
    public var lastMessageAt: String?
    public var lastMessageId: Int64
    /// End-to-end encrypted: its messages cannot be read here.
    public var encrypted: Bool

    public init(id: Int64, name: String?, messageCount: Int64, unread: Int64, lastMessageAt: String?, lastMessageId: Int64,
                encrypted: Bool = false) {
        self.encrypted = encrypted
        self.id = id
        self.name = name
        self.messageCount = messageCount
        self.unread = unread
        self.lastMessageAt = lastMessageAt
        self.lastMessageId = lastMessageId
    }
}

/// Which new messages of a batch make their chat's unread count rise: only those that arrived
/// live, never history or a catch-up after an outage (the engine knows which is which).
public enum UnreadCounting: Sendable, Equatable {
    case none
    case all
    /// Messages whose id is above this one.
    case above(Int64)

    func counts(_ id: Int64) -> Bool {
        switch self {
        case .none: false
        case .all: true
        case .above(let threshold): id > threshold
        }
    }
}

enum ChatQueries {
    /// `account`'s chats, newest activity first.
    static func chats(_ connection: SQLiteConnection, account: AccountRole) throws -> [ChatSummary] {
        try connection.statement("""
            SELECT chat_id, name, message_count, unread, last_message_at, last_message_id, encrypted FROM chats
            WHERE account = ?1 ORDER BY last_message_id DESC, chat_id
            """)
            .query([.integer(account.rawValue)]) {
                ChatSummary(id: $0.int64(at: 0), name: $0.isNull(at: 1) ? nil : $0.string(at: 1), messageCount: $0.int64(at: 2),
                            unread: $0.int64(at: 3), lastMessageAt: $0.isNull(at: 4) ? nil : $0.string(at: 4), lastMessageId: $0.int64(at: 5),
                            encrypted: $0.int64(at: 6) != 0)
            }
    }
}

extension MessageStore {
    /// `account`'s chats, newest activity first.
    public func chats(of account: AccountRole) throws(StoreError) -> [ChatSummary] {
        do {
            return try ChatQueries.chats(connectionForReading, account: account)
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// Marks the chat read: all of it, or (`through`) up to and including that message, so one
    /// opened at a search result counts as read only what was shown. The unread messages are the
    /// chat's newest (they came live, after its history), so what stays unread is those newer than
    /// `through`. False when `account` has no such chat.
    @discardableResult
    public func markRead(chat: Int64, of account: AccountRole, through messageID: Int64? = nil) throws(StoreError) -> Bool {
        do {
            if let messageID {
                try connectionForReading.statement("""
                    UPDATE chats SET unread = min(unread, (SELECT count(*) FROM messages
                                                           WHERE account = ?1 AND chat_id = ?2 AND id > ?3))
                    WHERE account = ?1 AND chat_id = ?2
                    """).run(.integer(account.rawValue), .integer(chat), .integer(messageID))
            } else {
                try connectionForReading.statement("UPDATE chats SET unread = 0 WHERE account = ?1 AND chat_id = ?2")
                    .run(.integer(account.rawValue), .integer(chat))
            }
            return connectionForReading.changes == 1  // a matched row counts, even when it was 0 already
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }
}

extension MessageStore {
    /// The event id of `chat`'s newest message (up to `messageID`, when given), for telling the
    /// upstream where the chat was read; nil for a chat of messages without event ids.
    public func newestEventID(in chat: Int64, of account: AccountRole, through messageID: Int64? = nil) throws(StoreError) -> String? {
        do {
            return try connectionForReading.scalarText("""
                SELECT event_id FROM messages WHERE account = ?1 AND chat_id = ?2 AND id <= ?3 AND event_id IS NOT NULL
                ORDER BY id DESC LIMIT 1
                """, .integer(account.rawValue), .integer(chat), .integer(messageID ?? Int64.max))
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }
}

extension StoreReader {
    /// As ``MessageStore/chats(of:)``, without waiting behind the writer.
    public func chats(of account: AccountRole) throws(StoreError) -> [ChatSummary] {
        do {
            return try ChatQueries.chats(connectionForReading, account: account)
        } catch {
            throw MessageStore.storeError(error, usage: nil, needed: 0)
        }
    }
}
