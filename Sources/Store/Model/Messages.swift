import Upstream

extension UpstreamMessage {
    /// What the message counts against the storage quota: its text fields plus a fixed share for
    /// the row's keys and bookkeeping. Deterministic, so usage can be kept incrementally.
    public var storageSize: Int64 {
        Int64(sender.utf8.count + text.utf8.count + sentAt.utf8.count + (eventId?.utf8.count ?? 0) + (senderName?.utf8.count ?? 0))
            + Self.rowOverhead
    }

    public static let rowOverhead: Int64 = 48
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
    public var kind: UpstreamMessage.Kind = .text
    /// The sender as the chat names them (a Matrix display name); nil: `sender`.
    public var senderName: String?
    /// The file of an image or file message.
    public var media: UpstreamMessage.Media?
    /// For a reply: the stored id of the message it replies to, nil when that one is not in the copy.
    public var replyTo: Int64?
    /// Whether it is a reply at all (`replyTo` may still be nil).
    public var isReply = false
    /// The outbox entry it was sent as, when it came in as the answer or echo of a send from here
    /// (the page then replaces its local echo with it).
    public var outboxId: Int64?
    /// What the account's own rules said of it when it came (a Matrix account's push rules):
    /// quiet, told, or a mention; nil where the upstream has no such rules.
    public var attention: UpstreamMessage.Attention?
    /// The upstream's own id of it (a Matrix event id), when it has one: what reactions and
    /// replies name it by.
    public var eventId: String?
    /// Its reactions, one per key, in the order each key was first given.
    public var reactions: [Reaction] = []
    /// For a reply in a thread: the stored id of the thread's first message, nil when that one is
    /// not in the copy (the reply is then read in the chat's timeline).
    public var threadId: Int64?
    /// For a thread's first message: its replies so far.
    public var thread: ThreadSummary?

    public init(account: AccountRole, id: Int64, chatId: Int64, sender: String, text: String, sentAt: String, receivedAt: String,
                chatName: String? = nil, editedAt: String? = nil, kind: UpstreamMessage.Kind = .text, senderName: String? = nil,
                media: UpstreamMessage.Media? = nil, isReply: Bool = false, replyTo: Int64? = nil) {
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

/// A thread as its first message shows it: "3 replies · last reply at …".
public struct ThreadSummary: Sendable, Equatable, Codable {
    public var replies: Int
    public var lastReplyAt: String
    /// What the upstream counts as unread in the thread (those of its replies that notify), and
    /// how many of those are mentions; 0 when it was read, here or in another client.
    public var unread: Int
    public var highlights: Int

    public init(replies: Int, lastReplyAt: String, unread: Int = 0, highlights: Int = 0) {
        self.replies = replies
        self.lastReplyAt = lastReplyAt
        self.unread = unread
        self.highlights = highlights
    }
}

/// The reactions to a message under one key (an emoji, or a word): how many people gave it,
/// whether the account is one of them, and who, as the chat names them.
public struct Reaction: Sendable, Equatable, Codable {
    public var key: String
    public var count: Int
    public var mine: Bool
    /// The names of those who gave it, the earliest first (at most ``Reaction/namedSenders``).
    public var senders: [String]

    /// How many names a reaction carries; the count tells the rest.
    public static let namedSenders = 20

    public init(key: String, count: Int, mine: Bool, senders: [String]) {
        self.key = key
        self.count = count
        self.mine = mine
        self.senders = senders
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
    /// Outbox entries whose message this batch stored: they left the outbox.
    public var sent: [Int64] = []

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
