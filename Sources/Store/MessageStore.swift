import Foundation
import SQLite
import Upstream

/// What Free space removes: the oldest messages, how many, their bytes and when they were sent.
public struct FreeSpacePlan: Sendable, Equatable {
    public var messageCount: Int
    public var bytes: Int64
    /// The sending times of the oldest and newest message removed, as the upstream sent them.
    public var oldestSentAt: String
    public var newestSentAt: String
    /// The ids removed, per account, so pages that show them can drop them.
    public var messageIDs: [AccountRole: [Int64]]

    public init(messageCount: Int, bytes: Int64, oldestSentAt: String, newestSentAt: String, messageIDs: [AccountRole: [Int64]] = [:]) {
        self.messageCount = messageCount
        self.bytes = bytes
        self.oldestSentAt = oldestSentAt
        self.newestSentAt = newestSentAt
        self.messageIDs = messageIDs
    }
}

/// The local SQLite copy of the chat account. An actor: it owns the one writing connection, so
/// every write is serialised without locks.
///
/// ```swift
/// let store = try MessageStore(location: .file(path))
/// let fresh = try await store.apply(batch, to: .primary, receivedAt: now, cursor: next)   // only the new ones
/// ```
public actor MessageStore {
    public nonisolated let location: StoreLocation
    private let connection: SQLiteConnection
    var connectionForReading: SQLiteConnection { connection }
    /// Mirrors of what is in the database, read without a query on every batch.
    private var usage: StorageUsage
    /// Per stream: where it resumes (opaque, the upstream's) and the newest message id stored.
    private var cursors: [AccountRole: String] = [:]
    private var newestIDs: [AccountRole: Int64] = [:]

    /// Opens (creating the file if needed) and migrates the store. `createFolder` makes the file's
    /// folder (mode 0700) when it is missing: for the default location only, since a mistyped
    /// explicit path should fail rather than leave folders anywhere. `progress` hears how a long
    /// upgrade goes (indexing a large store for search), for the log.
    public init(location: StoreLocation, createFolder: Bool = false, progress: @Sendable (String) -> Void = { _ in }) throws(StoreError) {
        self.location = location
        if createFolder {
            do {
                try location.prepareFolder()
            } catch {
                throw .ioFailure(SQLiteError(code: 10, message: "cannot create the folder for \(location.sqlitePath): \(error)"))
            }
        }
        do {
            connection = try SQLiteConnection(path: location.sqlitePath)
            try Migrations.migrate(connection, progress: progress)
            try PlannerStatistics.install(on: connection)
            usage = StorageUsage(
                usedBytes: try connection.scalarInt("SELECT value FROM settings WHERE key = 'used_bytes'") ?? 0,
                quotaBytes: try connection.scalarInt("SELECT value FROM settings WHERE key = 'quota_bytes'")
            )
            for role in AccountRole.allCases {
                cursors[role] = try connection.scalarText("SELECT position FROM cursors WHERE account = ?", .integer(role.rawValue))
                newestIDs[role] = try connection.scalarInt("SELECT newest_id FROM cursors WHERE account = ?", .integer(role.rawValue))
            }
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    // MARK: Batches

    /// Stores a batch for one account in one transaction: new messages are inserted, ids already
    /// stored are ignored, and the account's cursor becomes `cursor`, the upstream's position after
    /// this batch (opaque: kept, never read; nil keeps the cursor as it is). A batch may be empty
    /// and still move the cursor. Returns exactly the messages that were new, in batch order.
    /// `unread` says which new messages raise their chat's unread count (those that came live).
    ///
    /// A batch that does not fit into the quota, or onto the disk, is not written at all and the
    /// cursor stays where it was: ``StoreError/outOfSpace(usedBytes:quotaBytes:neededBytes:diskFull:)``.
    public func apply(_ batch: [UpstreamMessage], to account: AccountRole, receivedAt: String,
                      cursor: String?, unread: UnreadCounting = .none) throws(StoreError) -> [StoredMessage] {
        try applyBatch(batch, to: account, receivedAt: receivedAt, cursor: cursor, unread: unread).fresh
    }

    /// ``apply(_:to:receivedAt:cursor:unread:)``, saying also what the batch's relations did:
    /// messages an edit changed and messages a redaction removed (CONTRACT section 10), all in
    /// the batch's one transaction. An event with a ``UpstreamMessage/Relation`` is never a
    /// message of its own; it acts on its target whether that is stored already, comes in the
    /// same batch, or comes later (an edit is kept and applied then; a redacted event id is never
    /// stored).
    ///
    /// `historyStarts` are where each chat's older history begins (CONTRACT section 10), kept in the
    /// same transaction for the chats that have none yet, so a restart knows where to fetch it.
    /// `readElsewhere` are chats the account read in another client: their unread counts go to 0
    /// (``AppliedBatch/read`` says which had any).
    public func applyBatch(_ batch: [UpstreamMessage], to account: AccountRole, receivedAt: String,
                           cursor: String?, unread: UnreadCounting = .none,
                           chats changes: ChatChanges = ChatChanges()) throws(StoreError) -> AppliedBatch {
        guard !batch.isEmpty || (cursor != nil && cursor != cursors[account]) || !changes.isEmpty else {
            return AppliedBatch(usage: usage)
        }
        return try write(batch, to: account, receivedAt: receivedAt, cursor: cursor, unread: unread, changes: changes, older: nil)
    }

    /// A page of one chat's older history, `batch` newest first, each message older than every
    /// one stored of the chat (numbered below them, so the chat reads in order), in one
    /// transaction with the chat's next position (`next`; nil: its first message is reached).
    /// Nothing of it is unread or announced as new; edits and redactions in it act as in any
    /// batch, in either order. A page that does not fit into the quota is not written.
    public func applyOlder(_ batch: [UpstreamMessage], to account: AccountRole, chat chatID: Int64, receivedAt: String,
                           next: String?) throws(StoreError) -> AppliedBatch {
        try write(batch, to: account, receivedAt: receivedAt, cursor: nil, unread: .none, changes: ChatChanges(),
                  older: OlderPage(chatID: chatID, next: next))
    }

    /// The upstream's answers to sends from here (CONTRACT section 11): each message as it now
    /// has it, carrying its send key, stored in one transaction with its entry leaving the outbox
    /// (``AppliedBatch/sent``). When an echo came first, that message is there already and its
    /// entry left then: nothing changes for it. Never unread; the cursor stays where it is.
    public func recordSent(_ messages: [UpstreamMessage], to account: AccountRole, receivedAt: String) throws(StoreError) -> AppliedBatch {
        try write(messages, to: account, receivedAt: receivedAt, cursor: nil, unread: .none, changes: ChatChanges(), older: nil, sentHere: true)
    }

    /// The chats of `account` whose older history is still to fetch, most recently active first.
    public func pendingHistory(of account: AccountRole) throws(StoreError) -> [HistoryStart] {
        do {
            return try ChatHistoryWork(connection: connection, account: account).pending()
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// How far fetching `account`'s older history is; nil when its upstream fetches none.
    public func historyProgress(of account: AccountRole) throws(StoreError) -> HistoryProgress? {
        do {
            guard try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM chat_history WHERE account = ?)", .integer(account.rawValue)) == 1 else {
                return nil
            }
            return try ChatHistoryWork(connection: connection, account: account).progress()
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    private struct OlderPage {
        var chatID: Int64
        var next: String?
    }

    /// `sentHere`: the batch is the upstream's answer to a send from here, which says nothing of
    /// where the stream stands (what others wrote before it may not have come yet): the cursor
    /// and the newest id stay as they are.
    private func write(_ batch: [UpstreamMessage], to account: AccountRole, receivedAt: String, cursor: String?, unread: UnreadCounting,
                       changes: ChatChanges, older: OlderPage?, sentHere: Bool = false) throws(StoreError) -> AppliedBatch {
        var addedBytes: Int64 = 0
        let outcome: AppliedBatch
        do {
            outcome = try connection.transaction { () throws -> AppliedBatch in
                // A page of history may land after its chat was removed (an archive the person
                // deleted): nothing of it is stored, so the chat does not come back.
                if let older, try connection.scalarInt("SELECT count(*) FROM chats WHERE account = ?1 AND chat_id = ?2",
                                                       .integer(account.rawValue), .integer(older.chatID)) == 0 {
                    return AppliedBatch()
                }
                let insert = try connection.statement(StoreSQL.insertMessage)
                let insertEvent = try connection.statement(StoreSQL.insertEventMessage)
                let index = try connection.statement(StoreSQL.indexMessage)
                var fresh: [StoredMessage] = []
                fresh.reserveCapacity(batch.count)
                var chats: [Int64: ChatGrowth] = [:]
                var chatNames: [Int64: String] = [:]
                var highest = Int64.min
                let carriesEvents = batch.contains { $0.eventId != nil }
                // Messages known by event id are numbered here, after everything the stream has had.
                var lastLocalID = older == nil && carriesEvents ? try newestLocalID(of: account) : 0
                var lowestLocalID = older != nil ? try oldestLocalID(of: account) : 0
                let relations = RelationWork(connection: connection, account: account)
                let redactionsKept = carriesEvents ? try relations.anyRedactionKept() : false
                let waiting = carriesEvents ? try relations.waiting() : .none
                var related: [UpstreamMessage] = []
                var insertedEvents: [String] = []
                var threadRoots: [String] = []
                var encryptedChats: Set<Int64> = []
                var sent: [Int64] = []
                for message in batch {
                    if message.relation != nil {
                        related.append(message)
                        // A reaction sent from here, or the taking back of one, leaves the outbox as a message does.
                        if let outboxID = try message.sendKey.flatMap({ try OutboxQueries.leave(connection, account: account, upstreamKey: $0) }) {
                            sent.append(outboxID)
                        }
                        continue
                    }
                    if redactionsKept, let eventId = message.eventId, try relations.isRedacted(eventId) { continue }
                    let size = message.storageSize
                    let statement = message.eventId == nil ? insert : insertEvent
                    let id = message.eventId == nil ? message.id : older != nil ? lowestLocalID - 1 : lastLocalID + 1
                    statement.bind(account.rawValue, at: 1)
                    statement.bind(id, at: 2)
                    statement.bind(message.chatId, at: 3)
                    statement.bind(message.sender, at: 4)
                    statement.bind(message.text, at: 5)
                    statement.bind(message.sentAt, at: 6)
                    statement.bind(receivedAt, at: 7)
                    statement.bind(size, at: 8)
                    if let eventId = message.eventId {
                        statement.bind(eventId, at: 9)
                        statement.bind(message.kind.rawValue, at: 10)
                        if let name = message.senderName { statement.bind(name, at: 11) } else { statement.bindNull(at: 11) }
                        if let media = message.media {
                            statement.bind(media.name, at: 12)
                            if let type = media.mimetype { statement.bind(type, at: 13) } else { statement.bindNull(at: 13) }
                            if let size = media.size { statement.bind(size, at: 14) } else { statement.bindNull(at: 14) }
                            if let source = media.source { statement.bind(source, at: 15) } else { statement.bindNull(at: 15) }
                        } else {
                            for index in Int32(12)...15 { statement.bindNull(at: index) }
                        }
                        if let reply = message.replyTo { statement.bind(reply, at: 16) } else { statement.bindNull(at: 16) }
                        if let attention = message.attention { statement.bind(attention.rawValue, at: 17) } else { statement.bindNull(at: 17) }
                        if let root = message.threadRoot { statement.bind(root, at: 18) } else { statement.bindNull(at: 18) }
                    }
                    try statement.step()
                    statement.reset(clearingBindings: false)
                    let inserted = connection.changes == 1
                    // A send's answer or its echo, whichever comes first, takes its entry out of the outbox.
                    let outboxID = try message.sendKey.flatMap { try OutboxQueries.leave(connection, account: account, upstreamKey: $0) }
                    if let outboxID { sent.append(outboxID) }
                    if let name = message.chatName { chatNames[message.chatId] = name }
                    guard inserted else {
                        if message.eventId == nil { highest = max(highest, id) }
                        continue
                    }
                    if let eventId = message.eventId {
                        if older != nil { lowestLocalID = id } else { lastLocalID = id }
                        insertedEvents.append(eventId)
                    }
                    highest = max(highest, id)
                    addedBytes += size
                    if message.kind != .encrypted {
                        index.bind(id &* 2 &+ Int64(account.rawValue), at: 1)
                        index.bind(message.text, at: 2)
                        try index.step()
                        index.reset(clearingBindings: false)
                    }
                    if message.chatEncrypted { encryptedChats.insert(message.chatId) }
                    fresh.append(StoredMessage(account: account, id: id, chatId: message.chatId, sender: message.sender,
                                               text: message.text, sentAt: message.sentAt, receivedAt: receivedAt,
                                               kind: message.kind, senderName: message.senderName, media: message.media,
                                               isReply: message.replyTo != nil,
                                               replyTo: try message.replyTo.flatMap { try storedID(of: $0, account: account) }))
                    fresh[fresh.count - 1].outboxId = outboxID
                    fresh[fresh.count - 1].attention = message.attention
                    fresh[fresh.count - 1].eventId = message.eventId
                    if let root = message.threadRoot {
                        fresh[fresh.count - 1].threadId = try storedID(of: root, account: account)
                        threadRoots.append(root)
                    }
                    // What the person sent from here is never unread to them.
                    chats[message.chatId, default: ChatGrowth()].add(id: id, sentAt: message.sentAt,
                                                                     unread: message.sendKey == nil && unread.counts(id))
                }
                let upsertChat = try connection.statement(StoreSQL.upsertChat)
                for (chatID, chat) in chats {
                    try upsertChat.run(.integer(account.rawValue), .integer(chatID), .integer(chat.count), .integer(chat.lastID),
                                       .integer(chat.unread), .text(chat.lastSentAt))
                }
                for chatID in encryptedChats {
                    try connection.statement(StoreSQL.markChatEncrypted).run(.integer(account.rawValue), .integer(chatID))
                }
                if !chatNames.isEmpty {
                    let nameChat = try connection.statement(StoreSQL.nameChat)
                    for (chatID, name) in chatNames {
                        try nameChat.run(.integer(account.rawValue), .integer(chatID), .text(name))
                    }
                }
                // An upstream that names chats may leave the name out when it did not change: the
                // new messages carry the one kept.
                if batch.contains(where: { $0.eventId != nil || $0.chatName != nil }) {
                    let nameOf = try connection.statement("SELECT name FROM chats WHERE account = ?1 AND chat_id = ?2")
                    var names: [Int64: String?] = [:]
                    for index in fresh.indices {
                        let chatID = fresh[index].chatId
                        if names[chatID] == nil {
                            names[chatID] = try nameOf.query([.integer(account.rawValue), .integer(chatID)]) { $0.isNull(at: 0) ? nil : $0.string(at: 0) }.first ?? nil
                        }
                        fresh[index].chatName = names[chatID] ?? nil
                    }
                }
                var outcome = AppliedBatch(fresh: fresh)
                outcome.sent = sent
                // Threads whose unread counts changed show again (before the relations, which show
                // the threads that grew, so that each is shown once, with both changes).
                for (chatID, counts) in changes.counts.sorted(by: { $0.key < $1.key }) {
                    threadRoots += try relations.setThreadCounts(of: chatID, to: counts.threads)
                }
                if !related.isEmpty || !insertedEvents.isEmpty || !threadRoots.isEmpty {
                    addedBytes += try relations.apply(related, inserted: insertedEvents, threadRoots: threadRoots, waiting: waiting, to: &outcome)
                }
                // A batch of deletions and shorter edits frees space: it is never refused for space.
                if let quota = usage.quotaBytes, usage.usedBytes + addedBytes > quota, related.isEmpty || addedBytes > 0 {
                    throw StoreError.outOfSpace(usedBytes: usage.usedBytes, quotaBytes: quota, neededBytes: addedBytes, diskFull: false)
                }
                if !changes.readElsewhere.isEmpty {
                    let clear = try connection.statement("UPDATE chats SET unread = 0, highlights = 0 WHERE account = ?1 AND chat_id = ?2 AND unread > 0")
                    for chatID in changes.readElsewhere {
                        try clear.run(.integer(account.rawValue), .integer(chatID))
                        if connection.changes == 1 { outcome.read.append(chatID) }
                    }
                }
                if !changes.counts.isEmpty {
                    // The upstream's own counts stand over this copy's: a muted room's messages are not unread.
                    let set = try connection.statement("""
                        UPDATE chats SET unread = ?3, highlights = ?4 WHERE account = ?1 AND chat_id = ?2 AND (unread <> ?3 OR highlights <> ?4)
                        """)
                    for (chatID, counts) in changes.counts.sorted(by: { $0.key < $1.key }) {
                        try set.run(.integer(account.rawValue), .integer(chatID), .integer(counts.notifications), .integer(counts.highlights))
                        if connection.changes == 1, counts.notifications == 0, !outcome.read.contains(chatID) { outcome.read.append(chatID) }
                    }
                }
                if !changes.membership.isEmpty {
                    let set = try connection.statement("UPDATE chats SET membership = ?3 WHERE account = ?1 AND chat_id = ?2 AND membership <> ?3")
                    for (chatID, membership) in changes.membership.sorted(by: { $0.key < $1.key }) {
                        try set.run(.integer(account.rawValue), .integer(chatID), .text(membership.rawValue))
                        if connection.changes == 1 { outcome.membershipChanged.append(chatID) }
                    }
                }
                let history = ChatHistoryWork(connection: connection, account: account)
                try history.record(changes.historyStarts)
                if let older {
                    try history.advance(older.chatID, to: older.next, stored: fresh.count)
                } else if !sentHere, let cursor = cursor ?? cursors[account] {
                    try connection.statement(StoreSQL.saveCursor).run(.integer(account.rawValue), .text(cursor),
                                                                       highest == .min ? .null : .integer(highest))
                }
                if addedBytes != 0 {
                    try connection.statement(StoreSQL.addUsedBytes).run(.integer(addedBytes))
                }
                // The chats' new counts, read in the batch's own transaction, so the page needs no second look.
                let touched = Set(outcome.fresh.map(\.chatId) + outcome.changed.map(\.chatId) + outcome.removed.map(\.chatId)
                                  + outcome.read + outcome.membershipChanged)
                if !touched.isEmpty { outcome.chats = try ChatQueries.chats(connection, account: account, ids: touched) }
                return outcome
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: batch.reduce(0) { $0 + $1.storageSize })
        }
        usage.usedBytes += addedBytes
        if let cursor { cursors[account] = cursor }
        if older == nil, !sentHere, let highest = (outcome.fresh.map(\.id) + batch.filter { $0.eventId == nil }.map(\.id)).max(), cursors[account] != nil {
            newestIDs[account] = max(newestIDs[account] ?? highest, highest)
        }
        var applied = outcome
        applied.usage = usage
        return applied
    }

    /// What a batch adds to one chat.
    private struct ChatGrowth {
        var count: Int64 = 0
        var unread: Int64 = 0
        var lastID = Int64.min
        var lastSentAt = ""

        mutating func add(id: Int64, sentAt: String, unread counts: Bool) {
            count += 1
            if counts { unread += 1 }
            if id > lastID { (lastID, lastSentAt) = (id, sentAt) }
        }
    }

    /// The highest id `account` has had: stored now, or since its stream began.
    private func newestLocalID(of account: AccountRole) throws(SQLiteError) -> Int64 {
        let stored = try connection.scalarInt("SELECT max(id) FROM messages WHERE account = ?", .integer(account.rawValue)) ?? 0
        return max(stored, newestIDs[account] ?? 0, Migrations.firstEventMessageID - 1)
    }

    /// The stored id of the message with `eventID`, if it is in the copy.
    private func storedID(of eventID: String, account: AccountRole) throws(SQLiteError) -> Int64? {
        try connection.scalarInt("SELECT id FROM messages WHERE account = ?1 AND event_id = ?2", .integer(account.rawValue), .text(eventID))
    }

    /// The number below which older history is numbered: the lowest of the account's messages
    /// known by event id, or where live ones begin.
    private func oldestLocalID(of account: AccountRole) throws(SQLiteError) -> Int64 {
        try connection.scalarInt("SELECT min(id) FROM messages WHERE account = ? AND event_id IS NOT NULL", .integer(account.rawValue))
            ?? Migrations.firstEventMessageID
    }

    // MARK: Upstream credentials

    /// What an upstream that signs in keeps for the next start (`key`: e.g. its access token).
    public func credential(_ key: String) throws(StoreError) -> String? {
        do {
            return try connection.scalarText("SELECT value FROM upstream_credentials WHERE key = ?", .text(key))
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// Keeps (or with nil, forgets) a credential; written at once, outside any batch.
    public func setCredential(_ key: String, _ value: String?) throws(StoreError) {
        do {
            if let value {
                try connection.statement("INSERT INTO upstream_credentials (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                    .run(.text(key), .text(value))
            } else {
                try connection.statement("DELETE FROM upstream_credentials WHERE key = ?").run(.text(key))
            }
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    // MARK: Reading

    /// Where `account`'s stream resumes, as its upstream gave it; nil before its first batch.
    public func cursor(for account: AccountRole) -> String? {
        cursors[account]
    }

    /// The highest message id stored for `account` since its stream began (it stays when Free
    /// space removes messages); nil before its first message.
    public func newestID(for account: AccountRole) -> Int64? {
        newestIDs[account]
    }

    /// Bytes a delete outside this file's batches gave back.
    func forgetUsedBytes(_ bytes: Int64) {
        usage.usedBytes -= bytes
    }

    public func storageUsage() -> StorageUsage {
        usage
    }

    /// Stored messages of `account` (one chat's, when given), newest first, with ids below `before` (all when nil).
    public func messages(of account: AccountRole, chat: Int64? = nil, before: Int64? = nil, limit: Int = 50) throws(StoreError) -> MessagePage {
        do {
            return try MessageQueries.page(connection, account: account, chat: chat, before: before, limit: limit)
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// The replies in the thread under the stored message `root`, newest first, ids below
    /// `before`; nil when `root` is no stored message an upstream can thread under.
    public func threadReplies(of account: AccountRole, root: Int64, before: Int64? = nil, limit: Int = 50) throws(StoreError) -> MessagePage? {
        do {
            return try ThreadQueries.replies(connection, account: account, root: root, before: before, limit: limit)
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// The next slice of an export: `account`'s messages (one chat's, when given) with ids above
    /// `after`, oldest first.
    public func messages(of account: AccountRole, chat: Int64? = nil, after: Int64, limit: Int) throws(StoreError) -> [StoredMessage] {
        do {
            return try MessageQueries.slice(connection, account: account, chat: chat, after: after, limit: limit)
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    public func accountIDs() throws(StoreError) -> AccountIDs {
        do {
            return AccountIDs(
                primaryUserId: try connection.scalarInt("SELECT user_id FROM accounts WHERE role = 0"),
                linkedUserId: try connection.scalarInt("SELECT user_id FROM accounts WHERE role = 1")
            )
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// `PRAGMA integrity_check` says "ok".
    public func integrityCheck() throws(StoreError) -> Bool {
        do {
            return try connection.scalarText("PRAGMA integrity_check") == "ok"
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    // MARK: Accounts, quota, space

    /// Records the user ids the upstream announced. The linked account's messages are not touched
    /// here; detaching purges them through ``purgeLinkedAccount()``.
    public func setAccountIDs(_ ids: AccountIDs) throws(StoreError) {
        do {
            try connection.transaction {
                for (role, userID) in [(AccountRole.primary, ids.primaryUserId), (.linked, ids.linkedUserId)] {
                    if let userID {
                        try connection.statement("INSERT INTO accounts (role, user_id) VALUES (?1, ?2) ON CONFLICT (role) DO UPDATE SET user_id = excluded.user_id")
                            .run(.integer(role.rawValue), .integer(userID))
                    } else {
                        try connection.statement("DELETE FROM accounts WHERE role = ?").run(.integer(role.rawValue))
                    }
                }
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
    }

    /// Sets the quota (nil: unlimited).
    public func setQuota(_ bytes: Int64?) throws(StoreError) {
        do {
            try connection.statement("UPDATE settings SET value = ? WHERE key = 'quota_bytes'").run(bytes.map { .integer($0) } ?? .null)
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
        usage.quotaBytes = bytes
    }

    /// What Free space would remove so that a waiting batch of `neededBytes` fits: the oldest
    /// messages (by sending time) until the batch fits with `headroomShare` of the quota to spare
    /// (so the next message does not find storage full again), and no more; when the disk rather
    /// than the quota is full (`diskFull`), a quarter of what is stored. Nil when removing
    /// messages cannot make room (no quota, or a batch larger than the quota itself, or nothing
    /// stored).
    public func freeSpacePlan(neededBytes: Int64, diskFull: Bool = false) throws(StoreError) -> FreeSpacePlan? {
        do {
            guard let mustFree = bytesToFree(neededBytes: neededBytes, diskFull: diskFull) else { return nil }
            let victims = try oldestMessages(covering: mustFree)
            guard !victims.isEmpty else { return nil }
            return Self.plan(victims)
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
    }

    /// Removes what ``freeSpacePlan(neededBytes:diskFull:)`` names, in one transaction, and
    /// returns what went (nil: nothing could make room).
    public func freeSpace(neededBytes: Int64, diskFull: Bool = false) throws(StoreError) -> FreeSpacePlan? {
        guard let mustFree = bytesToFree(neededBytes: neededBytes, diskFull: diskFull) else { return nil }
        // On a full disk the delete itself needs room in the write-ahead log: empty it first.
        _ = try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let removed: [Victim]
        do {
            removed = try connection.transaction { () throws -> [Victim] in
                let victims = try oldestMessages(covering: mustFree)
                let delete = try connection.statement("DELETE FROM messages WHERE account = ?1 AND id = ?2")
                let deleteArchived = try connection.statement("DELETE FROM archived_messages WHERE archive_id = ?1")
                let shrinkChat = try connection.statement("""
                    UPDATE chats SET message_count = message_count - 1, unread = min(unread, message_count - 1)
                    WHERE account = ?1 AND chat_id = ?2
                    """)
                for victim in victims {
                    if let archiveID = victim.archiveID {
                        try deleteArchived.run(.integer(archiveID))
                    } else {
                        try delete.run(.integer(victim.account), .integer(victim.id))
                        try shrinkChat.run(.integer(victim.account), .integer(victim.chat))
                    }
                }
                try connection.execute("DELETE FROM chats WHERE message_count <= 0")
                try connection.statement(StoreSQL.addUsedBytes).run(.integer(-victims.reduce(0) { $0 + $1.size }))
                return victims
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
        // The freed pages become reusable in the database file once the log is folded back in.
        _ = try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        guard !removed.isEmpty else { return nil }
        let plan = Self.plan(removed)
        usage.usedBytes -= plan.bytes
        return plan
    }

    private struct Victim {
        var account: Int64
        var id: Int64
        var chat: Int64
        var size: Int64
        var sentAt: String
        /// Set for a message of the archive (`archive_id`); nil for a current one.
        var archiveID: Int64?
    }

    private static func plan(_ victims: [Victim]) -> FreeSpacePlan {
        var ids: [AccountRole: [Int64]] = [:]
        for victim in victims where victim.archiveID == nil {
            if let role = AccountRole(rawValue: victim.account) { ids[role, default: []].append(victim.id) }
        }
        return FreeSpacePlan(messageCount: victims.count, bytes: victims.reduce(0) { $0 + $1.size },
                             oldestSentAt: victims.map(\.sentAt).min() ?? "", newestSentAt: victims.map(\.sentAt).max() ?? "",
                             messageIDs: ids)
    }

    /// The share of the quota Free space leaves free beside the waiting batch.
    public static let headroomShare = 0.1

    /// What Free space leaves free beside a batch of `neededBytes`, under `quota`: a tenth of the
    /// quota, or what is left once the batch is in when that is less.
    public static func headroom(quota: Int64, neededBytes: Int64) -> Int64 {
        max(0, min(Int64(Double(quota) * headroomShare), quota - neededBytes))
    }

    private func bytesToFree(neededBytes: Int64, diskFull: Bool) -> Int64? {
        let used = usage.usedBytes
        let target: Int64
        if diskFull {
            target = used * 3 / 4
        } else if let quota = usage.quotaBytes, neededBytes <= quota {
            target = quota - neededBytes - Self.headroom(quota: quota, neededBytes: neededBytes)
        } else {
            return nil
        }
        return used > target ? used - target : nil
    }

    /// The oldest messages, current or archived, by sending time, until they add up to `bytes`.
    private func oldestMessages(covering bytes: Int64) throws -> [Victim] {
        let oldest = try connection.statement("""
            SELECT account, id, chat_id, size, sent_at, NULL FROM messages
            UNION ALL
            SELECT account, id, chat_id, size, sent_at, archive_id FROM archived_messages
            ORDER BY 5, 2, 1
            """)
        defer { oldest.reset() }
        var victims: [Victim] = []
        var covered: Int64 = 0
        while covered < bytes, try oldest.step() {
            let victim = Victim(account: oldest.int64(at: 0), id: oldest.int64(at: 1), chat: oldest.int64(at: 2),
                                size: oldest.int64(at: 3), sentAt: oldest.string(at: 4),
                                archiveID: oldest.isNull(at: 5) ? nil : oldest.int64(at: 5))
            victims.append(victim)
            covered += victim.size
        }
        return victims
    }

    /// Sets `account`'s messages aside in the archive (they stay stored and counted) and forgets
    /// its chats and cursor, in one transaction: the next sync of it starts from the beginning,
    /// for an upstream that went back (reset, restored from a backup) and numbers its messages
    /// again from below the old cursor. Returns how many messages were set aside.
    @discardableResult
    public func archiveAccount(_ account: AccountRole, at archivedAt: String) throws(StoreError) -> Int {
        let count: Int
        do {
            count = try connection.transaction { () throws -> Int in
                try connection.statement("""
                    INSERT INTO archived_messages (account, id, chat_id, sender, text, sent_at, received_at, size, archived_at)
                    SELECT account, id, chat_id, sender, text, sent_at, received_at, size, ?2 FROM messages WHERE account = ?1 ORDER BY id
                    """).run(.integer(account.rawValue), .text(archivedAt))
                let count = connection.changes
                try connection.statement("DELETE FROM messages WHERE account = ?").run(.integer(account.rawValue))
                try connection.statement("DELETE FROM chats WHERE account = ?").run(.integer(account.rawValue))
                try connection.statement("DELETE FROM cursors WHERE account = ?").run(.integer(account.rawValue))
                return count
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
        cursors[account] = nil
        newestIDs[account] = nil
        return count
    }

    /// How many messages the archive holds.
    public func archivedCount() throws(StoreError) -> Int {
        do {
            return Int(try connection.scalarInt("SELECT count(*) FROM archived_messages") ?? 0)
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// The storage bought through the dashboard, kept so that a `--quota` override plus what
    /// was bought survives a restart.
    public func purchasedBytes() throws(StoreError) -> Int64 {
        do {
            return try connection.scalarInt("SELECT value FROM settings WHERE key = 'purchased_bytes'") ?? 0
        } catch {
            throw Self.storeError(error, usage: nil, needed: 0)
        }
    }

    /// Credits a purchase once per `idempotencyKey`, however often its answer comes (a retried
    /// purchase that the upstream answers again). Returns whether it was credited now.
    @discardableResult
    public func addPurchasedBytes(_ bytes: Int64, idempotencyKey: String) throws(StoreError) -> Bool {
        do {
            return try connection.transaction {
                try connection.statement("INSERT OR IGNORE INTO purchases (idempotency_key, bytes) VALUES (?1, ?2)")
                    .run(.text(idempotencyKey), .integer(bytes))
                guard connection.changes == 1 else { return false }
                try connection.statement("UPDATE settings SET value = value + ?1 WHERE key = 'purchased_bytes'").run(.integer(bytes))
                return true
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
    }

    /// Writes to the file and commits, to learn whether the store takes writes again after a failure.
    public func checkWritable() throws(StoreError) {
        do {
            try connection.transaction {
                try connection.execute("UPDATE settings SET value = value WHERE key = 'used_bytes'")
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
    }

    /// Removes every message, chat, cursor and user id of both accounts in one transaction (the
    /// upstream now signs in someone else). Returns how many messages went.
    @discardableResult
    public func removeAllAccounts() throws(StoreError) -> Int {
        let count: Int
        do {
            count = try connection.transaction { () throws -> Int in
                try connection.execute("DELETE FROM messages")
                let count = connection.changes
                try connection.execute("DELETE FROM archived_messages")
                try connection.execute("DELETE FROM reactions")
                try connection.execute("DELETE FROM thread_unread")
                try connection.execute("DELETE FROM chats")
                try connection.execute("DELETE FROM cursors")
                try connection.execute("DELETE FROM accounts")
                try connection.execute("UPDATE settings SET value = 0 WHERE key = 'used_bytes'")
                return count
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
        usage.usedBytes = 0
        cursors = [:]
        newestIDs = [:]
        return count
    }

    /// Removes the linked account entirely (messages, chats, cursor, user id) in one transaction.
    /// Returns how many messages went.
    @discardableResult
    public func purgeLinkedAccount() throws(StoreError) -> Int {
        let linked = Int64(AccountRole.linked.rawValue)
        let result: (count: Int, bytes: Int64)
        do {
            result = try connection.transaction { () throws -> (Int, Int64) in
                let bytes = try connection.scalarInt("SELECT coalesce(sum(size), 0) FROM messages WHERE account = ?", .integer(linked)) ?? 0
                    + (connection.scalarInt("SELECT coalesce(sum(size), 0) FROM reactions WHERE account = ?", .integer(linked)) ?? 0)
                try connection.statement("DELETE FROM reactions WHERE account = ?").run(.integer(linked))
                try connection.statement("DELETE FROM thread_unread WHERE account = ?").run(.integer(linked))
                try connection.statement("DELETE FROM messages WHERE account = ?").run(.integer(linked))
                let count = connection.changes
                try connection.statement("DELETE FROM chats WHERE account = ?").run(.integer(linked))
                try connection.statement("DELETE FROM cursors WHERE account = ?").run(.integer(linked))
                try connection.statement("DELETE FROM accounts WHERE role = ?").run(.integer(linked))
                try connection.statement(StoreSQL.addUsedBytes).run(.integer(-bytes))
                return (count, bytes)
            }
        } catch {
            throw Self.storeError(error, usage: usage, needed: 0)
        }
        usage.usedBytes -= result.bytes
        cursors[.linked] = nil
        newestIDs[.linked] = nil
        return result.count
    }

    /// Closes the connection (committed data is already safe); later calls fail.
    public func close() {
        connection.close()
    }

    // MARK: Errors

    /// Turns any failure into a ``StoreError``: SQLITE_FULL becomes out-of-space, like the quota.
    static func storeError(_ error: any Error, usage: StorageUsage?, needed: Int64) -> StoreError {
        if let storeError = error as? StoreError { return storeError }
        guard let sqliteError = error as? SQLiteError else {
            return .database(SQLiteError(code: 1, message: "\(error)"))
        }
        if sqliteError.isFull {
            return .outOfSpace(usedBytes: usage?.usedBytes ?? 0, quotaBytes: usage?.quotaBytes, neededBytes: needed, diskFull: true)
        }
        if sqliteError.isCorrupt { return .corrupt(sqliteError) }
        if sqliteError.isIOError { return .ioFailure(sqliteError) }
        return .database(sqliteError)
    }

    // MARK: For tests

    /// Runs raw SQL on the store's own connection (e.g. `PRAGMA max_page_count` to provoke SQLITE_FULL).
    func executeForTesting(_ sql: String) throws {
        try connection.execute(sql)
    }

    func scalarForTesting(_ sql: String) throws -> Int64? {
        try connection.scalarInt(sql)
    }

    /// FTS5's integrity check of the search index passes.
    func searchIndexIsSound() throws -> Bool {
        do {
            try connection.execute("INSERT INTO message_search (message_search) VALUES ('integrity-check')")
            return true
        } catch {
            return false
        }
    }

    func scalarTextForTesting(_ sql: String) throws -> String? {
        try connection.scalarText(sql)
    }
}
