import Foundation
import HTTPCore

/// An RFC 9457 problem detail, the body of every API error (`application/problem+json`).
public struct Problem: Sendable, Codable, Equatable {
    /// A URI reference naming the kind of problem; `about:blank` when the status says it all.
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String?

    public init(type: String = "about:blank", title: String, status: HTTPStatus, detail: String? = nil) {
        self.type = type
        self.title = title
        self.status = status.code
        self.detail = detail
    }

    /// A problem whose title is the status's reason phrase.
    public init(status: HTTPStatus, detail: String? = nil) {
        self.init(title: status.reason, status: status, detail: detail)
    }

    public var response: HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(self)).map(Array.init) ?? Array("{}".utf8)
        return HTTPResponse(
            status: HTTPStatus(code: status),
            headers: ["Content-Type": "application/problem+json", "Cache-Control": "no-store"],
            body: body
        )
    }
}

extension Problem {
    static func hostNotAllowed(_ host: String?) -> Problem {
        Problem(.hostNotAllowed, title: "Host not allowed", status: .forbidden,
                detail: "This dashboard answers only requests addressed to its own loopback origin"
                    + (host.map { ", not to \($0.debugDescription)." } ?? "; the request named no host."))
    }

    /// The local copy could not be read (or, with `writing`, written): the store failed under a route.
    static func storageError(_ title: String, writing: Bool = false) -> Problem {
        Problem(.storageError, title: title, status: .internalServerError,
                detail: "The local copy could not be \(writing ? "written" : "read"). Try again in a moment.")
    }

    static func notFound(_ path: Substring) -> Problem {
        Problem(status: .notFound, detail: "There is nothing at \(String(path).debugDescription).")
    }

    static func methodNotAllowed(_ method: String, allowed: [String]) -> Problem {
        Problem(status: .methodNotAllowed,
                detail: "\(method) is not supported here; use \(allowed.joined(separator: " or ")).")
    }
}

/// The API's own problem types: requests it refuses, as opposed to the recoverable errors of
/// syncing (`ProblemKind`).
public enum RequestProblemKind: String, Sendable, CaseIterable {
    case hostNotAllowed = "/problems/host-not-allowed"
    case storageError = "/problems/storage-error"
    case accessToken = "/problems/access-token"
    case crossOrigin = "/problems/cross-origin"
    case unsupportedMediaType = "/problems/unsupported-media-type"
    case csrfToken = "/problems/csrf-token"
    case idempotencyKeyMissing = "/problems/idempotency-key-missing"
    case idempotencyKeyReused = "/problems/idempotency-key-reused"
    case unknownOption = "/problems/unknown-option"
    case attemptRunning = "/problems/attempt-running"
    case searchUnreadable = "/problems/search-unreadable"
}

extension Problem {
    init(_ kind: RequestProblemKind, title: String, status: HTTPStatus, detail: String? = nil) {
        self.init(type: kind.rawValue, title: title, status: status, detail: detail)
    }
}

/// A problem can travel as an error, e.g. in a `Result` of request parsing.
extension Problem: Error {}
