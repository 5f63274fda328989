import Engine
import Foundation
import HTTPCore
import JSONText
import Store

/// `GET /api/chats?account=...` (newest activity first) and `POST /api/chats/{id}/read?account=...`
/// (unread back to 0, announced to every open page as a `chat.read` event) (CONTRACT section 9;
/// a Matrix account's other clients are told through its read markers, section 10).
struct ChatRoutes {
    let copy: LocalCopy
    let feed: EventFeed
    let readMarkers: ReadMarkerQueue

    func register(in router: inout Router) {
        router.add("GET", "/api/chats") { request, _, _ in
            try await list(request)
        }
        router.add("POST", "/api/chats/{id}/read") { request, parameters, _ in
            try await markRead(request, chat: parameters["id"] ?? "")
        }
        router.add("DELETE", "/api/chats/{id}") { request, parameters, _ in
            try await remove(request, chat: parameters["id"] ?? "")
        }
    }

    /// The account a chat call names and the chat's id, or the problem with them.
    private static func accountAndChat(_ request: HTTPRequest, _ text: String) throws(Problem) -> (AccountRole, Int64) {
        let account = try QueryParameters(request).account()
        guard let chat = Int64(text) else { throw Problem(status: .badRequest, detail: "The chat id must be a number.") }
        return (account, chat)
    }

    /// `DELETE /api/chats/{id}?account=...`: an archived chat (one the account left or was removed
    /// from) and all its messages leave this computer; the page asks first, saying how many go.
    /// A chat the account is still in is 409: its messages would come again with the next sync.
    private func remove(_ request: HTTPRequest, chat text: String) async throws -> HTTPResponse {
        let account: AccountRole, chat: Int64
        do throws(Problem) {
            (account, chat) = try Self.accountAndChat(request, text)
        } catch {
            return error.response
        }
        let removed: [Int64]
        do {
            guard let summary = try await copy.store.chats(of: account).first(where: { $0.id == chat }) else {
                return Problem(status: .notFound, detail: "The \(account) account has no chat \(chat).").response
            }
            guard summary.membership == .leave else {
                return Problem(status: .conflict, detail: "Only a chat the account has left can be removed: this one would come back with the next sync.").response
            }
            removed = try await copy.store.deleteChat(chat, of: account) ?? []
        } catch {
            return Problem.storageError("The chat cannot be removed", writing: true).response
        }
        let usage = await copy.store.storageUsage()
        await feed.publish("chat.removed", ChatRemovedBody(account: account.description, chatId: chat, ids: removed, storage: StorageBody(usage)))
        return HTTPResponse(status: .noContent)
    }

    private func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        let account: AccountRole
        do throws(Problem) {
            account = try QueryParameters(request).account()
        } catch {
            return error.response
        }
        let chats: [ChatSummary]
        do {
            chats = try await copy.chats(of: account)
        } catch {
            return Problem.storageError("Chats cannot be read").response
        }
        return try JSONResponse.make(ChatListBody(chats: chats.map(ChatBody.init)))
    }

    private func markRead(_ request: HTTPRequest, chat text: String) async throws -> HTTPResponse {
        let account: AccountRole, chat: Int64
        do throws(Problem) {
            (account, chat) = try Self.accountAndChat(request, text)
        } catch {
            return error.response
        }
        // An empty body marks it all read, its threads too (the upstream's marker at the newest
        // message reads them); {"through": id} only up to the newest message shown;
        // {"thread": id} the thread under that message alone.
        struct Body: Decodable { var through: Int64?; var thread: Int64? }
        var through: Int64?
        if !request.body.isEmpty {
            guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)), body.through == nil || body.thread == nil else {
                return Problem(status: .badRequest, detail: "The body must be empty, {}, {\"through\": <message id>} or {\"thread\": <message id>}.").response
            }
            if let thread = body.thread { return try await markThreadRead(account: account, chat: chat, root: thread) }
            through = body.through
        }
        let summary: ChatSummary?
        let readUpTo: String?
        do {
            guard try await copy.store.markRead(chat: chat, of: account, through: through) else {
                return Problem(status: .notFound, detail: "The \(account) account has no chat \(chat).").response
            }
            summary = try await copy.store.chats(of: account).first { $0.id == chat }
            readUpTo = try await copy.store.newestEventID(in: chat, of: account, through: through)
        } catch {
            return Problem.storageError("The chat cannot be marked read", writing: true).response
        }
        // The answer does not wait for the homeserver: the chat is read here whatever it says.
        if let readUpTo { await readMarkers.markRead(ReadPlace(chatId: chat), eventId: readUpTo) }
        await feed.publish("chat.read", ChatReadBody(account: account.description, chatId: chat, unread: summary?.unread ?? 0))
        return try JSONResponse.make(["chat": summary.map(ChatBody.init)])
    }

    /// The thread under the message `root` of `chat` read: its counts leave the chat's, the
    /// message shows it read, and the upstream is told with a receipt in that thread.
    private func markThreadRead(account: AccountRole, chat: Int64, root: Int64) async throws -> HTTPResponse {
        let read: ThreadRead?
        let summary: ChatSummary?
        do {
            read = try await copy.store.markThreadRead(root: root, of: account)
            summary = try await copy.store.chats(of: account).first { $0.id == chat }
        } catch {
            return Problem.storageError("The thread cannot be marked read", writing: true).response
        }
        guard let read, read.chatId == chat else {
            return Problem(status: .notFound, detail: "Chat \(chat) of the \(account) account has no stored message \(root) with a thread.").response
        }
        if let newest = read.newestReplyEvent { await readMarkers.markRead(ReadPlace(chatId: chat, thread: read.rootEvent), eventId: newest) }
        await feed.publish("message.changed", MessageChangedBody(account: account.description, message: MessagePageBody.messages([read.root])[0]))
        await feed.publish("chat.read", ChatReadBody(account: account.description, chatId: chat, unread: summary?.unread ?? 0))
        return try JSONResponse.make(["chat": summary.map(ChatBody.init)])
    }
}

struct ChatListBody: Encodable, Sendable {
    var chats: [ChatBody]
}

/// `{"id", "name", "messageCount", "unread", "lastMessageAt", "encrypted", "membership"}`; name and
/// time null when unknown; `membership` `join`, or `leave` for a chat the account left or was
/// removed from (an archive, read-only).
struct ChatBody: Encodable, Sendable {
    var id: Int64
    var name: String?
    var messageCount: Int64
    var unread: Int64
    /// How many of the unread are mentions (a Matrix homeserver's highlight count).
    var highlights: Int64
    var lastMessageAt: String?
    var encrypted: Bool
    var membership: String
    var unreadable: Bool

    init(_ chat: ChatSummary) {
        encrypted = chat.encrypted
        unreadable = chat.unreadable
        membership = chat.membership.rawValue
        id = chat.id
        name = chat.name
        messageCount = chat.messageCount
        unread = chat.unread
        highlights = chat.highlights
        lastMessageAt = chat.lastMessageAt
    }

    enum CodingKeys: String, CodingKey { case id, name, messageCount, unread, highlights, lastMessageAt, encrypted, membership, unreadable }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)  // null, not absent
        try container.encode(messageCount, forKey: .messageCount)
        try container.encode(unread, forKey: .unread)
        try container.encode(highlights, forKey: .highlights)
        try container.encode(lastMessageAt, forKey: .lastMessageAt)
        try container.encode(encrypted, forKey: .encrypted)
        try container.encode(membership, forKey: .membership)
        try container.encode(unreadable, forKey: .unreadable)
    }

    /// The same object as `encode(to:)` writes, by hand: a batch of messages carries the chats
    /// it changed, on every event.
    func write(to json: inout JSONWriter) {
        json.raw(#"{"id":"#); json.number(id)
        json.raw(#","name":"#); if let name { json.string(name) } else { json.null() }
        json.raw(#","messageCount":"#); json.number(messageCount)
        json.raw(#","unread":"#); json.number(unread)
        json.raw(#","highlights":"#); json.number(highlights)
        json.raw(#","lastMessageAt":"#); if let lastMessageAt { json.string(lastMessageAt) } else { json.null() }
        json.raw(#","encrypted":"#); json.bool(encrypted)
        json.raw(#","membership":"#); json.string(membership)
        json.raw(#","unreadable":"#); json.bool(unreadable)
        json.raw("}")
    }
}

/// `chat.removed`: a chat and its messages left the copy (the person removed an archived chat).
struct ChatRemovedBody: Encodable, Sendable {
    var account: String
    var chatId: Int64
    var ids: [Int64]
    var storage: StorageBody
}

/// `chat.changed`: a chat's membership changed (the account left it, or came back to it).
struct ChatChangedBody: Encodable, Sendable {
    var account: String
    var chat: ChatBody
}

/// `chat.read`: a chat was marked read (in this page or another), and how many stay unread (0
/// unless it was read only up to a message).
struct ChatReadBody: Encodable, Sendable {
    var account: String
    var chatId: Int64
    var unread: Int64
}
