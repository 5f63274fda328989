import Foundation
import HTTPCore
import Store
import Upstream

/// `GET /api/messages?account=...&chat=ID&before=...&limit=N`: stored messages for scroll-back,
/// newest first, one chat's timeline when `chat` is given (CONTRACT sections 5 and 9); with
/// `thread=ID`, the replies in the thread under the stored message ID instead.
struct MessageRoutes {
    let copy: LocalCopy

    static let defaultLimit = 50
    static let maxLimit = 500

    func register(in router: inout Router) {
        router.add("GET", "/api/messages") { request, _, _ in
            try await page(request)
        }
    }

    private func page(_ request: HTTPRequest) async throws -> HTTPResponse {
        let parameters = QueryParameters(request)
        let account: AccountRole, chat: Int64?, limit: Int
        do throws(Problem) {
            account = try parameters.account(default: nil)  // section 5: always named here
            chat = try parameters.chat()
            limit = try parameters.limit(default: Self.defaultLimit, maximum: Self.maxLimit)
        } catch {
            return error.response
        }
        var before: Int64?
        if let text = request.queryValue("before") {
            guard let value = Int64(text) else {
                return Problem(status: .badRequest, detail: "before must be a message id.").response
            }
            before = value
        }
        var thread: Int64?
        if let text = request.queryValue("thread") {
            guard let value = Int64(text) else {
                return Problem(status: .badRequest, detail: "thread must be a message id.").response
            }
            thread = value
        }
        let page: MessagePage
        do {
            if let thread {
                guard let replies = try await copy.thread(of: account, root: thread, before: before, limit: limit) else {
                    return Problem(status: .notFound, detail: "No stored message \(thread) can have a thread.").response
                }
                page = replies
            } else {
                page = try await copy.page(of: account, chat: chat, before: before, limit: limit)
            }
        } catch {
            return Problem.storageError("Messages cannot be read").response
        }
        return try JSONResponse.make(MessagePageBody(page))
    }
}

/// The JSON shape of a page.
struct MessagePageBody: Codable, Sendable {
    struct Message: Codable, Sendable {
        var account: String
        var id: Int64
        var chatId: Int64
        var sender: String
        var text: String
        var sentAt: String
        var receivedAt: String
        /// Left out when the chat has no name.
        var chatName: String?
        /// Left out for a message never edited.
        var editedAt: String?
        var kind: String
        /// Left out when the upstream names senders by their id only.
        var senderName: String?
        /// An image's or a file's: left out for other messages.
        var media: Media?
        /// For a reply: the stored id of the message it replies to, or null when that one is not in
        /// the copy; left out for a message that is no reply.
        var replyTo: Int64??
        /// What the account's own notification rules said of it (`quiet`, `notify`, `mention`);
        /// left out where the upstream has no such rules.
        var attention: String?
        /// One per key, in the order each was first given (none: `[]`); left out for a message
        /// that cannot carry reactions (this project's protocol has none).
        var reactions: [ReactionBody]?
        /// For a reply in a thread: the stored id of the thread's first message (the reply is read
        /// there, not in the chat's timeline); left out otherwise.
        var threadId: Int64?
        /// For a thread's first message: `{"replies", "lastReplyAt", "unread", "highlights"}`
        /// (what is unread in the thread, and how much of it mentions the account); left out otherwise.
        var thread: ThreadBody?

        struct ThreadBody: Codable, Sendable {
            var replies: Int
            var lastReplyAt: String
            var unread: Int
            var highlights: Int
        }

        /// `{"key", "count", "mine", "senders"}`: `senders` the names of the first of those who
        /// gave it (up to 20; `count` says how many in all), `mine` whether the account is one.
        struct ReactionBody: Codable, Sendable {
            var key: String
            var count: Int
            var mine: Bool
            var senders: [String]
        }

        /// `{"name", "mimetype", "size", "url"}`: `url` is the dashboard's own `/api/media/...`, null
        /// when the file cannot be fetched here (an encrypted attachment).
        struct Media: Codable, Sendable {
            var name: String
            var mimetype: String?
            var size: Int64?
            var url: String?

            enum CodingKeys: String, CodingKey { case name, mimetype, size, url }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                try container.encode(mimetype, forKey: .mimetype)
                try container.encode(size, forKey: .size)
                try container.encode(url, forKey: .url)
            }
        }
    }

    var messages: [Message]
    var nextBefore: Int64?

    init(_ page: MessagePage) {
        messages = Self.messages(page.messages)
        nextBefore = page.nextBefore
    }

    static func messages(_ stored: [StoredMessage]) -> [Message] {
        stored.map {
            Message(account: $0.account.description, id: $0.id, chatId: $0.chatId, sender: $0.sender, text: $0.text,
                    sentAt: $0.sentAt, receivedAt: $0.receivedAt, chatName: $0.chatName, editedAt: $0.editedAt, kind: $0.kind.rawValue,
                    senderName: $0.senderName, media: $0.media.map(media), replyTo: $0.isReply ? .some($0.replyTo) : nil,
                    attention: $0.attention?.rawValue,
                    reactions: $0.eventId == nil ? nil : $0.reactions.map { Message.ReactionBody(key: $0.key, count: $0.count, mine: $0.mine, senders: $0.senders) },
                    threadId: $0.threadId, thread: $0.thread.map { Message.ThreadBody(replies: $0.replies, lastReplyAt: $0.lastReplyAt, unread: $0.unread, highlights: $0.highlights) })
        }
    }

    static func media(_ media: UpstreamMessage.Media) -> Message.Media {
        Message.Media(name: media.name, mimetype: media.mimetype, size: media.size, url: mediaURL(media.source))
    }

    /// `/api/media/SERVER/MEDIA_ID` of a stored reference (each part percent-encoded), nil when
    /// there is none or it does not pass the checks the media route makes.
    static func mediaURL(_ source: String?) -> String? {
        guard let source, let reference = MediaReference(path: source) else { return nil }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encode = { (part: String) in part.addingPercentEncoding(withAllowedCharacters: allowed) ?? part }
        return "/api/media/\(encode(reference.server))/\(encode(reference.mediaID))"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
        // Always present, null at the start of the history.
        try container.encode(nextBefore, forKey: .nextBefore)
    }
}
