import SQLite
import Upstream

/// Reading reactions: each message of a page gets its own, grouped by key.
enum ReactionQueries {
    /// Fills in `reactions` of the messages that have an event id, one look-up each, none at all
    /// when the account has no reaction stored.
    static func attach(to messages: inout [StoredMessage], _ connection: SQLiteConnection, account: AccountRole) throws {
        guard messages.contains(where: { $0.eventId != nil }),
              try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM reactions WHERE account = ?)", .integer(account.rawValue)) == 1
        else { return }
        let statement = try connection.statement("""
            SELECT key, sender, coalesce(sender_name, sender), mine FROM reactions
            WHERE account = ?1 AND target_event_id = ?2 ORDER BY sent_at, event_id
            """)
        for index in messages.indices {
            guard let eventID = messages[index].eventId else { continue }
            let rows = try statement.query([.integer(account.rawValue), .text(eventID)]) {
                ReactionRow(key: $0.string(at: 0), sender: $0.string(at: 1), name: $0.string(at: 2), mine: $0.int64(at: 3) != 0)
            }
            messages[index].reactions = grouped(rows)
        }
    }

    /// One reaction row, as stored.
    struct ReactionRow: Equatable {
        var key: String
        var sender: String
        var name: String
        var mine: Bool
    }

    /// The rows of one message, earliest first, as one ``Reaction`` per key in the order each key
    /// was first given. A person counts once per key, however many events of theirs name it (a
    /// homeserver refuses a second one; a broken one may not).
    static func grouped(_ rows: [ReactionRow]) -> [Reaction] {
        var order: [String] = []
        var byKey: [String: (reaction: Reaction, senders: Set<String>)] = [:]
        for row in rows {
            if byKey[row.key] == nil {
                order.append(row.key)
                byKey[row.key] = (Reaction(key: row.key, count: 0, mine: false, senders: []), [])
            }
            guard var entry = byKey[row.key], entry.senders.insert(row.sender).inserted else { continue }
            entry.reaction.count += 1
            entry.reaction.mine = entry.reaction.mine || row.mine
            if entry.reaction.senders.count < Reaction.namedSenders { entry.reaction.senders.append(row.name) }
            byKey[row.key] = entry
        }
        return order.compactMap { byKey[$0]?.reaction }
    }
}

extension RelationWork {
    /// Keeps a reaction under its target's event id (stored yet or not); the target it names when
    /// it was new, and the bytes it takes.
    func react(_ event: UpstreamMessage, to target: String) throws -> (target: String, bytes: Int64)? {
        guard let reactionID = event.eventId, !(try isRedacted(reactionID)) else { return nil }
        let size = Int64(event.text.utf8.count + event.sender.utf8.count + reactionID.utf8.count + target.utf8.count + event.sentAt.utf8.count)
            + UpstreamMessage.rowOverhead
        try connection.statement("""
            INSERT OR IGNORE INTO reactions (account, event_id, target_event_id, chat_id, key, sender, sender_name, mine, sent_at, size)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
            """).run(.integer(account.rawValue), .text(reactionID), .text(target), .integer(event.chatId), .text(event.text), .text(event.sender),
                     event.senderName.map { .text($0) } ?? .null, .integer(event.byAccount ? 1 : 0), .text(event.sentAt), .integer(size))
        return connection.changes == 1 ? (target, size) : nil
    }

    /// A redacted reaction leaves (its target's, when it was one); the bytes it gave back.
    func unreact(_ reactionID: String) throws -> (target: String, bytes: Int64)? {
        try connection.statement("DELETE FROM reactions WHERE account = ?1 AND event_id = ?2 RETURNING target_event_id, size")
            .query([.integer(account.rawValue), .text(reactionID)]) { ($0.string(at: 0), $0.int64(at: 1)) }.first
    }

    /// A redacted message takes its reactions with it; the bytes they gave back.
    func forgetReactions(to target: String) throws -> Int64 {
        try connection.statement("DELETE FROM reactions WHERE account = ?1 AND target_event_id = ?2 RETURNING size")
            .query([.integer(account.rawValue), .text(target)]) { $0.int64(at: 0) }.reduce(0, +)
    }

    /// Whether reactions wait for the message `eventID` (a page of history brings them first).
    func hasReactions(to eventID: String) throws -> Bool {
        try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM reactions WHERE account = ?1 AND target_event_id = ?2)",
                                 .integer(account.rawValue), .text(eventID)) == 1
    }

    /// Puts the target's reactions as they are now into the outcome: on a message new in this
    /// batch, or as a changed one.
    func showReactions(of target: String, outcome: inout AppliedBatch) throws {
        guard let id = try connection.scalarInt("SELECT id FROM messages WHERE account = ?1 AND event_id = ?2",
                                                .integer(account.rawValue), .text(target)) else { return }
        if let index = outcome.fresh.firstIndex(where: { $0.id == id }) {
            var messages = [outcome.fresh[index]]
            messages[0].eventId = target
            try ReactionQueries.attach(to: &messages, connection, account: account)
            outcome.fresh[index].reactions = messages[0].reactions
        } else if let changed = try MessageQueries.one(connection, account: account, id: id) {
            outcome.changed.removeAll { $0.id == id }
            outcome.changed.append(changed)
        }
    }
}
