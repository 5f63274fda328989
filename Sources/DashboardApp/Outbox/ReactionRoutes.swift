import Engine
import HTTPCore
import Store
import Upstream

/// Reactions from the page (CONTRACT section 11), through the outbox as messages go:
/// - `PUT /api/chats/{chatId}/messages/{id}/reactions/{key}?account=...` gives the account's
///   reaction `key` (percent-encoded) to the message;
/// - `DELETE` of the same path takes it back.
///
/// Both answer 202 `{"outboxId", "state"}` with the entry that will do it (the same entry while
/// the same wish waits), or 204 when the reaction already is as asked (nothing goes upstream; a
/// reaction taken back before it went is deleted unsent). The key names the wish, so no
/// `Idempotency-Key` is needed: the same request again changes nothing.
struct ReactionRoutes {
    let outboxes: Outboxes

    func register(in router: inout Router) {
        for (method, adding) in [("PUT", true), ("DELETE", false)] {
            router.add(method, "/api/chats/{chat}/messages/{id}/reactions/{key}") { request, parameters, _ in
                try await react(request, parameters, adding: adding)
            }
        }
    }

    /// What a request asks for, or the problem with it.
    struct Wish: Equatable {
        var account: AccountRole
        var chat: Int64
        var message: Int64
        var key: String

        init(_ request: HTTPRequest, _ parameters: RouteParameters) throws(Problem) {
            account = try QueryParameters(request).account()
            guard let chat = parameters["chat"].flatMap({ Int64($0) }), let message = parameters["id"].flatMap({ Int64($0) }) else {
                throw Problem(status: .badRequest, detail: "The chat id and the message id must be numbers.")
            }
            let key = parameters["key"] ?? ""
            guard !key.allSatisfy(\.isWhitespace) else { throw Problem(status: .badRequest, detail: "The reaction is empty.") }
            guard key.utf8.count <= UpstreamMessage.maximumReactionKeyBytes else {
                throw Problem(status: .contentTooLarge,
                              detail: "The reaction is \(key.utf8.count) bytes long; at most \(UpstreamMessage.maximumReactionKeyBytes) can be sent.")
            }
            (self.chat, self.message, self.key) = (chat, message, key)
        }
    }

    private func react(_ request: HTTPRequest, _ parameters: RouteParameters, adding: Bool) async throws -> HTTPResponse {
        let wish: Wish
        do throws(Problem) {
            wish = try Wish(request, parameters)
        } catch {
            return error.response
        }
        guard let sender = outboxes.sender(for: wish.account) else {
            return Problem(status: .notFound, detail: "Nothing can be sent from the \(wish.account) account of this chat server.").response
        }
        let admission: ReactionAdmission
        do {
            admission = try await sender.react(wish.key, adding: adding, to: wish.message, in: wish.chat)
        } catch {
            return Problem.storageError("The reaction cannot be kept for sending", writing: true).response
        }
        switch admission {
        case .queued(let entry), .repeated(let entry):
            return try JSONResponse.make(OutboxRoutes.Accepted(outboxId: entry.id, state: entry.state.rawValue), status: .accepted)
        case .already, .unsentReaction:
            return HTTPResponse(status: .noContent)
        case .noSuchMessage:
            return Problem(status: .notFound, detail: "The \(wish.account) account has no message \(wish.message) in chat \(wish.chat).").response
        case .notSupported:
            return Problem(status: .conflict, detail: "This chat server has no reactions: only messages can be sent to it.").response
        case .archived:
            return Problem(status: .conflict, detail: "The account is no longer in this chat, so nothing can be sent there.").response
        case .encrypted:
            return Problem(status: .conflict,
                           detail: "This room is end-to-end encrypted, and this dashboard cannot encrypt: it sends no reaction into it. React in Element or another Matrix app.").response
        }
    }
}
