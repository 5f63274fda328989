/// A message as the upstream delivers it, before it is stored.
public struct IncomingMessage: Sendable, Equatable, Codable {
    /// Strictly increasing per account on the upstream.
    public var id: Int64
    public var chatId: Int64
    public var sender: String
    public var text: String
    /// As the upstream sent it (ISO-8601).
    public var sentAt: String
    /// An upstream's string identity (a Matrix event id): when set, the message is stored once
    /// per event id and `id` is ignored; the store numbers such messages in the order they come.
    public var eventId: String?
    /// The chat's name, when the upstream gives one.
    public var chatName: String?
    /// Set when this event is not a message of its own but changes one (by its event id).
    public var relation: Relation?
    public var kind: MessageKind = .text
    /// The sender as the chat names them (a Matrix display name); nil: `sender`.
    public var senderName: String?
    /// The chat is end-to-end encrypted: the store marks it so.
    public var chatEncrypted = false
    /// The file of an image or file message.
    public var media: MessageMedia?
    /// The event id of the message this one replies to.
    public var replyToEvent: String?

    /// What an event does to another message of the copy (CONTRACT section 10).
    public enum Relation: Sendable, Equatable, Codable {
        /// A new text for the message with this event id, from the same sender; the latest wins.
        case replaces(eventId: String)
        /// The message with this event id is deleted, also if it arrives later.
        case redacts(eventId: String)
    }

    public init(id: Int64, chatId: Int64, sender: String, text: String, sentAt: String, eventId: String? = nil, chatName: String? = nil,
                relation: Relation? = nil) {
        self.id = id
        self.chatId = chatId
        self.sender = sender
        self.text = text
        self.sentAt = sentAt
        self.eventId = eventId
        self.chatName = chatName
        self.relation = relation
    }

    /// What the message counts against the storage quota: its text fields plus a fixed share for
    /// the row's keys and bookkeeping. Deterministic, so usage can be kept incrementally.
    public var storageSize: Int64 {
        Int64(sender.utf8.count + text.utf8.count + sentAt.utf8.count + (eventId?.utf8.count ?? 0) + (senderName?.utf8.count ?? 0))
            + Self.rowOverhead
    }

    public static let rowOverhead: Int64 = 48
}

/// What a message is (CONTRACT section 10), as stored and as the page shows it.
public enum MessageKind: String, Sendable, Equatable, Codable, CaseIterable {
    case text, notice, emote, image, file
    /// End-to-end encrypted: unreadable here; its text is a neutral placeholder, never indexed.
    case encrypted
}

/// A message in the local copy.
public struct StoredMessage: Sendable, Equatable, Codable {
    public var account: AccountRole
    public var id: Int64
    public var chatId: Int64
    public var sender: String
    public var text: String
    public var sentAt: String
    public var receivedAt: String
    /// The chat's name, when its upstream gave one (a Matrix room's).
    public var chatName: String?
    /// When the text was last replaced by its sender's edit; nil for a message never edited.
    public var editedAt: String?
    public var kind: MessageKind = .text
    /// The sender as the chat names them (a Matrix display name); nil: `sender`.
    public var senderName: String?
    /// The file of an image or file message.
    public var media: MessageMedia?
    /// For a reply: the stored id of the message it replies to, nil when that one is not in the copy.
    public var replyTo: Int64?
    /// Whether it is a reply at all (`replyTo` may still be nil).
    public var isReply = false

    public init(account: AccountRole, id: Int64, chatId: Int64, sender: String, text: String, sentAt: String, receivedAt: String,
                chatName: String? = nil, editedAt: String? = nil, kind: MessageKind = .text, senderName: String? = nil,
                media: MessageMedia? = nil, isReply: Bool = false, replyTo: Int64? = nil) {
        self.media = media
        self.isReply = isReply
        self.replyTo = replyTo
        self.kind = kind
        self.senderName = senderName
        self.account = account
        self.id = id
        self.chatId = chatId
        self.sender = sender
        self.text = text
        self.sentAt = sentAt
        self.receivedAt = receivedAt
        self.chatName = chatName
        self.editedAt = editedAt
    }
}

/// A message's file: its name, type and size as the sender said, and the upstream's reference to
/// it (`SERVER/MEDIA_ID`; nil when it cannot be fetched here).
public struct MessageMedia: Sendable, Equatable, Codable {
    public var name: String
    public var mimetype: String?
    public var size: Int64?
    public var source: String?

    public init(name: String, mimetype: String? = nil, size: Int64? = nil, source: String? = nil) {
        self.name = name
        self.mimetype = mimetype
        self.size = size
        self.source = source
    }
}

/// What one batch did to the copy: the messages that were new, those whose text an edit changed,
/// and those a redaction removed (each once, in the order the batch met them).
public struct AppliedBatch: Sendable, Equatable {
    public var fresh: [StoredMessage]
    public var changed: [StoredMessage]
    public var removed: [RemovedMessage]
    /// Chats read elsewhere whose unread count this batch put back to 0.
    public var read: [Int64] = []
    /// Chats the account left or came back to in this batch.
    public var membershipChanged: [Int64] = []
    /// The storage in use once the batch is in (what a page's storage card shows beside it).
    public var usage: StorageUsage?
    /// The chats this batch changed, as they stand after it (counts, newest message, membership),
    /// most recently active first.
    public var chats: [ChatSummary] = []

    public init(fresh: [StoredMessage] = [], changed: [StoredMessage] = [], removed: [RemovedMessage] = [], read: [Int64] = [],
                usage: StorageUsage? = nil) {
        self.fresh = fresh
        self.changed = changed
        self.removed = removed
        self.usage = usage
        self.read = read
    }
}

/// A message gone from the copy: what a page needs to take it out.
public struct RemovedMessage: Sendable, Equatable {
    public var chatId: Int64
    public var id: Int64

    public init(chatId: Int64, id: Int64) {
        self.chatId = chatId
        self.id = id
    }
}

/// One page of scroll-back: newest first; `nextBefore` is what to ask for next, nil at the start.
public struct MessagePage: Sendable, Equatable {
    public var messages: [StoredMessage]
    public var nextBefore: Int64?

    public init(messages: [StoredMessage], nextBefore: Int64?) {
        self.messages = messages
        self.nextBefore = nextBefore
    }
}

/// Bytes counted against the quota, and the quota itself (nil: unlimited).
public struct StorageUsage: Sendable, Equatable {
    public var usedBytes: Int64
    public var quotaBytes: Int64?

    public init(usedBytes: Int64, quotaBytes: Int64?) {
        self.usedBytes = usedBytes
        self.quotaBytes = quotaBytes
    }
}

/// The upstream user ids of the two accounts, as last announced by the upstream's session.
public struct AccountIDs: Sendable, Equatable {
    public var primaryUserId: Int64?
    public var linkedUserId: Int64?

    public init(primaryUserId: Int64?, linkedUserId: Int64?) {
        self.primaryUserId = primaryUserId
        self.linkedUserId = linkedUserId
    }
}
