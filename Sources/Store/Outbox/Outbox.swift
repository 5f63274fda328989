import SQLite
import Upstream

/// A message the person wrote that the upstream does not have yet (CONTRACT section 11).
public struct OutboxEntry: Sendable, Equatable {
    public var id: Int64
    public var account: AccountRole
    public var chatId: Int64
    public var text: String
    public var state: OutboxState
    public var createdAt: String
    /// The key it carries upstream (the protocol's `Idempotency-Key`, a Matrix `txnId`): the same
    /// on every try, so the upstream keeps it once however many answers were lost.
    public var upstreamKey: String
    /// Tries so far (a try whose answer was lost counts).
    public var attempts: Int
    /// Why the upstream refused it, when `state` is `failed`.
    public var failure: SendRefusal?
    /// The user who wrote it, the only one it is ever sent as (nil: the account had no user yet).
    public var ownerUserId: Int64?
    /// What it does: a message, or a reaction (`text` its key) given or taken back.
    public var action: OutboxAction = .message
    /// For a reaction: the stored id of the message it is on; for a message in a thread: of the
    /// thread's first message (nil when that one left the copy).
    public var targetMessageId: Int64?
    /// For a message: the event id of the thread's first message it answers in.
    public var threadRoot: String?

    public init(id: Int64, account: AccountRole, chatId: Int64, text: String, state: OutboxState, createdAt: String, upstreamKey: String,
                attempts: Int = 0, failure: SendRefusal? = nil, ownerUserId: Int64? = nil) {
        self.id = id
        self.account = account
        self.chatId = chatId
        self.text = text
        self.state = state
        self.createdAt = createdAt
        self.upstreamKey = upstreamKey
        self.attempts = attempts
        self.failure = failure
        self.ownerUserId = ownerUserId
    }
}

/// What an outbox entry does once sent.
public enum OutboxAction: Sendable, Equatable {
    case message
    /// Gives the reaction `text` to the message with this event id.
    case react(target: String)
    /// Takes back the account's reaction `text` from the message `target`: `reaction` is the
    /// reaction's own event id, nil while it is not stored (given a moment ago, its answer not in
    /// yet, or never given).
    case unreact(target: String, reaction: String?)
}

/// What asking to give or take back a reaction came to.
public enum ReactionAdmission: Sendable, Equatable {
    case queued(OutboxEntry)
    /// The same was asked before and waits: this entry.
    case repeated(OutboxEntry)
    /// Nothing to do: the account's reaction is there already (to give), or is not (to take back).
    case already
    /// Taking back a reaction that was never sent: this entry gives it, and deleting it is the way.
    case unsentReaction(OutboxEntry)
    case noSuchMessage
    /// The message has no upstream id to react to (this project's protocol has no reactions).
    case notSupported
    case archived
    case encrypted
}

/// Where an outbox entry is. Offline, backing off, rate limited or stopped syncing is `queued`:
/// only a refusal that trying again will not change is `failed`.
public enum OutboxState: String, Sendable, Equatable, CaseIterable {
    case queued, sending, failed
}

/// What writing a message into the outbox came to.
public enum OutboxAdmission: Sendable, Equatable {
    /// Queued now.
    case queued(OutboxEntry)
    /// The same request came before: this is its outbox id; nothing new is queued.
    case repeated(outboxId: Int64)
    /// The same request key came before with another text.
    case keyReused
    case noSuchChat
    /// The message to answer in the thread of is not in that chat, or has no upstream id.
    case noSuchThread
    /// The account is no longer in the chat (an archive): nothing can be sent there.
    case archived
    /// The chat is end-to-end encrypted, and this dashboard cannot encrypt: sending its text there
    /// in the clear would put it beside encrypted messages for every member to see.
    case encrypted
}

/// Why an entry could not be taken out of the outbox.
public enum OutboxRemoval: Sendable, Equatable {
    case removed(OutboxEntry)
    /// It is being sent right now, or a try got no answer (it may be in the chat already): its
    /// fate is the upstream's answer to its next try.
    case sending
    case notFound
}

extension MessageStore {
    /// Writes `text` into the outbox for `chat`, under the page's `requestKey`, with the key it
    /// will carry upstream, before anything is sent. The same request key again is the first
    /// answer; with another text, `keyReused`. `thread`: the stored message whose thread it
    /// answers in (a reply in a thread answers in that same thread).
    public func enqueue(_ text: String, to chat: Int64, of account: AccountRole, requestKey: String, upstreamKey: String,
                        createdAt: String, inThreadOf thread: Int64? = nil) throws(StoreError) -> OutboxAdmission {
        let connection = connectionForReading
        let digest = OutboxDigest.of(text)
        do {
            return try connection.transaction { () throws -> OutboxAdmission in
                let earlier = try connection.statement("SELECT outbox_id, text_digest FROM outbox_requests WHERE account = ?1 AND request_key = ?2")
                    .query([.integer(account.rawValue), .text(requestKey)]) { (id: $0.int64(at: 0), digest: $0.int64(at: 1)) }.first
                if let earlier { return earlier.digest == digest ? .repeated(outboxId: earlier.id) : .keyReused }
                let found = try connection.statement("SELECT membership, encrypted FROM chats WHERE account = ?1 AND chat_id = ?2")
                    .query([.integer(account.rawValue), .integer(chat)]) { (ChatMembership(rawValue: $0.string(at: 0)) ?? .join, $0.int64(at: 1) != 0) }.first
                guard let (membership, encrypted) = found else { return .noSuchChat }
                guard membership == .join else { return .archived }
                guard !encrypted else { return .encrypted }
                // Written by the account's user of now, and sent only as them.
                guard let owner = try connection.scalarInt("SELECT user_id FROM accounts WHERE role = ?1", .integer(account.rawValue)) else {
                    return .noSuchChat
                }
                var root: (event: String, id: Int64)?
                if let thread {
                    // The thread's first message: this one, or the one it replies in, if stored.
                    root = try connection.statement("""
                        SELECT r.event_id, r.id FROM messages m JOIN messages r
                          ON r.account = m.account AND r.event_id = coalesce(m.thread_root_event, m.event_id)
                        WHERE m.account = ?1 AND m.id = ?2 AND m.chat_id = ?3
                        """).query([.integer(account.rawValue), .integer(thread), .integer(chat)]) { ($0.string(at: 0), $0.int64(at: 1)) }.first
                    guard root != nil else { return .noSuchThread }
                }
                // A message in a thread names the thread's first message as its target.
                try connection.statement("""
                    INSERT INTO outbox (account, chat_id, text, upstream_key, created_at, owner_user_id, target_event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    """).run(.integer(account.rawValue), .integer(chat), .text(text), .text(upstreamKey), .text(createdAt), .integer(owner),
                            root.map { .text($0.event) } ?? .null)
                let id = connection.lastInsertRowID
                try connection.statement("INSERT INTO outbox_requests (account, request_key, outbox_id, text_digest) VALUES (?1, ?2, ?3, ?4)")
                    .run(.integer(account.rawValue), .text(requestKey), .integer(id), .integer(digest))
                var entry = OutboxEntry(id: id, account: account, chatId: chat, text: text, state: .queued, createdAt: createdAt,
                                        upstreamKey: upstreamKey, ownerUserId: owner)
                entry.threadRoot = root?.event
                entry.targetMessageId = root?.id
                return .queued(entry)
            }
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }

    /// Writes into the outbox a reaction `key` to give (`adding`) to, or take back from, the
    /// message `messageID` of `chat`, unless the account's reaction already is as asked or the
    /// same waits there. Taking back a reaction whose entry waits still unsent answers that entry,
    /// unless `behindUnsent` (that entry is on its way: the taking back goes after it).
    public func enqueueReaction(_ key: String, adding: Bool, to messageID: Int64, in chat: Int64, of account: AccountRole,
                                behindUnsent: Bool = false, upstreamKey: String, createdAt: String) throws(StoreError) -> ReactionAdmission {
        let connection = connectionForReading
        let role = SQLiteValue.integer(account.rawValue)
        do {
            return try connection.transaction { () throws -> ReactionAdmission in
                let found = try connection.statement("SELECT event_id FROM messages WHERE account = ?1 AND id = ?2 AND chat_id = ?3")
                    .query([role, .integer(messageID), .integer(chat)]) { $0.isNull(at: 0) ? nil : $0.string(at: 0) }
                guard let row = found.first else { return .noSuchMessage }
                guard let target = row else { return .notSupported }
                let chatState = try connection.statement("SELECT membership, encrypted FROM chats WHERE account = ?1 AND chat_id = ?2")
                    .query([role, .integer(chat)]) { (ChatMembership(rawValue: $0.string(at: 0)) ?? .join, $0.int64(at: 1) != 0) }.first
                guard let (membership, encrypted) = chatState else { return .noSuchMessage }
                guard membership == .join else { return .archived }
                guard !encrypted else { return .encrypted }
                guard let owner = try connection.scalarInt("SELECT user_id FROM accounts WHERE role = ?1", role) else { return .noSuchMessage }
                // The latest wish for this key counts: what waits, else what is stored.
                let waiting = try OutboxQueries.entries(connection, where: "account = ?1 AND action <> 'message' AND target_event_id = ?2 AND text = ?3 AND \(OutboxQueries.ownedNow)",
                                                        [role, .text(target), .text(key)]).last
                if let waiting {
                    switch (waiting.action, adding) {
                    case (.react, true), (.unreact, false): return .repeated(waiting)
                    case (.react, false) where !behindUnsent: return .unsentReaction(waiting)
                    default: break
                    }
                } else {
                    let mine = try connection.scalarInt("""
                        SELECT EXISTS (SELECT 1 FROM reactions WHERE account = ?1 AND target_event_id = ?2 AND key = ?3 AND mine = 1)
                        """, role, .text(target), .text(key)) == 1
                    if mine == adding { return .already }
                }
                try connection.statement("""
                    INSERT INTO outbox (account, chat_id, text, upstream_key, created_at, owner_user_id, action, target_event_id)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                    """).run(role, .integer(chat), .text(key), .text(upstreamKey), .text(createdAt), .integer(owner),
                             .text(adding ? "react" : "unreact"), .text(target))
                let id = connection.lastInsertRowID
                guard let entry = try OutboxQueries.entries(connection, where: "outbox_id = \(id)").first else { return .noSuchMessage }
                return .queued(entry)
            }
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }

    /// What is not sent yet, oldest first (all accounts), of the users who hold the accounts now.
    public func outbox() throws(StoreError) -> [OutboxEntry] {
        do {
            return try OutboxQueries.entries(connectionForReading, where: OutboxQueries.ownedNow)
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// Moves an entry to `state` (a refusal with `failed`); `endingATry`: a try of it has just
    /// ended unsent, which is counted. The entry as it is now, nil when it has left the outbox.
    @discardableResult
    public func setOutboxState(_ id: Int64, to state: OutboxState, refusal: SendRefusal? = nil,
                               endingATry: Bool = false) throws(StoreError) -> OutboxEntry? {
        let refusal = state == .failed ? refusal : nil
        do {
            try connectionForReading.statement("""
                UPDATE outbox SET state = ?2, attempts = attempts + ?5, failure = ?3, failure_detail = ?4 WHERE outbox_id = ?1
                """).run(.integer(id), .text(state.rawValue), refusal.map { .text($0.reason.rawValue) } ?? .null,
                         refusal.map { .text($0.detail) } ?? .null, .integer(endingATry ? 1 : 0))
            return try OutboxQueries.entries(connectionForReading, where: "outbox_id = \(id)").first
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }

    /// What `account` has not sent yet, oldest first, of the user who holds it now.
    public func outbox(of account: AccountRole) throws(StoreError) -> [OutboxEntry] {
        do {
            return try OutboxQueries.entries(connectionForReading, where: "account = \(account.rawValue) AND \(OutboxQueries.ownedNow)")
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// The next entries of `account` to send, its oldest `queued` ones up to `limit` (a failed one
    /// waits for Try again), each with its chat as the upstream names it: only those its user of
    /// now wrote.
    public func nextToSend(of account: AccountRole, limit: Int) throws(StoreError) -> [(entry: OutboxEntry, upstreamChat: String?)] {
        let entries: [OutboxEntry]
        do {
            entries = try OutboxQueries.entries(connectionForReading, where: "account = \(account.rawValue) AND state = 'queued' AND \(OutboxQueries.ownedNow)",
                                                limit: limit)
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
        var upstreamChats: [Int64: String?] = [:]
        var line: [(entry: OutboxEntry, upstreamChat: String?)] = []
        for entry in entries {
            if upstreamChats[entry.chatId] == nil { upstreamChats[entry.chatId] = .some(try upstreamChat(of: entry.chatId, account: account)) }
            line.append((entry, upstreamChats[entry.chatId] ?? nil))
        }
        return line
    }

    /// The chat as its upstream names it (a Matrix room id), when the copy knows it.
    public func upstreamChat(of chat: Int64, account: AccountRole) throws(StoreError) -> String? {
        do {
            return try connectionForReading.statement("SELECT upstream_chat FROM chat_history WHERE account = ?1 AND chat_id = ?2")
                .query([.integer(account.rawValue), .integer(chat)]) { $0.string(at: 0) }.first
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// Entries written by a user who no longer holds their account (another user signed in, the
    /// linked account was detached), oldest first: kept, never sent, until saved or deleted.
    public func leftBehindOutbox() throws(StoreError) -> [OutboxEntry] {
        do {
            return try OutboxQueries.entries(connectionForReading, where: "NOT (\(OutboxQueries.ownedNow))")
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// Deletes those of `ids` that are still left behind (an entry its user holds again stays);
    /// how many went.
    @discardableResult
    public func deleteLeftBehindOutbox(_ ids: [Int64]) throws(StoreError) -> Int {
        guard !ids.isEmpty else { return 0 }
        do {
            try connectionForReading.execute("""
                DELETE FROM outbox WHERE outbox_id IN (\(ids.map(String.init).joined(separator: ","))) AND NOT (\(OutboxQueries.ownedNow))
                """)
            return connectionForReading.changes
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }

    /// Takes an entry out of the outbox unsent (Delete). Whether it is on its way right now is its
    /// sender's to know (and refuse) before asking.
    public func discardOutbox(_ id: Int64) throws(StoreError) -> OutboxRemoval {
        do {
            guard let entry = try OutboxQueries.entries(connectionForReading, where: "outbox_id = \(id)").first else { return .notFound }
            try connectionForReading.statement("DELETE FROM outbox WHERE outbox_id = ?1").run(.integer(id))
            return .removed(entry)
        } catch {
            throw Self.storeError(error, usage: storageUsage(), needed: 0)
        }
    }
}

extension StoreReader {
    /// As ``MessageStore/outbox()``, without waiting behind the writer.
    public func outbox() throws(StoreError) -> [OutboxEntry] {
        do {
            return try OutboxQueries.entries(connectionForReading, where: OutboxQueries.ownedNow)
        } catch {
            throw MessageStore.storeError(error, usage: nil, needed: 0)
        }
    }
}

enum OutboxQueries {
    /// The entries written by the user who holds their account now.
    static let ownedNow = "outbox.owner_user_id IS (SELECT user_id FROM accounts WHERE role = outbox.account)"

    /// `condition` is SQL of this file's own making, never of a caller's text; `values` are its parameters.
    static func entries(_ connection: SQLiteConnection, where condition: String, _ values: [SQLiteValue] = [], limit: Int = -1) throws -> [OutboxEntry] {
        try connection.statement("""
            SELECT outbox_id, account, chat_id, text, state, created_at, upstream_key, attempts, failure, failure_detail, owner_user_id,
                   action, target_event_id,
                   (SELECT m.id FROM messages m WHERE m.account = outbox.account AND m.event_id = outbox.target_event_id),
                   (SELECT r.event_id FROM reactions r WHERE r.account = outbox.account AND r.target_event_id = outbox.target_event_id
                    AND r.key = outbox.text AND r.mine = 1 ORDER BY r.sent_at DESC LIMIT 1)
            FROM outbox WHERE \(condition) ORDER BY outbox_id LIMIT \(limit)
            """).query(values, row: entry)
    }

    /// An entry from a row of the columns `entries` selects, in that order.
    static func entry(_ row: SQLiteStatement) -> OutboxEntry {
        OutboxEntry(id: row.int64(at: 0), account: AccountRole(rawValue: row.int64(at: 1)) ?? .primary, chatId: row.int64(at: 2),
                    text: row.string(at: 3), state: OutboxState(rawValue: row.string(at: 4)) ?? .queued, createdAt: row.string(at: 5),
                    upstreamKey: row.string(at: 6), attempts: Int(row.int64(at: 7)),
                    failure: row.isNull(at: 8) ? nil : SendRefusal(SendRefusal.Reason(rawValue: row.string(at: 8)) ?? .forbidden,
                                                                   detail: row.isNull(at: 9) ? "" : row.string(at: 9)),
                    ownerUserId: row.isNull(at: 10) ? nil : row.int64(at: 10))
        .with(action: action(row.string(at: 11), target: row.isNull(at: 12) ? nil : row.string(at: 12),
                             reaction: row.isNull(at: 14) ? nil : row.string(at: 14)),
              targetMessageId: row.isNull(at: 13) ? nil : row.int64(at: 13),
              threadRoot: row.string(at: 11) == "message" && !row.isNull(at: 12) ? row.string(at: 12) : nil)
    }

    /// The action of a row (a reaction's without a target reads as a message: none is written so).
    static func action(_ column: String, target: String?, reaction: String?) -> OutboxAction {
        switch (column, target) {
        case ("react", let target?): .react(target: target)
        case ("unreact", let target?): .unreact(target: target, reaction: reaction)
        default: .message
        }
    }

    /// Inside a batch's transaction: the entry sent under `upstreamKey` leaves the outbox; its id.
    static func leave(_ connection: SQLiteConnection, account: AccountRole, upstreamKey: String) throws -> Int64? {
        try connection.statement("DELETE FROM outbox WHERE account = ?1 AND upstream_key = ?2 RETURNING outbox_id")
            .query([.integer(account.rawValue), .text(upstreamKey)]) { $0.int64(at: 0) }.first
    }
}

extension OutboxEntry {
    func with(action: OutboxAction, targetMessageId: Int64?, threadRoot: String?) -> OutboxEntry {
        var entry = self
        entry.action = action
        entry.targetMessageId = targetMessageId
        entry.threadRoot = threadRoot
        return entry
    }
}

/// A 64-bit FNV-1a digest of a text, to tell a repeated request from a key reused for another
/// text without keeping every sent text twice. Stable across runs (Swift's `Hasher` is not).
enum OutboxDigest {
    static func of(_ text: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}
