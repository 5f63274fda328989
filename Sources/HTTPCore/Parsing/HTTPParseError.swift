/// Why bytes from a client could not be read as a request, and the status the client gets for it.
public struct HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Syntax the grammar does not allow, or framing that cannot be trusted: 400.
        case malformed
        /// The head exceeds the limit: 431.
        case headTooLarge
        /// The declared body exceeds the limit: 413.
        case bodyTooLarge
        /// A body framed by `Transfer-Encoding: chunked` instead of `Content-Length`: 411.
        case lengthRequired
        /// A transfer coding the server does not implement: 501.
        case notImplemented
        /// A protocol version other than HTTP/1.0 or HTTP/1.1: 505.
        case unsupportedVersion
        /// An `Expect` other than `100-continue`: 417.
        case expectationFailed
    }

    public let kind: Kind
    /// What exactly was wrong; for logs and tests, not for end users.
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var status: HTTPStatus {
        switch kind {
        case .malformed: .badRequest
        case .headTooLarge: .requestHeaderFieldsTooLarge
        case .bodyTooLarge: .contentTooLarge
        case .lengthRequired: .lengthRequired
        case .notImplemented: .notImplemented
        case .unsupportedVersion: .httpVersionNotSupported
        case .expectationFailed: .expectationFailed
        }
    }

    public var description: String { "\(status): \(detail)" }
}
