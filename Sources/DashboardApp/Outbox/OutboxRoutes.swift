import Engine
import Foundation
import HTTPCore
import JSONText
import Recovery
import Store
import Upstream

/// Sending (CONTRACT section 11):
/// - `POST /api/chats/{id}/messages?account=...` `{"text": s, "threadId"?: n}` with an
///   `Idempotency-Key`: 202 `{"outboxId", "state": "queued"}`, the same answer again for the same
///   key; with `threadId`, it answers in the thread of that stored message;
/// - `GET /api/outbox`: what is not sent yet, oldest first, each failed one with its error;
/// - `DELETE /api/outbox/{id}`: removes an unsent message (204); one being sent right now, or whose
///   last try got no answer (it may have arrived), is 409.
struct OutboxRoutes {
    let outboxes: Outboxes
    let copy: LocalCopy
    let registry: ErrorRegistry

    /// The most a message may hold, in UTF-8 bytes.
    static let maximumTextBytes = 32_000

    func register(in router: inout Router) {
        router.add("POST", "/api/chats/{id}/messages") { request, parameters, _ in
            try await write(request, chat: parameters["id"] ?? "")
        }
        router.add("GET", "/api/outbox") { _, _, _ in
            try await list()
        }
        router.add("DELETE", "/api/outbox/{id}") { _, parameters, _ in
            try await discard(parameters["id"] ?? "")
        }
    }

    /// What a request to send asks for, or the problem with it (checked in the order a person
    /// would fix it: which chat, the key, then the text).
    struct Written: Equatable {
        var account: AccountRole
        var chat: Int64
        var requestKey: String
        var text: String
        /// The stored message in whose thread it answers.
        var thread: Int64?

        init(_ request: HTTPRequest, chat chatText: String) throws(Problem) {
            account = try QueryParameters(request).account()
            guard let chat = Int64(chatText) else { throw Problem(status: .badRequest, detail: "The chat id must be a number.") }
            self.chat = chat
            guard let key = request.headers["Idempotency-Key"], !key.isEmpty, key.utf8.count <= 200 else {
                throw Problem(.idempotencyKeyMissing, title: "Idempotency-Key required", status: .badRequest,
                              detail: "Send an Idempotency-Key header: a new one for each message written, the same one when that request is retried.")
            }
            requestKey = key
            struct Body: Decodable {
                var text: String
                var threadId: Int64?
            }
            guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
                throw Problem(status: .badRequest, detail: "The body must be {\"text\": \"<the message>\"}, with \"threadId\": <a message id> to answer in its thread.")
            }
            thread = body.threadId
            guard !body.text.allSatisfy({ $0.isWhitespace }) else {
                throw Problem(status: .badRequest, detail: "The message is empty.")
            }
            guard body.text.utf8.count <= OutboxRoutes.maximumTextBytes else {
                throw Problem(status: .contentTooLarge,
                              detail: "The message is \(body.text.utf8.count) bytes long; at most \(OutboxRoutes.maximumTextBytes) can be sent.")
            }
            text = body.text
        }
    }

    private func write(_ request: HTTPRequest, chat chatText: String) async throws -> HTTPResponse {
        let written: Written
        do throws(Problem) {
            written = try Written(request, chat: chatText)
        } catch {
            return error.response
        }
        guard let sender = outboxes.sender(for: written.account) else {
            return Problem(status: .notFound, detail: "Messages cannot be sent from the \(written.account) account of this chat server.").response
        }
        let admission: OutboxAdmission
        do {
            admission = try await sender.write(written.text, to: written.chat, inThreadOf: written.thread, requestKey: written.requestKey)
        } catch {
            return Problem.storageError("The message cannot be kept for sending", writing: true).response
        }
        switch admission {
        case .queued(let entry):
            return try JSONResponse.make(Accepted(outboxId: entry.id, state: OutboxState.queued.rawValue), status: .accepted)
        case .repeated(let outboxId):
            return try JSONResponse.make(Accepted(outboxId: outboxId, state: OutboxState.queued.rawValue), status: .accepted)
        case .keyReused:
            return Problem(.idempotencyKeyReused, title: "Idempotency-Key already used", status: .unprocessableContent,
                           detail: "This key was used for another message; make a new key for each message written.").response
        case .noSuchChat:
            return Problem(status: .notFound, detail: "The \(written.account) account has no chat \(written.chat).").response
        case .noSuchThread:
            return Problem(status: .notFound,
                           detail: "Chat \(written.chat) has no stored message \(written.thread ?? 0) that a thread can be answered in.").response
        case .archived:
            return Problem(status: .conflict, detail: "The account is no longer in this chat, so nothing can be sent there.").response
        case .encrypted:
            return Problem(status: .conflict,
                           detail: "This room is end-to-end encrypted, and this dashboard cannot encrypt: it does not send into it. Write in Element or another Matrix app.").response
        }
    }

    private func list() async throws -> HTTPResponse {
        let entries: [OutboxEntry]
        do {
            entries = try await copy.outbox()
        } catch {
            return Problem.storageError("The outbox cannot be read").response
        }
        return try JSONResponse.make(OutboxListBody(outbox: OutboxEntryBody.list(await outboxes.asTheyStand(entries), openErrors: await registry.openErrors())))
    }

    private func discard(_ idText: String) async throws -> HTTPResponse {
        guard let id = Int64(idText) else { return Problem(status: .badRequest, detail: "The outbox id must be a number.").response }
        let entry: OutboxEntry?
        do {
            entry = try await copy.outbox().first { $0.id == id }
        } catch {
            return Problem.storageError("The outbox cannot be read").response
        }
        guard let entry, let sender = outboxes.sender(for: entry.account) else {
            return Problem(status: .notFound, detail: "There is no unsent message \(id).").response
        }
        do {
            switch try await sender.discard(id) {
            case .removed:
                return HTTPResponse(status: .noContent)
            case .sending:
                return Problem(status: .conflict, detail: "The message is being sent, or a try of it got no answer and it may have arrived; whether it is in the chat is up to the chat server's answer to the next try.").response
            case .notFound:
                return Problem(status: .notFound, detail: "There is no unsent message \(id).").response
            }
        } catch {
            return Problem.storageError("The message cannot be deleted", writing: true).response
        }
    }

    struct Accepted: Encodable {
        var outboxId: Int64
        var state: String
    }
}

struct OutboxListBody: Encodable, Sendable {
    var outbox: [OutboxEntryBody]
}

/// An outbox entry as `GET /api/outbox` and the `outbox` event give it: `{"outboxId", "account",
/// "chatId", "text", "state", "createdAt", "error", "action"}`, `error` the open
/// `/problems/send-failed` error of a failed one (with its options), else null; `action` is
/// `message`, or `react` / `unreact` for a reaction (`text` its key) given to or taken back from
/// the message `messageId` (null when that one is no longer in the copy); a message answering in
/// a thread has `threadId`, the stored id of the thread's first message (null when gone).
struct OutboxEntryBody: Encodable, Sendable {
    var outboxId: Int64
    var account: String
    var chatId: Int64
    var text: String
    var state: String
    var createdAt: String
    var error: ErrorBody?
    /// Only on the event of an entry just written: the `Idempotency-Key` it was written under.
    var requestKey: String?
    var action: String
    /// A reaction's message; absent for a message entry.
    var messageId: Int64??
    /// A message's thread; absent for one in the chat's timeline.
    var threadId: Int64??

    init(_ entry: OutboxEntry, error: UserFacingError? = nil, requestKey: String? = nil) {
        outboxId = entry.id
        account = entry.account.description
        chatId = entry.chatId
        text = entry.text
        state = entry.state.rawValue
        createdAt = entry.createdAt
        self.error = error.map { ErrorBody($0) }
        self.requestKey = requestKey
        switch entry.action {
        case .message:
            (action, messageId) = ("message", nil)
            if entry.threadRoot != nil { threadId = .some(entry.targetMessageId) }
        case .react: (action, messageId) = ("react", .some(entry.targetMessageId))
        case .unreact: (action, messageId) = ("unreact", .some(entry.targetMessageId))
        }
    }

    /// Each entry with its open error, if it failed (what `GET /api/outbox` and the snapshot give).
    static func list(_ entries: [OutboxEntry], openErrors: [UserFacingError]) -> [OutboxEntryBody] {
        entries.map { entry in OutboxEntryBody(entry, error: openErrors.first { $0.causeKey == UnsentMessage.causeKey(of: entry.id) }) }
    }

    enum CodingKeys: String, CodingKey { case outboxId, account, chatId, text, state, createdAt, error, requestKey, action, messageId, threadId }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(outboxId, forKey: .outboxId)
        try container.encode(account, forKey: .account)
        try container.encode(chatId, forKey: .chatId)
        try container.encode(text, forKey: .text)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(error, forKey: .error)  // null, not absent
        try container.encodeIfPresent(requestKey, forKey: .requestKey)
        try container.encode(action, forKey: .action)
        if let messageId { try container.encode(messageId, forKey: .messageId) }
        if let threadId { try container.encode(threadId, forKey: .threadId) }
    }

    /// The `outbox` event's data, the same object as `encode(to:)` writes: the fields by hand, as
    /// each message sent changes its entry's state twice (the error, when there is one, by the
    /// encoder).
    func json() -> [UInt8] {
        var json = JSONWriter(capacity: 160 + text.utf8.count)
        json.raw(#"{"outboxId":"#); json.number(outboxId)
        json.raw(#","account":"#); json.string(account)
        json.raw(#","chatId":"#); json.number(chatId)
        json.raw(#","text":"#); json.string(text)
        json.raw(#","state":"#); json.string(state)
        json.raw(#","createdAt":"#); json.string(createdAt)
        json.raw(#","error":"#)
        if let error { json.raw(bytes: EventFeed.json(error)) } else { json.null() }
        if let requestKey { json.raw(#","requestKey":"#); json.string(requestKey) }
        json.raw(#","action":"#); json.string(action)
        if let messageId {
            json.raw(#","messageId":"#)
            if let id = messageId { json.number(id) } else { json.null() }
        }
        if let threadId {
            json.raw(#","threadId":"#)
            if let id = threadId { json.number(id) } else { json.null() }
        }
        json.raw("}")
        return json.bytes
    }
}

/// The `outbox` event of an entry that left the outbox: `sent` (its message came, with
/// `outboxId`), `deleted` unsent, or `left-behind` (its writer no longer holds the account: kept
/// on this computer, never sent as anyone else).
struct OutboxLeftBody: Encodable, Sendable {
    var outboxId: Int64
    var account: String
    var chatId: Int64
    var state: String

    /// The same object as the encoder writes, by hand (one per message sent).
    func json() -> [UInt8] {
        var json = JSONWriter(capacity: 96)
        json.raw(#"{"outboxId":"#); json.number(outboxId)
        json.raw(#","account":"#); json.string(account)
        json.raw(#","chatId":"#); json.number(chatId)
        json.raw(#","state":"#); json.string(state)
        json.raw("}")
        return json.bytes
    }
}
