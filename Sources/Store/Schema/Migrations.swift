import SQLite

/// The schema's history. Each step runs in its own transaction and sets `PRAGMA user_version`, so a
/// file of any older version is brought up to date step by step and a failed step changes nothing.
enum Migrations {
    /// Step `n` (counting from 1) takes a database from version `n - 1` to `n`.
    static let steps: [String] = [
        // 1: accounts, messages and a cursor per account.
        """
        CREATE TABLE accounts (
            role    INTEGER PRIMARY KEY CHECK (role IN (0, 1)),
            user_id INTEGER NOT NULL
        );
        CREATE TABLE messages (
            account     INTEGER NOT NULL CHECK (account IN (0, 1)),
            id          INTEGER NOT NULL,
            chat_id     INTEGER NOT NULL,
            sender      TEXT NOT NULL,
            text        TEXT NOT NULL,
            sent_at     TEXT NOT NULL,
            received_at TEXT NOT NULL,
            size        INTEGER NOT NULL,
            PRIMARY KEY (account, id)
        ) WITHOUT ROWID;
        CREATE TABLE cursors (
            account INTEGER PRIMARY KEY CHECK (account IN (0, 1)),
            last_id INTEGER NOT NULL
        );
        """,
        // 2: chats, with a message count and the newest id, filled from the messages already stored.
        """
        CREATE TABLE chats (
            account         INTEGER NOT NULL CHECK (account IN (0, 1)),
            chat_id         INTEGER NOT NULL,
            message_count   INTEGER NOT NULL,
            last_message_id INTEGER NOT NULL,
            PRIMARY KEY (account, chat_id)
        ) WITHOUT ROWID;
        INSERT INTO chats (account, chat_id, message_count, last_message_id)
            SELECT account, chat_id, count(*), max(id) FROM messages GROUP BY account, chat_id;
        """,
        // 3: settings: the storage quota and the bytes in use, kept incrementally from now on.
        """
        CREATE TABLE settings (
            key   TEXT PRIMARY KEY,
            value INTEGER
        ) WITHOUT ROWID;
        INSERT INTO settings (key, value) VALUES ('used_bytes', (SELECT coalesce(sum(size), 0) FROM messages));
        INSERT INTO settings (key, value) VALUES ('quota_bytes', NULL);
        """,
        // 4: an archive for messages set aside when the upstream went back (reset or restored), and
        // the storage bought through the dashboard, kept across restarts.
        """
        CREATE TABLE archived_messages (
            archive_id  INTEGER PRIMARY KEY,
            account     INTEGER NOT NULL CHECK (account IN (0, 1)),
            id          INTEGER NOT NULL,
            chat_id     INTEGER NOT NULL,
            sender      TEXT NOT NULL,
            text        TEXT NOT NULL,
            sent_at     TEXT NOT NULL,
            received_at TEXT NOT NULL,
            size        INTEGER NOT NULL,
            archived_at TEXT NOT NULL
        );
        INSERT INTO settings (key, value) VALUES ('purchased_bytes', 0);
        """,
        // 5: opaque cursors. A stream's cursor is what its upstream gives to resume from (a Matrix
        // `next_batch` is a string); the newest message id stored is kept beside it. Integer
        // cursors of this project's protocol become their decimal text.
        """
        CREATE TABLE stream_cursors (
            account   INTEGER PRIMARY KEY CHECK (account IN (0, 1)),
            position  TEXT NOT NULL,
            newest_id INTEGER
        );
        INSERT INTO stream_cursors (account, position, newest_id) SELECT account, CAST(last_id AS TEXT), last_id FROM cursors;
        DROP TABLE cursors;
        ALTER TABLE stream_cursors RENAME TO cursors;
        """,
        // 6: upstreams whose ids are strings (Matrix). A message's event id is its identity, stored
        // once per account; chats keep the name the upstream gives; an upstream that signs in keeps
        // what a restart needs (access token, device id) in its own table, never shown anywhere.
        """
        ALTER TABLE messages ADD COLUMN event_id TEXT;
        CREATE UNIQUE INDEX messages_by_event_id ON messages (account, event_id) WHERE event_id IS NOT NULL;
        ALTER TABLE chats ADD COLUMN name TEXT;
        CREATE TABLE upstream_credentials (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
        // 7: full-text search. An FTS5 index of the messages' text (accents folded), keyed by
        // id * 2 + account; it holds no copy of the text. A batch indexes its new messages in its
        // own transaction (`StoreSQL.indexMessage`: an insert trigger would cost FTS5 a savepoint,
        // and so a segment, per row, measured ten times slower); a trigger takes deleted messages
        // out in the very statements that delete them (Free space, purges, resets). What is stored
        // already is indexed after this SQL, in the same transaction (`indexStoredMessages`).
        """
        CREATE VIRTUAL TABLE message_search USING fts5(text, content = '', tokenize = 'unicode61 remove_diacritics 2');
        CREATE TRIGGER messages_unindexed AFTER DELETE ON messages BEGIN
            INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', old.id * 2 + old.account, old.text);
        END;
        """,
        // 8: the chat list: a chat's unread count (live messages since it was marked read) and the
        // sending time of its newest message; an index to read one chat's messages in order.
        """
        CREATE INDEX messages_by_chat ON messages (account, chat_id, id);
        ALTER TABLE chats ADD COLUMN unread INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE chats ADD COLUMN last_message_at TEXT;
        UPDATE chats SET last_message_at = coalesce(
            (SELECT sent_at FROM messages m WHERE m.account = chats.account AND m.id = chats.last_message_id),
            (SELECT max(sent_at) FROM messages m WHERE m.account = chats.account AND m.chat_id = chats.chat_id));
        """,
        // 9: the purchases credited to a `--quota` override, by their idempotency key, so that a
        // purchase whose answer comes twice (a retried click replayed by the upstream) counts once,
        // across restarts too. What was bought before is in `purchased_bytes` already.
        """
        CREATE TABLE purchases (
            idempotency_key TEXT PRIMARY KEY,
            bytes           INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // 10: a Matrix account, faithfully: every edit kept by its event id, so one that arrives
        // before its message (history is fetched newest first) is applied when the message comes,
        // and the latest from the original sender wins whatever the order; the event ids redacted,
        // so a deleted message arriving later is never stored; the text a message had before its
        // first edit, so redacting the edit brings it back.
        """
        ALTER TABLE messages ADD COLUMN edited_at TEXT;
        ALTER TABLE messages ADD COLUMN original_text TEXT;
        CREATE TABLE message_edits (
            account         INTEGER NOT NULL,
            edit_event_id   TEXT NOT NULL,
            target_event_id TEXT NOT NULL,
            sender          TEXT NOT NULL,
            text            TEXT NOT NULL,
            sent_at         TEXT NOT NULL,
            PRIMARY KEY (account, edit_event_id)
        ) WITHOUT ROWID;
        CREATE INDEX message_edits_by_target ON message_edits (account, target_event_id);
        CREATE TABLE redacted_events (
            account  INTEGER NOT NULL,
            event_id TEXT NOT NULL,
            PRIMARY KEY (account, event_id)
        ) WITHOUT ROWID;
        """,
        // 11: what each message is (text, notice, emote, image, file, encrypted) and its sender's
        // name in the chat; which chats are end-to-end encrypted. An encrypted message's text is a
        // placeholder that is never indexed, so the delete trigger leaves the index alone for it.
        """
        ALTER TABLE messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text';
        ALTER TABLE messages ADD COLUMN sender_name TEXT;
        ALTER TABLE chats ADD COLUMN encrypted INTEGER NOT NULL DEFAULT 0;
        DROP TRIGGER messages_unindexed;
        CREATE TRIGGER messages_unindexed AFTER DELETE ON messages WHEN old.kind <> 'encrypted' BEGIN
            INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', old.id * 2 + old.account, old.text);
        END;
        """,
        // 12: whole history. Each chat's older history is fetched backwards from a position of the
        // upstream's, kept here until the chat's first message is reached (position NULL), so a
        // restart resumes. Messages known by event id are numbered from 2^40 up as they come live
        // and from below the lowest down as older history comes, so a chat reads in order by id;
        // those stored before are moved up (and indexed again under their new ids).
        """
        CREATE TABLE chat_history (
            account       INTEGER NOT NULL,
            chat_id       INTEGER NOT NULL,
            upstream_chat TEXT NOT NULL,
            position      TEXT,
            fetched       INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (account, chat_id)
        ) WITHOUT ROWID;
        INSERT INTO message_search (message_search, rowid, text)
            SELECT 'delete', id * 2 + account, text FROM messages WHERE event_id IS NOT NULL AND id < 1099511627776 AND kind <> 'encrypted';
        UPDATE chats SET last_message_id = last_message_id + 1099511627776 WHERE last_message_id < 1099511627776
            AND EXISTS (SELECT 1 FROM messages m WHERE m.account = chats.account AND m.id = chats.last_message_id AND m.event_id IS NOT NULL);
        UPDATE cursors SET newest_id = newest_id + 1099511627776 WHERE newest_id < 1099511627776
            AND EXISTS (SELECT 1 FROM messages m WHERE m.account = cursors.account AND m.event_id IS NOT NULL);
        UPDATE messages SET id = id + 1099511627776 WHERE event_id IS NOT NULL AND id < 1099511627776;
        INSERT INTO message_search (rowid, text)
            SELECT id * 2 + account, text FROM messages WHERE event_id IS NOT NULL AND kind <> 'encrypted';
        """,
        // 13: rooms left or lost (leave, kick, ban) stay in the copy as archives: a chat says
        // whether the account is still in it.
        """
        ALTER TABLE chats ADD COLUMN membership TEXT NOT NULL DEFAULT 'join';
        """,
        // 14: the file of an image or file message: its name, type and size as sent, and the
        // upstream's reference to it (a Matrix `mxc://` server and media id), fetched on demand.
        """
        ALTER TABLE messages ADD COLUMN media_name TEXT;
        ALTER TABLE messages ADD COLUMN media_type TEXT;
        ALTER TABLE messages ADD COLUMN media_size INTEGER;
        ALTER TABLE messages ADD COLUMN media_source TEXT;
        """,
        // 15: replies: the event id a message replies to, resolved to the stored message when read,
        // so a reply whose original comes later (history, newest first) finds it then.
        """
        ALTER TABLE messages ADD COLUMN reply_to_event TEXT;
        """,
        // 16: which chats hold messages this process cannot read (an encrypted room read without a
        // decrypting proxy): a partial index, so that asking is one probe per chat.
        """
        CREATE INDEX messages_unreadable ON messages (account, chat_id) WHERE kind = 'encrypted';
        """,
        // 17: sending (CONTRACT section 11). The outbox holds what the person wrote until the
        // upstream has it, each entry with the key it carries upstream (written before the first
        // byte goes, so a lost answer is sent again under the same key); an entry leaves in the
        // transaction that stores the sent message. The page's idempotency keys stay after that
        // (with a digest of the text), so the same request again is the same answer, never a
        // second message.
        """
        CREATE TABLE outbox (
            outbox_id    INTEGER PRIMARY KEY AUTOINCREMENT,
            account      INTEGER NOT NULL CHECK (account IN (0, 1)),
            chat_id      INTEGER NOT NULL,
            text         TEXT NOT NULL,
            upstream_key TEXT NOT NULL UNIQUE,
            state        TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sending', 'failed')),
            created_at   TEXT NOT NULL,
            attempts     INTEGER NOT NULL DEFAULT 0,
            failure      TEXT,
            failure_detail TEXT
        );
        CREATE TABLE outbox_requests (
            account     INTEGER NOT NULL,
            request_key TEXT NOT NULL,
            outbox_id   INTEGER NOT NULL,
            text_digest INTEGER NOT NULL,
            PRIMARY KEY (account, request_key)
        ) WITHOUT ROWID;
        """,
        // 18: the entry on its way is known to its sender alone (a restart sends again whatever is
        // still in the outbox, under its key), so the file holds only queued and failed entries.
        """
        UPDATE outbox SET state = 'queued' WHERE state = 'sending';
        """,
        // 19: the search index keeps every word's first two and three letters too (FTS5 `prefix`),
        // so a word being typed finds its matches in one list of its own instead of merging the
        // lists of every word it begins (a thousand words for two letters on a big copy). Made
        // again from the stored texts after this SQL (`indexStoredMessages`), in this transaction.
        """
        DROP TABLE message_search;
        CREATE VIRTUAL TABLE message_search USING fts5(text, content = '', prefix = '2 3', tokenize = 'unicode61 remove_diacritics 2');
        """,
        // 20: an entry belongs to the user who wrote it: it is sent only as that user, and once
        // another user holds its account it is left behind (kept, never sent) until the person
        // saves or deletes it. Entries already there were written by the account's user of now.
        """
        ALTER TABLE outbox ADD COLUMN owner_user_id INTEGER;
        UPDATE outbox SET owner_user_id = (SELECT user_id FROM accounts WHERE role = outbox.account);
        """,
        // 21: what the account's own notification rules said of a message when it came (quiet,
        // notify, mention), so a mention still reads as one after a restart. NULL: no rules.
        """
        ALTER TABLE messages ADD COLUMN attention TEXT;
        """,
        // 22: how many of a chat's unread messages are mentions (a Matrix homeserver's
        // highlight count), beside `unread`.
        """
        ALTER TABLE chats ADD COLUMN highlights INTEGER NOT NULL DEFAULT 0;
        """,
        // 23: reactions (a Matrix `m.annotation`), each kept by its own event id under the event it
        // reacts to, whether that one is stored yet or not (history brings a reaction before its
        // message), so a message shows its reactions from whichever came first. `mine`: the
        // account's own. An outbox entry is a message, or a reaction (its key the entry's text) to
        // give to the message `target_event_id` or to take back from it.
        """
        CREATE TABLE reactions (
            account         INTEGER NOT NULL,
            event_id        TEXT NOT NULL,
            target_event_id TEXT NOT NULL,
            chat_id         INTEGER NOT NULL,
            key             TEXT NOT NULL,
            sender          TEXT NOT NULL,
            sender_name     TEXT,
            mine            INTEGER NOT NULL,
            sent_at         TEXT NOT NULL,
            size            INTEGER NOT NULL,
            PRIMARY KEY (account, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX reactions_by_target ON reactions (account, target_event_id);
        ALTER TABLE outbox ADD COLUMN action TEXT NOT NULL DEFAULT 'message' CHECK (action IN ('message', 'react', 'unreact'));
        ALTER TABLE outbox ADD COLUMN target_event_id TEXT;
        """,
        // 24: a reply in a thread (a Matrix `m.thread`) keeps the event id of the thread's first
        // message: it is read in its thread, and the first message counts its replies. An outbox
        // message with a `target_event_id` answers in the thread under that message.
        """
        ALTER TABLE messages ADD COLUMN thread_root_event TEXT;
        CREATE INDEX messages_in_thread ON messages (account, thread_root_event, id) WHERE thread_root_event IS NOT NULL;
        """,
        // 25: what the upstream counts as unread in each thread that has any (a Matrix
        // homeserver's `unread_thread_notifications`), under the event id of its first message;
        // a chat's own counts include these. A thread read has no row.
        """
        CREATE TABLE thread_unread (
            account       INTEGER NOT NULL,
            root_event    TEXT NOT NULL,
            chat_id       INTEGER NOT NULL,
            notifications INTEGER NOT NULL,
            highlights    INTEGER NOT NULL,
            PRIMARY KEY (account, root_event)
        ) WITHOUT ROWID;
        """,
    ]

    /// The first number of a message known by event id that came live; older history is numbered
    /// below it (CONTRACT section 10: "Show older" reaches a room's first message).
    static let firstEventMessageID: Int64 = 1 << 40

    /// Work a step does after its SQL, in its transaction, with lines for the log.
    private static func finishStep(_ version: Int, _ connection: SQLiteConnection, progress: (String) -> Void) throws {
        if version == 7 { try indexStoredMessages(connection, progress: progress) }
        if version == 19 { try indexStoredMessages(connection, readableOnly: true, progress: progress) }
    }

    /// A store this large says how its one-time indexing goes.
    static let progressThreshold: Int64 = 100_000
    static let indexingSlice = 100_000

    /// Indexes every stored message for search, in slices of the primary key so that a large store
    /// can tell how far it is. One transaction all the same: an interrupted upgrade leaves nothing.
    /// `readableOnly`: not the messages of kind `encrypted`, whose text is a placeholder (a schema
    /// from step 11 on; a batch never indexes them either).
    static func indexStoredMessages(_ connection: SQLiteConnection, readableOnly: Bool = false, slice: Int = indexingSlice,
                                    reportingFrom threshold: Int64 = progressThreshold, progress: (String) -> Void) throws {
        let indexed = readableOnly ? "kind <> 'encrypted'" : "1"
        let total = try connection.scalarInt("SELECT count(*) FROM messages WHERE \(indexed)") ?? 0
        guard total > 0 else { return }
        let talks = total >= threshold
        if talks { progress("indexing \(total) stored messages for search (once, after the upgrade)") }
        let started = ContinuousClock.now
        let sliceEnd = try connection.statement("""
            SELECT account, id FROM messages WHERE (account, id) > (?1, ?2) ORDER BY account, id LIMIT 1 OFFSET ?3
            """)
        let index = try connection.statement("""
            INSERT INTO message_search (rowid, text) SELECT id * 2 + account, text FROM messages
            WHERE (account, id) > (?1, ?2) AND (account, id) <= (?3, ?4) AND \(indexed)
            """)
        var from: (account: Int64, id: Int64) = (-1, Int64.min)
        var done: Int64 = 0
        while true {
            // The slice's last key; past the end, everything that is left.
            let end = try sliceEnd.query([.integer(from.account), .integer(from.id), .integer(Int64(slice - 1))]) {
                (account: $0.int64(at: 0), id: $0.int64(at: 1))
            }.first ?? (Int64.max, Int64.max)
            try index.run(.integer(from.account), .integer(from.id), .integer(end.account), .integer(end.id))
            let added = Int64(connection.changes)
            done += added
            from = end
            if talks && added > 0 { progress("indexed \(done) of \(total) messages (\(done * 100 / total) %)") }
            if end.account == Int64.max { break }
        }
        if talks { progress("search index ready: \(done) messages in \(ContinuousClock.now - started)") }
    }

    static var latestVersion: Int { steps.count }

    static func version(of connection: SQLiteConnection) throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
    }

    /// Brings the database to `target` (default: the latest version).
    static func migrate(_ connection: SQLiteConnection, to target: Int = latestVersion, progress: (String) -> Void = { _ in }) throws {
        let current = try version(of: connection)
        if current > latestVersion {
            throw StoreError.newerSchema(found: current, supported: latestVersion)
        }
        guard current < target else { return }
        for version in (current + 1)...target {
            try connection.transaction {
                try connection.execute(steps[version - 1])
                try finishStep(version, connection, progress: progress)
                try connection.execute("PRAGMA user_version = \(version)")
            }
        }
    }
}
