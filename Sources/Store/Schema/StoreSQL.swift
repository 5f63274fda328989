/// The statements the store runs on its hot paths, in one place so that the benchmark can hand
/// the very same SQL to its Python peer.
public enum StoreSQL {
    public static let insertMessage = """
        INSERT OR IGNORE INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        """
    /// A message identified by its upstream's event id (?9); ?2 is the id the store gives it; ?10
    /// its kind, ?11 its sender's name, ?17 what the account's rules said of it.
    static let insertEventMessage = """
        INSERT OR IGNORE INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size, event_id, kind, sender_name,
                                        media_name, media_type, media_size, media_source, reply_to_event, attention, thread_root_event)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
        """
    /// The chat ?2 is end-to-end encrypted.
    static let markChatEncrypted = "UPDATE chats SET encrypted = 1 WHERE account = ?1 AND chat_id = ?2 AND encrypted = 0"
    static let nameChat = "UPDATE chats SET name = ?3 WHERE account = ?1 AND chat_id = ?2 AND name IS NOT ?3"
    /// A batch's share of one chat: ?3 new messages, ?4 the newest id among them, ?5 how many of
    /// them are unread, ?6 that newest one's sending time.
    public static let upsertChat = """
        INSERT INTO chats (account, chat_id, message_count, last_message_id, unread, last_message_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        ON CONFLICT (account, chat_id) DO UPDATE SET
            message_count = message_count + excluded.message_count,
            last_message_id = max(last_message_id, excluded.last_message_id),
            unread = unread + excluded.unread,
            last_message_at = CASE WHEN excluded.last_message_id >= last_message_id OR last_message_at IS NULL
                THEN excluded.last_message_at ELSE last_message_at END
        """
    /// The stream's cursor becomes the upstream's (?2); its newest id only ever grows (?3 may be NULL).
    public static let saveCursor = """
        INSERT INTO cursors (account, position, newest_id) VALUES (?1, ?2, ?3)
        ON CONFLICT (account) DO UPDATE SET position = excluded.position,
            newest_id = coalesce(max(newest_id, excluded.newest_id), newest_id, excluded.newest_id)
        """
    /// A new message into the search index (?1: id * 2 + account, ?2: its text).
    public static let indexMessage = "INSERT INTO message_search (rowid, text) VALUES (?1, ?2)"
    public static let addUsedBytes = "UPDATE settings SET value = value + ?1 WHERE key = 'used_bytes'"
}
