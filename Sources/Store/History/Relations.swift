import SQLite
import Upstream

/// What edits and redactions do to the copy (CONTRACT section 10), inside the transaction of the
/// batch that carries them: an edit is kept by its own event id and its target shows the latest
/// edit from the target's sender; a redaction removes its target (and every count and index entry
/// of it) and keeps the event id, so a target that comes later, in any path, is never stored.
struct RelationWork {
    let connection: SQLiteConnection
    let account: AccountRole

    var accountValue: SQLiteValue { .integer(account.rawValue) }

    /// Relations stored before a batch whose targets may come in it: only those make the batch's
    /// new messages worth looking up one by one (an edit, reaction or thread reply in the batch
    /// itself names its target as it is applied).
    struct Waiting {
        var edits: Bool
        var reactions: Bool
        var threadReplies: Bool

        static let none = Waiting(edits: false, reactions: false, threadReplies: false)
    }

    /// What is stored now that may wait for a message still to come: read before a batch is.
    func waiting() throws -> Waiting {
        Waiting(edits: try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM message_edits WHERE account = ?)", accountValue) == 1,
                reactions: try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM reactions WHERE account = ?)", accountValue) == 1,
                threadReplies: try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM messages WHERE account = ? AND thread_root_event IS NOT NULL)",
                                                        accountValue) == 1)
    }

    func anyRedactionKept() throws -> Bool {
        try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM redacted_events WHERE account = ?)", accountValue) == 1
    }

    func isRedacted(_ eventID: String) throws -> Bool {
        try connection.scalarInt("SELECT EXISTS (SELECT 1 FROM redacted_events WHERE account = ?1 AND event_id = ?2)",
                                 accountValue, .text(eventID)) == 1
    }

    /// Applies `related` in batch order, then the kept edits of the messages just `inserted`;
    /// records what changed in `outcome` and returns the change in stored bytes.
    /// `threadRoots`: the first messages of the threads the inserted messages reply in.
    /// `waiting`: what was stored before the batch (``waiting()``), which the inserted messages
    /// may be the targets of.
    func apply(_ related: [UpstreamMessage], inserted: [String], threadRoots: [String] = [], waiting: Waiting,
               to outcome: inout AppliedBatch) throws -> Int64 {
        var bytes: Int64 = 0
        var targets: [String] = []
        var reacted: [String] = []
        var threads = threadRoots
        for event in related {
            switch event.relation {
            case .annotates(let target)?:
                if let kept = try react(event, to: target) {
                    bytes += kept.bytes
                    reacted.append(target)
                }
            case .redacts(let target)?:
                if let root = try threadRoot(of: target) { threads.append(root) }
                if let reaction = try unreact(target) {
                    bytes -= reaction.bytes
                    reacted.append(reaction.target)
                }
                bytes += try redact(target, outcome: &outcome)
            case .replaces(let target)?:
                guard let editID = event.eventId, !(try isRedacted(editID)) else { continue }
                try connection.statement("""
                    INSERT OR IGNORE INTO message_edits (account, edit_event_id, target_event_id, sender, text, sent_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    """).run(accountValue, .text(editID), .text(target), .text(event.sender), .text(event.text), .text(event.sentAt))
                if connection.changes == 1 { targets.append(target) }
            case nil:
                continue
            }
        }
        if !inserted.isEmpty, waiting.edits {
            let editOf = try connection.statement("SELECT 1 FROM message_edits WHERE account = ?1 AND target_event_id = ?2 LIMIT 1")
            for eventID in inserted {
                let pending = try editOf.query([accountValue, .text(eventID)], row: { _ in true })
                if !pending.isEmpty { targets.append(eventID) }
            }
        }
        var seen = Set<String>()
        for target in targets where seen.insert(target).inserted {
            bytes += try showLatestEdit(of: target, outcome: &outcome)
        }
        // Reactions that came before their message (a page of history, newest first) show on it now.
        if !inserted.isEmpty, waiting.reactions {
            for eventID in inserted where try hasReactions(to: eventID) { reacted.append(eventID) }
        }
        var shown = Set<String>()
        for target in reacted where shown.insert(target).inserted {
            try showReactions(of: target, outcome: &outcome)
        }
        // A thread's first message that came after its replies (history, newest first) counts them.
        if !inserted.isEmpty, waiting.threadReplies {
            for eventID in inserted where try hasThreadReplies(eventID) { threads.append(eventID) }
        }
        var counted = Set<String>()
        for root in threads where counted.insert(root).inserted {
            try showThread(of: root, outcome: &outcome)
        }
        return bytes
    }

    /// The message with `eventID` leaves the copy, if stored; the id is kept either way. A
    /// redacted edit is forgotten, and its target shows what it showed before it.
    private func redact(_ eventID: String, outcome: inout AppliedBatch) throws -> Int64 {
        try connection.statement("INSERT OR IGNORE INTO redacted_events (account, event_id) VALUES (?1, ?2)").run(accountValue, .text(eventID))
        var bytes: Int64 = 0
        let editTargets = try connection.statement("SELECT target_event_id FROM message_edits WHERE account = ?1 AND edit_event_id = ?2")
            .query([accountValue, .text(eventID)]) { $0.string(at: 0) }
        try connection.statement("DELETE FROM message_edits WHERE account = ?1 AND (edit_event_id = ?2 OR target_event_id = ?2)")
            .run(accountValue, .text(eventID))
        for target in editTargets { bytes += try showLatestEdit(of: target, outcome: &outcome) }
        let rows = try connection.statement("SELECT id, chat_id, size FROM messages WHERE account = ?1 AND event_id = ?2")
            .query([accountValue, .text(eventID)]) { ($0.int64(at: 0), $0.int64(at: 1), $0.int64(at: 2)) }
        bytes -= try forgetReactions(to: eventID)
        guard let (id, chatID, size) = rows.first else { return bytes }
        // The delete trigger takes the text out of the search index.
        try connection.statement("DELETE FROM messages WHERE account = ?1 AND id = ?2").run(accountValue, .integer(id))
        // The unread messages of a chat are its newest: the removed one was unread when fewer
        // than `unread` messages are newer than it.
        try connection.statement("""
            UPDATE chats SET
                message_count = max(0, message_count - 1),
                unread = max(0, unread - (CASE WHEN (SELECT count(*) FROM messages m WHERE m.account = ?1 AND m.chat_id = ?2 AND m.id > ?3) < unread THEN 1 ELSE 0 END)),
                last_message_id = coalesce((SELECT max(id) FROM messages m WHERE m.account = ?1 AND m.chat_id = ?2), last_message_id),
                last_message_at = coalesce((SELECT sent_at FROM messages m WHERE m.account = ?1 AND m.chat_id = ?2 ORDER BY id DESC LIMIT 1), last_message_at)
            WHERE account = ?1 AND chat_id = ?2
            """).run(accountValue, .integer(chatID), .integer(id))
        if let index = outcome.fresh.firstIndex(where: { $0.id == id }) {
            outcome.fresh.remove(at: index)
        } else {
            outcome.removed.append(RemovedMessage(chatId: chatID, id: id))
        }
        outcome.changed.removeAll { $0.id == id }
        return bytes - size
    }

    /// Puts the latest kept edit from the message's own sender into the message `eventID` (or
    /// its text before any edit, when none is left), text and search index alike.
    private func showLatestEdit(of eventID: String, outcome: inout AppliedBatch) throws -> Int64 {
        let rows = try connection.statement("""
            SELECT m.id, m.sender, m.text, m.original_text, m.edited_at FROM messages m
            WHERE m.account = ?1 AND m.event_id = ?2 AND m.kind <> 'encrypted'
            """).query([accountValue, .text(eventID)]) { row in
                (row.int64(at: 0), row.string(at: 1), row.string(at: 2), row.isNull(at: 3) ? nil : row.string(at: 3),
                 row.isNull(at: 4) ? nil : row.string(at: 4))
            }
        guard let (id, sender, shown, original, editedAt) = rows.first else { return 0 }
        let latest = try connection.statement("""
            SELECT text, sent_at FROM message_edits WHERE account = ?1 AND target_event_id = ?2 AND sender = ?3
            ORDER BY sent_at DESC, edit_event_id DESC LIMIT 1
            """).query([accountValue, .text(eventID), .text(sender)]) { ($0.string(at: 0), $0.string(at: 1)) }.first
        let before = original ?? shown
        let text = latest?.0 ?? before
        let newEditedAt = latest?.1
        guard text != shown || newEditedAt != editedAt else { return 0 }
        let rowID = id &* 2 &+ Int64(account.rawValue)
        try connection.statement("INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', ?1, ?2)").run(.integer(rowID), .text(shown))
        try connection.statement(StoreSQL.indexMessage).run(.integer(rowID), .text(text))
        let delta = Int64(text.utf8.count - shown.utf8.count)
        try connection.statement("""
            UPDATE messages SET text = ?3, edited_at = ?4, original_text = ?5, size = size + ?6 WHERE account = ?1 AND id = ?2
            """).run(accountValue, .integer(id), .text(text), newEditedAt.map { .text($0) } ?? .null,
                     latest == nil ? .null : .text(before), .integer(delta))
        if let index = outcome.fresh.firstIndex(where: { $0.id == id }) {
            outcome.fresh[index].text = text
            outcome.fresh[index].editedAt = newEditedAt
        } else if let changed = try MessageQueries.one(connection, account: account, id: id) {
            outcome.changed.removeAll { $0.id == id }
            outcome.changed.append(changed)
        }
        return delta
    }
}
