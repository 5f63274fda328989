import Foundation
import HTTPCore
import Recovery
import Upstream

/// `POST /api/errors/{id}/attempts` with `{"option": "<id>"}` and an `Idempotency-Key`; an option
/// that asks for a password (`sign-in`) takes it as `"password"` in the same body.
struct ErrorRoutes {
    let services: DashboardServices

    func register(in router: inout Router) {
        router.add("POST", "/api/errors/{id}/attempts") { request, parameters, _ in
            try await attempt(request, errorID: parameters["id"] ?? "")
        }
    }

    private func attempt(_ request: HTTPRequest, errorID: String) async throws -> HTTPResponse {
        guard let key = request.headers["Idempotency-Key"], !key.isEmpty, key.utf8.count <= 200 else {
            return Problem(.idempotencyKeyMissing, title: "Idempotency-Key required", status: .badRequest,
                           detail: "Send an Idempotency-Key header: a new one for each attempt asked for, the same one when that request is retried.").response
        }
        struct Body: Decodable { var option: String; var password: String? }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            return Problem(status: .badRequest, detail: "The body must be {\"option\": \"<option id>\"}.").response
        }
        var input = AttemptInput()
        if body.option == OptionID.signIn.rawValue, services.upstream.signIn != nil {
            guard let password = body.password, !password.isEmpty, password.utf8.count <= 1024 else {
                return Problem(status: .badRequest, detail: "Signing in again needs the account's password as \"password\".").response
            }
            // It travels inside the attempt: used only if the registry accepts the attempt.
            input.password = password
        }
        let answer: ErrorRegistry.AttemptAnswer
        do {
            answer = try await services.registry.attempt(errorID: errorID, postedOption: body.option, idempotencyKey: key, input: input)
        } catch {
            switch error {
            case .unknownError:
                return Problem(status: .notFound, detail: "There is no open error with id \(errorID.debugDescription).").response
            case .unknownOption:
                return Problem(.unknownOption, title: "Unknown option", status: .unprocessableContent,
                               detail: "This error has no option \(body.option.debugDescription).").response
            case .keyReusedForAnotherOption:
                return Problem(.idempotencyKeyReused, title: "Idempotency-Key already used", status: .unprocessableContent,
                               detail: "This key was used for another option; make a new key for each attempt.").response
            case .attemptRunning:
                return Problem(.attemptRunning, title: "An attempt is already running", status: .conflict,
                               detail: "Wait for the running attempt of this error to finish.").response
            }
        }
        return try JSONResponse.make(AttemptBody(answer))
    }
}

struct AttemptBody: Encodable, Sendable {
    var attemptId: String
    var status: String
    var error: ErrorBody?
    /// What a recovered attempt did, in words ("Added 10 MB of storage: ..."), when there is more to say.
    var summary: String?

    init(_ answer: ErrorRegistry.AttemptAnswer) {
        attemptId = answer.attemptID
        status = answer.status.rawValue
        error = answer.error.map { ErrorBody($0) }
        summary = answer.summary
    }

    enum CodingKeys: String, CodingKey { case attemptId, status, error, summary }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(attemptId, forKey: .attemptId)
        try container.encode(status, forKey: .status)
        try container.encode(error, forKey: .error)
        try container.encodeIfPresent(summary, forKey: .summary)
    }
}

/// An `attempt` event: `running` when it starts, then `recovered`, `failed` (with the reason) or
/// `dismissed` (set aside as the person asked: Not now, Stop syncing; with what was done).
struct AttemptEvent: Encodable, Sendable {
    var errorId: String
    /// The error's kind, so a window that did not make the attempt can say what it did.
    var type: String
    var attemptId: String
    var option: String
    var title: String
    var status: String
    var reason: String?
    var summary: String?
}
