import SQLite
import Upstream

/// One chat of an account, as the chat list shows it.
public struct ChatSummary: Sendable, Equatable {
    public var id: Int64
    /// The name its upstream gave; nil when none.
    public var name: String?
    public var messageCount: Int64
    /// Messages that arrived live since the chat was last marked read (history never counts), or
    /// the upstream's own count where it gives one (a Matrix homeserver's, by the push rules).
    public var unread: Int64
    /// How many of the unread are mentions (highlights), where the upstream counts them.
    public var highlights: Int64 = 0
    /// The sending time of its newest message, as the upstream sent it.
    public var lastMessageAt: String?
    public var lastMessageId: Int64
    /// End-to-end encrypted: its messages cannot be read here.
    public var encrypted: Bool
    /// Whether the account is still in it; a chat it left (or was removed from) is an archive.
    public var membership: ChatMembership
    /// Encrypted, and its messages cannot be read here (no decrypting proxy such as pantalaimon
    /// in front of the homeserver).
    public var unreadable: Bool

    public init(id: Int64, name: String?, messageCount: Int64, unread: Int64, lastMessageAt: String?, lastMessageId: Int64,
                encrypted: Bool = false, membership: ChatMembership = .join, unreadable: Bool = false) {
        self.encrypted = encrypted
        self.membership = membership
        self.unreadable = unreadable
        self.id = id
        self.name = name
        self.messageCount = messageCount
        self.unread = unread
        self.lastMessageAt = lastMessageAt
        self.lastMessageId = lastMessageId
    }
}

/// Whether the account is in a chat (CONTRACT section 10, `membership`).
public enum ChatMembership: String, Sendable, Equatable {
    case join
    /// Left, kicked or banned: what was stored stays, read-only, until the person removes it.
    case leave
}

/// What a sync batch says of its account's chats besides their messages, kept in the batch's own
/// transaction.
public struct ChatChanges: Sendable, Equatable {
    /// Where each chat's older history begins (only a chat's first one counts).
    public var historyStarts: [HistoryStart]
    /// Chats read in another client: their unread counts go to 0.
    public var readElsewhere: [Int64]
    /// Chats whose membership the upstream told.
    public var membership: [Int64: ChatMembership]
    /// What the upstream counts as unread in each chat it told of: the chat's counts become these.
    public var counts: [Int64: NotificationCounts]

    public init(historyStarts: [HistoryStart] = [], readElsewhere: [Int64] = [], membership: [Int64: ChatMembership] = [:],
                counts: [Int64: NotificationCounts] = [:]) {
        self.historyStarts = historyStarts
        self.readElsewhere = readElsewhere
        self.membership = membership
        self.counts = counts
    }

    public var isEmpty: Bool { historyStarts.isEmpty && readElsewhere.isEmpty && membership.isEmpty && counts.isEmpty }
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
    /// Of an encrypted chat `c`: its messages cannot be read here. Some are stored as unreadable,
    /// or none at all is (a room read through a decrypting proxy has readable ones).
    static let unreadable = """
        (c.message_count = 0 OR EXISTS (SELECT 1 FROM messages u
                                        WHERE u.account = c.account AND u.chat_id = c.chat_id AND u.kind = 'encrypted'))
        """

    static func chats(_ connection: SQLiteConnection, account: AccountRole) throws -> [ChatSummary] {
        try connection.statement("""
            SELECT \(summaryColumns) FROM chats c WHERE account = ?1
            ORDER BY coalesce(last_message_at, '') DESC, last_message_id DESC, chat_id
            """).query([.integer(account.rawValue)], row: summary)
    }

    /// The list's order, as Element's: the chat whose newest message was sent last first (a chat's
    /// messages may be stored in another order than they were sent: a sync brings its rooms in
    /// the order of their ids), then the newest stored.
    static func isBefore(_ a: ChatSummary, _ b: ChatSummary) -> Bool {
        (a.lastMessageAt ?? "", a.lastMessageId, -a.id) > (b.lastMessageAt ?? "", b.lastMessageId, -b.id)
    }

    /// The chats `ids` of `account` as they stand now (those that exist), in the list's order.
    static func chats(_ connection: SQLiteConnection, account: AccountRole, ids: Set<Int64>) throws -> [ChatSummary] {
        let one = try connection.statement("SELECT \(summaryColumns) FROM chats c WHERE account = ?1 AND chat_id = ?2")
        return try ids.flatMap { id in try one.query([.integer(account.rawValue), .integer(id)], row: summary) }
            .sorted(by: isBefore)
    }

    /// `unreadable` is asked of encrypted chats only: its look into the chat's messages would
    /// cost every stored batch a scan of each chat it touched (ingest fell 30-fold, `lp-bench report`).
    private static let summaryColumns = """
        chat_id, name, message_count, unread, last_message_at, last_message_id, encrypted, membership,
        CASE WHEN encrypted = 1 THEN \(unreadable) ELSE 0 END, highlights
        """

    private static func summary(_ row: SQLiteStatement) -> ChatSummary {
        var chat = ChatSummary(id: row.int64(at: 0), name: row.isNull(at: 1) ? nil : row.string(at: 1), messageCount: row.int64(at: 2),
                    unread: row.int64(at: 3), lastMessageAt: row.isNull(at: 4) ? nil : row.string(at: 4), lastMessageId: row.int64(at: 5),
                    encrypted: row.int64(at: 6) != 0, membership: ChatMembership(rawValue: row.string(at: 7)) ?? .join,
                    unreadable: row.int64(at: 8) != 0)
        chat.highlights = row.int64(at: 9)
        return chat
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
                                                           WHERE account = ?1 AND chat_id = ?2 AND id > ?3)),
                                     highlights = CASE WHEN (SELECT count(*) FROM messages WHERE account = ?1 AND chat_id = ?2 AND id > ?3) = 0
                                                       THEN 0 ELSE highlights END
                    WHERE account = ?1 AND chat_id = ?2
                    """).run(.integer(account.rawValue), .integer(chat), .integer(messageID))
            } else {
                // Its threads too: the upstream is told with one marker at the chat's newest
                // message, which reads everything before it (a Matrix unthreaded receipt).
                try connectionForReading.statement("DELETE FROM thread_unread WHERE account = ?1 AND chat_id = ?2")
                    .run(.integer(account.rawValue), .integer(chat))
                try connectionForReading.statement("UPDATE chats SET unread = 0, highlights = 0 WHERE account = ?1 AND chat_id = ?2")
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

extension MessageStore {
    /// Removes a chat and every message of it from the copy (messages, search, counts, its
    /// history position), in one transaction; the ids removed, for the pages that show them. nil
    /// when the account has no such chat.
    public func deleteChat(_ chat: Int64, of account: AccountRole) throws(StoreError) -> [Int64]? {
        let key: [SQLiteValue] = [.integer(account.rawValue), .integer(chat)]
        var freed: Int64 = 0
        let removed: [Int64]?
        do {
            removed = try connectionForReading.transaction { () throws -> [Int64]? in
                let connection = connectionForReading
                guard try connection.statement("SELECT 1 FROM chats WHERE account = ?1 AND chat_id = ?2").query(key, row: { _ in true }).first == true else {
                    return nil
                }
                let ids = try connection.statement("SELECT id FROM messages WHERE account = ?1 AND chat_id = ?2 ORDER BY id").query(key) { $0.int64(at: 0) }
                freed = try connection.statement("SELECT coalesce(sum(size), 0) FROM messages WHERE account = ?1 AND chat_id = ?2")
                    .query(key) { $0.int64(at: 0) }.first ?? 0
                try connection.statement("DELETE FROM thread_unread WHERE account = ?1 AND chat_id = ?2").run(key[0], key[1])
                freed += try connection.statement("DELETE FROM reactions WHERE account = ?1 AND chat_id = ?2 RETURNING size")
                    .query(key) { $0.int64(at: 0) }.reduce(0, +)
                try connection.statement("""
                    DELETE FROM message_edits WHERE account = ?1 AND target_event_id IN
                        (SELECT event_id FROM messages WHERE account = ?1 AND chat_id = ?2 AND event_id IS NOT NULL)
                    """).run(key[0], key[1])
                try connection.statement("DELETE FROM messages WHERE account = ?1 AND chat_id = ?2").run(key[0], key[1])
                try connection.statement("DELETE FROM chats WHERE account = ?1 AND chat_id = ?2").run(key[0], key[1])
                try connection.statement("DELETE FROM chat_history WHERE account = ?1 AND chat_id = ?2").run(key[0], key[1])
                try connection.statement(StoreSQL.addUsedBytes).run(.integer(-freed))
                return ids
            }
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
        if removed != nil { forgetUsedBytes(freed) }
        return removed
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

/// A thread marked read here: where to tell the upstream, and what it took from its chat's counts.
public struct ThreadRead: Sendable, Equatable {
    public var chatId: Int64
    /// The event id of the thread's first message, which names the thread upstream.
    public var rootEvent: String
    /// The event id of its newest reply; nil when none of its replies is stored.
    public var newestReplyEvent: String?
    /// The first message as it reads now, its thread read.
    public var root: StoredMessage
}

extension MessageStore {
    /// Marks the thread under the stored message `root` read: its unread counts go, and its chat's
    /// lose them. nil when `root` is not a stored message with an event id.
    public func markThreadRead(root: Int64, of account: AccountRole) throws(StoreError) -> ThreadRead? {
        do {
            return try connectionForReading.transaction { () throws -> ThreadRead? in
                let connection = connectionForReading
                let key: [SQLiteValue] = [.integer(account.rawValue), .integer(root)]
                guard let (chat, rootEvent) = try connection.statement("SELECT chat_id, event_id FROM messages WHERE account = ?1 AND id = ?2 AND event_id IS NOT NULL")
                    .query(key, row: { ($0.int64(at: 0), $0.string(at: 1)) }).first else { return nil }
                let thread: [SQLiteValue] = [.integer(account.rawValue), .text(rootEvent)]
                let newest = try connection.scalarText("""
                    SELECT event_id FROM messages WHERE account = ?1 AND thread_root_event = ?2 AND event_id IS NOT NULL ORDER BY id DESC LIMIT 1
                    """, thread[0], thread[1])
                if let (notifications, highlights) = try connection.statement("DELETE FROM thread_unread WHERE account = ?1 AND root_event = ?2 RETURNING notifications, highlights")
                    .query(thread, row: { ($0.int64(at: 0), $0.int64(at: 1)) }).first {
                    try connection.statement("""
                        UPDATE chats SET unread = max(0, unread - ?3), highlights = max(0, highlights - ?4) WHERE account = ?1 AND chat_id = ?2
                        """).run(.integer(account.rawValue), .integer(chat), .integer(notifications), .integer(highlights))
                }
                guard let message = try MessageQueries.one(connection, account: account, id: root) else { return nil }
                return ThreadRead(chatId: chat, rootEvent: rootEvent, newestReplyEvent: newest, root: message)
            }
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }
}
