/// What `POST /v1/session` answers.
public struct UpstreamSession: Sendable, Equatable, Codable {
    public var token: String
    public var primaryUserId: Int64
    public var linkedUserId: Int64?
    /// nil: the upstream sets no quota (Matrix); `--quota` may still set one.
    public var storageQuotaBytes: Int64?

    public init(token: String, primaryUserId: Int64, linkedUserId: Int64?, storageQuotaBytes: Int64?) {
        self.token = token
        self.primaryUserId = primaryUserId
        self.linkedUserId = linkedUserId
        self.storageQuotaBytes = storageQuotaBytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
        try container.encode(primaryUserId, forKey: .primaryUserId)
        try container.encode(linkedUserId, forKey: .linkedUserId)  // null, not absent
        try container.encode(storageQuotaBytes, forKey: .storageQuotaBytes)
    }
}

/// What `GET /v1/last-message-info` answers: the newest id the server has per stream.
public struct LastMessageInfo: Sendable, Equatable, Codable {
    public var primaryLastId: Int64
    public var linkedLastId: Int64?

    public init(primaryLastId: Int64, linkedLastId: Int64?) {
        self.primaryLastId = primaryLastId
        self.linkedLastId = linkedLastId
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(primaryLastId, forKey: .primaryLastId)
        try container.encode(linkedLastId, forKey: .linkedLastId)
    }
}

/// One message, in the one shape it has from the transport that read it to the store that keeps
/// it (the store's `StoredMessage` adds where it is kept and when it came).
public struct UpstreamMessage: Sendable, Equatable, Codable {
    /// This project's protocol: the message's id, increasing per stream. Ignored when `eventId`
    /// is set: the store then numbers messages itself, in the order they come.
    public var id: Int64
    public var chatId: Int64
    public var sender: String
    public var text: String
    public var sentAt: String
    /// The identity of a message on an upstream whose ids are strings (a Matrix event id): stored once.
    public var eventId: String?
    /// The chat's name, when the upstream gives one (a Matrix room's name).
    public var chatName: String?
    /// Set when the event is no message of its own but acts on another one (a Matrix edit or
    /// redaction, CONTRACT section 10).
    public var relation: Relation?

    /// The sender's name as the chat shows it (a Matrix member's display name); nil: `sender`.
    public var senderName: String?
    /// What the message is (CONTRACT section 10); this project's protocol has text only.
    public var kind: Kind = .text
    /// True when the chat is end-to-end encrypted (a Matrix room with `m.room.encryption`).
    public var chatEncrypted = false
    /// The file of an image or file message.
    public var media: Media?
    /// The event id of the message this one replies to (Matrix `m.in_reply_to`).
    public var replyTo: String?
    /// The event id of the thread's first message, when this one is a reply in a thread (Matrix
    /// `m.thread`): it is read in the thread, not in the chat's timeline.
    public var threadRoot: String?
    /// The longest reaction key kept or sent, in UTF-8 bytes: an emoji, or a few words (Element's
    /// keys are one emoji); a longer one is a broken or hostile client's.
    public static let maximumReactionKeyBytes = 256

    /// The account itself wrote it (here or in another of its clients): a reaction of its own is
    /// marked as the person's, and removing it is theirs to do.
    public var byAccount = false
    /// The key it was sent under, when the account sent it from this dashboard (CONTRACT
    /// section 11: the protocol's `Idempotency-Key`, a Matrix `unsigned.transaction_id`): storing
    /// it takes its entry out of the outbox.
    public var sendKey: String?

    /// A message's file (CONTRACT section 10, `media`): its name, type and size as the sender
    /// said, and where the upstream serves it (nil: it cannot be fetched here, e.g. an encrypted
    /// attachment).
    public struct Media: Sendable, Equatable, Codable {
        public var name: String
        public var mimetype: String?
        public var size: Int64?
        /// The upstream's own reference, `SERVER/MEDIA_ID` of an `mxc://` URI.
        public var source: String?

        public init(name: String, mimetype: String? = nil, size: Int64? = nil, source: String? = nil) {
            self.name = name
            self.mimetype = mimetype
            self.size = size
            self.source = source
        }
    }

    /// What the account's own notification rules say of a message (a Matrix account's push
    /// rules); nil where the upstream has none, and the dashboard tells of every live message.
    public var attention: Attention?

    /// The outcome of the account's rules for one message, as Element shows it.
    public enum Attention: String, Sendable, Equatable, Codable {
        /// Nothing to tell (a muted room, a notice, the rules' own silence).
        case quiet
        /// Told: a toast or a system notification.
        case notify
        /// Told, and shown as a mention (a highlight): in the chat list and on its row.
        case mention
    }

    /// What a message is (CONTRACT section 10), as stored and as the page shows it.
    public enum Kind: String, Sendable, Equatable, Codable, CaseIterable {
        case text, notice, emote, image, file
        /// End-to-end encrypted: unreadable here; its text is a neutral placeholder, never indexed.
        case encrypted
    }

    /// What an event does to another message, named by its event id.
    public enum Relation: Sendable, Equatable, Codable {
        /// `text` is the message's new text (an edit by its sender).
        case replaces(eventId: String)
        /// The message is deleted.
        case redacts(eventId: String)
        /// A reaction to the message (a Matrix `m.annotation`): `text` is its key, an emoji or a
        /// word; the event's own id is what a redaction of it names.
        case annotates(eventId: String)
    }

    public init(id: Int64, chatId: Int64, sender: String, text: String, sentAt: String, eventId: String? = nil, chatName: String? = nil,
                relation: Relation? = nil, sendKey: String? = nil) {
        self.relation = relation
        self.sendKey = sendKey
        self.id = id
        self.chatId = chatId
        self.sender = sender
        self.text = text
        self.sentAt = sentAt
        self.eventId = eventId
        self.chatName = chatName
    }

    enum CodingKeys: String, CodingKey {
        case id, chatId, sender, text, sentAt, eventId, chatName, relation, senderName, kind, chatEncrypted, media, replyTo, threadRoot
    }

    /// The protocol's fields, and those of section 10 where they are given (a message of this
    /// project's protocol has none: it is text, in a chat that is not encrypted).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(Int64.self, forKey: .id), chatId: try container.decode(Int64.self, forKey: .chatId),
                  sender: try container.decode(String.self, forKey: .sender), text: try container.decode(String.self, forKey: .text),
                  sentAt: try container.decode(String.self, forKey: .sentAt),
                  eventId: try container.decodeIfPresent(String.self, forKey: .eventId),
                  chatName: try container.decodeIfPresent(String.self, forKey: .chatName),
                  relation: try container.decodeIfPresent(Relation.self, forKey: .relation))
        senderName = try container.decodeIfPresent(String.self, forKey: .senderName)
        kind = try container.decodeIfPresent(Kind.self, forKey: .kind) ?? .text
        chatEncrypted = try container.decodeIfPresent(Bool.self, forKey: .chatEncrypted) ?? false
        media = try container.decodeIfPresent(Media.self, forKey: .media)
        replyTo = try container.decodeIfPresent(String.self, forKey: .replyTo)
        threadRoot = try container.decodeIfPresent(String.self, forKey: .threadRoot)
    }
}

/// What an answer's messages are, from an upstream that cannot tell its newest ids (Matrix): the
/// transport knows whether it asked from the beginning, caught up after a (re)connection or waited.
public enum AnswerDelivery: Sendable, Equatable {
    /// A first sync: history, stored silently.
    case history
    /// What arrived while syncing was interrupted: one summary.
    case missed
    /// New while syncing: notify.
    case live
}

/// What a hanging `messages` request brings: messages keyed by user id (as a string), empty on
/// a timeout, and where each stream resumes after them.
public struct MessagesAnswer: Sendable, Equatable, Codable {
    public var messages: [String: [UpstreamMessage]]
    /// Per stream (user id): its cursor after this answer, opaque to everyone but its transport.
    /// A stream that is not here keeps its cursor.
    public var cursors: [String: String]
    /// What the messages are, from an upstream without `lastMessageInfo`; nil: the engine tells
    /// by their ids.
    public var delivery: AnswerDelivery?
    /// Per stream: where the older history of chats seen here begins, from an upstream that
    /// fetches it (`OlderHistory`); only a chat's first one counts.
    public var historyStarts: [String: [HistoryPosition]] = [:]
    /// Per stream: chats the account has read elsewhere (another client), whose unread count is
    /// cleared here.
    public var readElsewhere: [String: [Int64]] = [:]
    /// Per stream: chats the account is in (`true`) or left, was kicked or banned from (`false`).
    public var inChat: [String: [Int64: Bool]] = [:]
    /// Per stream: what the upstream itself counts as unread in each chat (a Matrix homeserver's
    /// `unread_notifications`, by the account's push rules), for the chats it told of.
    public var notificationCounts: [String: [Int64: NotificationCounts]] = [:]

    public init(messages: [String: [UpstreamMessage]], cursors: [String: String], delivery: AnswerDelivery? = nil,
                historyStarts: [String: [HistoryPosition]] = [:], readElsewhere: [String: [Int64]] = [:], inChat: [String: [Int64: Bool]] = [:]) {
        self.messages = messages
        self.cursors = cursors
        self.delivery = delivery
        self.historyStarts = historyStarts
        self.readElsewhere = readElsewhere
        self.inChat = inChat
    }

    /// An answer of this project's protocol, whose cursor is the newest id of each stream.
    public init(messages: [String: [UpstreamMessage]]) {
        self.init(messages: messages, cursors: messages.compactMapValues { stream in
            stream.max { $0.id < $1.id }.map { String($0.id) }
        })
    }

    enum CodingKeys: String, CodingKey { case messages }

    /// `{"messages": {...}}` of this project's protocol (cursors are not on the wire: see `init(messages:)`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(messages: try container.decodeIfPresent([String: [UpstreamMessage]].self, forKey: .messages) ?? [:])
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
    }
}

/// Where the streams stand: ask for what comes after these cursors (opaque, as the upstream gave them).
/// A chat's unread messages as its upstream counts them: those that notify, and those among them
/// that are mentions (highlights).
public struct NotificationCounts: Sendable, Equatable {
    /// The whole chat's: its main timeline and every thread in it.
    public var notifications: Int64
    public var highlights: Int64
    /// The part of these in each thread that has any, keyed by the event id of the thread's first
    /// message (a Matrix homeserver's `unread_thread_notifications`); a thread not here has none.
    public var threads: [String: NotificationCounts]

    public init(notifications: Int64, highlights: Int64, threads: [String: NotificationCounts] = [:]) {
        self.notifications = notifications
        self.highlights = highlights
        self.threads = threads
    }
}

public struct StreamCursors: Sendable, Equatable {
    /// nil: from the stream's beginning.
    public var primary: String?
    /// Whether there is a linked account to sync at all.
    public var includesLinked: Bool
    /// nil: from the stream's beginning.
    public var linked: String?

    public init(primary: String?, includesLinked: Bool, linked: String?) {
        self.primary = primary
        self.includesLinked = includesLinked
        self.linked = linked
    }
}
