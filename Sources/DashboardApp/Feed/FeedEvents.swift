import Foundation
import Recovery
import JSONText
import Store
import Upstream

// The data of the events the feed carries (CONTRACT section 5), each written once when published.

/// `messages.removed`: what Free space removed, per account, and the storage figures after it.
struct MessagesRemovedBody: Encodable, Sendable {
    var primary: [Int64]
    var linked: [Int64]
    var storage: StorageBody

    init(plan: FreeSpacePlan, usage: StorageUsage) {
        primary = plan.messageIDs[.primary] ?? []
        linked = plan.messageIDs[.linked] ?? []
        storage = StorageBody(usage)
    }
}

/// `message.changed`: a stored message whose text an edit replaced (CONTRACT section 10).
struct MessageChangedBody: Encodable, Sendable {
    var account: String
    var message: MessagePageBody.Message
}

/// `message.removed`: a message a redaction took out of the copy (CONTRACT section 10).
struct MessageRemovedBody: Encodable, Sendable {
    var account: String
    var chatId: Int64
    var id: Int64
}

struct AccountLinkedBody: Encodable, Sendable {
    var userId: Int64
    /// It came with the first session: the page shows it without announcing it.
    var firstSync: Bool
}

/// A `messages` event's data, written by hand: a batch can hold thousands of messages, and
/// `JSONEncoder` was the largest single cost of ingest (perf, `lp-bench e2e`).
struct MessagesEvent: Sendable {
    var account: String
    var messages: [StoredMessage]
    var notify: Bool
    /// The usage after this batch, so the storage meter follows without an event of its own.
    var storage: StorageUsage
    /// The chats these messages changed, as they stand now, so the chat list follows without
    /// asking again.
    var chats: [ChatSummary]
    /// The messages arrived while syncing was interrupted: the page sums them up in one notice.
    var caughtUp: Bool

    init(account: String, messages: [StoredMessage], notify: Bool, storage: StorageUsage, chats: [ChatSummary] = [], caughtUp: Bool = false) {
        self.account = account
        self.messages = messages
        self.notify = notify
        self.storage = storage
        self.chats = chats
        self.caughtUp = caughtUp
    }

    /// `{"account","messages":[{"id","chatId","sender","text","sentAt"}...],"notify","storage":{"quotaBytes","usedBytes"},"chats":[...]}`
    /// (and `"caughtUp":true` for messages that arrived while syncing was interrupted):
    /// each message with the upstream's fields only (the account is the event's); each chat as
    /// `/api/chats` gives it.
    func json() -> [UInt8] {
        var json = JSONWriter(capacity: 128 + messages.reduce(0) { $0 + 96 + $1.text.utf8.count })
        json.raw(#"{"account":"#)
        json.string(account)
        json.raw(#","messages":["#)
        for (index, message) in messages.enumerated() {
            if index > 0 { json.raw(",") }
            Self.write(message, to: &json)
        }
        json.raw(#"],"notify":"#)
        json.bool(notify)
        if caughtUp { json.raw(#","caughtUp":true"#) }
        json.raw(#","storage":{"quotaBytes":"#)
        if let quota = storage.quotaBytes { json.number(quota) } else { json.null() }
        json.raw(#","usedBytes":"#)
        json.number(storage.usedBytes)
        json.raw(#"},"chats":"#)
        json.raw("[")
        for (index, chat) in chats.enumerated() {
            if index > 0 { json.raw(",") }
            ChatBody(chat).write(to: &json)
        }
        json.raw("]}")
        return json.bytes
    }
}

extension MessagesEvent {
    /// A stored message as the page reads it: the protocol's fields (CONTRACT section 3), then
    /// those it has of section 10 (`chatName`, `editedAt`, `kind`, `senderName`, `media` with
    /// its URL on this dashboard, `replyTo`), `attention` where the account's own rules judged
    /// it, its `reactions` where it can carry any (an upstream's event: perhaps none), its
    /// `threadId` (a reply in a thread) or `thread` (a thread's first message), and `outboxId`
    /// for one written here.
    static func write(_ message: StoredMessage, to json: inout JSONWriter) {
        json.raw("{")
        json.messageFields(id: message.id, chatId: message.chatId, sender: message.sender, text: message.text, sentAt: message.sentAt,
                           chatName: message.chatName)
        if let editedAt = message.editedAt {
            json.raw(#","editedAt":"#)
            json.string(editedAt)
        }
        json.raw(#","kind":"#)
        json.string(message.kind.rawValue)
        if let senderName = message.senderName {
            json.raw(#","senderName":"#)
            json.string(senderName)
        }
        if let media = message.media {
            json.raw(#","media":{"name":"#)
            json.string(media.name)
            json.raw(#","mimetype":"#)
            if let type = media.mimetype { json.string(type) } else { json.null() }
            json.raw(#","size":"#)
            if let size = media.size { json.number(size) } else { json.null() }
            json.raw(#","url":"#)
            if let url = MessagePageBody.mediaURL(media.source) { json.string(url) } else { json.null() }
            json.raw("}")
        }
        if message.isReply {
            json.raw(#","replyTo":"#)
            if let id = message.replyTo { json.number(id) } else { json.null() }
        }
        if let attention = message.attention {
            json.raw(#","attention":"#)
            json.string(attention.rawValue)
        }
        if message.eventId != nil {
            // A message that can carry reactions (an upstream's event) says so, with none too.
            json.raw(#","reactions":"#)
            reactions(message.reactions, to: &json)
        }
        if let threadId = message.threadId {
            json.raw(#","threadId":"#)
            json.number(threadId)
        }
        if let thread = message.thread {
            json.raw(#","thread":{"replies":"#)
            json.number(Int64(thread.replies))
            json.raw(#","lastReplyAt":"#)
            json.string(thread.lastReplyAt)
            json.raw(#","unread":"#)
            json.number(Int64(thread.unread))
            json.raw(#","highlights":"#)
            json.number(Int64(thread.highlights))
            json.raw("}")
        }
        if let outboxId = message.outboxId {
            // Written here: the page puts it in place of its local echo.
            json.raw(#","outboxId":"#)
            json.number(outboxId)
        }
        json.raw("}")
    }
}

extension MessagesEvent {
    /// `[{"key","count","mine","senders"}...]`, as `/api/messages` gives them.
    static func reactions(_ reactions: [Reaction], to json: inout JSONWriter) {
        json.raw("[")
        for (index, reaction) in reactions.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw(#"{"key":"#); json.string(reaction.key)
            json.raw(#","count":"#); json.number(Int64(reaction.count))
            json.raw(#","mine":"#); json.bool(reaction.mine)
            json.raw(#","senders":["#)
            for (position, name) in reaction.senders.enumerated() {
                if position > 0 { json.raw(",") }
                json.string(name)
            }
            json.raw("]}")
        }
        json.raw("]")
    }
}

/// Storage figures as JSON, in events and in the snapshot; `quotaBytes` is null when unlimited.
/// `account.resynced`: the account's stored messages were set aside (`setAside` of them, kept on
/// this computer, not shown) and it syncs again from the upstream's beginning.
struct AccountResyncedBody: Encodable, Sendable {
    var account: String
    var setAside: Int64
    var storage: StorageBody
}

/// `error.resolved`: which error closed, and what closed it (`by`: `attempt`, with the `option`
/// chosen, `action` for a Delete outside the error, `engine` when the situation changed by itself).
struct ErrorResolvedBody: Encodable, Sendable {
    var id: String
    var type: String
    var by: String
    var option: String?

    init(id: String, type: String, resolution: Resolution) {
        self.id = id
        self.type = type
        switch resolution {
        case .attempt(let option): (by, self.option) = ("attempt", option.rawValue)
        case .action: (by, option) = ("action", nil)
        case .situation: (by, option) = ("engine", nil)
        }
    }
}

struct StorageBody: Encodable, Sendable {
    var usedBytes: Int64
    var quotaBytes: Int64?

    init(_ usage: StorageUsage) {
        usedBytes = usage.usedBytes
        quotaBytes = usage.quotaBytes
    }

    enum CodingKeys: String, CodingKey { case usedBytes, quotaBytes }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(usedBytes, forKey: .usedBytes)
        try container.encode(quotaBytes, forKey: .quotaBytes)
    }
}

/// A recoverable error as RFC 9457 problem JSON with its extension members (CONTRACT section 6).
struct ErrorBody: Encodable, Sendable {
    let error: UserFacingError
    /// The attempt running on it now, so a window opened meanwhile shows its buttons busy.
    let running: ErrorRegistry.RunningAttempt?

    init(_ error: UserFacingError, running: ErrorRegistry.RunningAttempt? = nil) {
        self.error = error
        self.running = running
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    struct Option: Encodable {
        var id: String
        var title: String
        var role: String?
        /// The question the page asks before running the option.
        var confirm: String?
        /// What the page asks to be typed and sends with the attempt (`password`).
        var input: String?
    }

    struct LastAttempt: Encodable {
        var option: String
        var title: String
        var at: String
        var reason: String
        var tries: Int
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(error.id, forKey: Key("id"))
        try container.encode(error.type, forKey: Key("type"))
        try container.encode(error.title, forKey: Key("title"))
        try container.encode(error.detail, forKey: Key("detail"))
        try container.encode(error.suggestion, forKey: Key("suggestion"))
        try container.encode(error.presentation.rawValue, forKey: Key("presentation"))
        try container.encode(Timestamp.string(error.createdAt), forKey: Key("createdAt"))
        try container.encode(error.options.map { Option(id: $0.id.rawValue, title: $0.title, role: $0.role?.rawValue, confirm: $0.confirmation, input: $0.input) },
                             forKey: Key("options"))
        if let running {
            try container.encode(["option": running.optionID.rawValue, "attemptId": running.attemptID, "status": "running"], forKey: Key("attempt"))
        }
        if let last = error.lastFailedAttempt {
            try container.encode(LastAttempt(option: last.optionID?.rawValue ?? "", title: last.optionTitle, at: Timestamp.string(last.at), reason: last.reason,
                                             tries: last.tries),
                                 forKey: Key("lastAttempt"))
        }
        try container.encode(["underlying": error.debug], forKey: Key("debug"))
        switch error.facts {
        case .none:
            break
        case .space(let space):
            // The storage card's figures, so the view and the card say the same.
            try container.encodeIfPresent(space.usedBytes, forKey: Key("usedBytes"))
            try container.encodeIfPresent(space.quotaBytes, forKey: Key("quotaBytes"))
            try container.encode(space.neededBytes, forKey: Key("neededBytes"))
            if space.diskFull { try container.encode(1, forKey: Key("diskFull")) }
            if let free = space.freeSpace {
                try container.encode(free.messages, forKey: Key("freeSpaceMessages"))
                try container.encode(free.bytes, forKey: Key("freeSpaceBytes"))
            }
        case .purchase(let purchase):
            try container.encode(purchase.neededBytes, forKey: Key("neededBytes"))
        case .send(let message):
            // Where the page shows it: at the message in its chat.
            try container.encode(message.outboxId, forKey: Key("outboxId"))
            try container.encode(message.account, forKey: Key("account"))
            try container.encode(message.chatId, forKey: Key("chatId"))
        case .leftBehind(let messages):
            try container.encode(messages.count, forKey: Key("unsentCount"))
        }
    }
}

/// `history` in `/api/state` and the `history` event (CONTRACT section 10): how far fetching the
/// account's older history is.
struct HistoryBody: Encodable, Sendable {
    var account: String
    var complete: Bool
    var roomsPending: Int
    var fetched: Int64
    /// In the event: the chat a page of older messages was just stored for.
    var chatId: Int64?

    /// `known`: false before an upstream that has older history said where it starts (not complete then).
    init(account: AccountRole, progress: HistoryProgress, chatId: Int64? = nil, known: Bool = true) {
        self.account = account.description
        complete = known && progress.complete
        roomsPending = progress.roomsPending
        fetched = progress.fetched
        self.chatId = chatId
    }
}
