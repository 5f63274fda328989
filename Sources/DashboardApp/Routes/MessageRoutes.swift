import Foundation
import HTTPCore
import Store

/// `GET /api/messages?account=...&chat=ID&before=...&limit=N`: stored messages for scroll-back,
/// newest first, one chat's when `chat` is given (CONTRACT sections 5 and 9).
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
        let page: MessagePage
        do {
            page = try await copy.page(of: account, chat: chat, before: before, limit: limit)
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
                    senderName: $0.senderName)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
        // Always present, null at the start of the history.
        try container.encode(nextBefore, forKey: .nextBefore)
    }
}
