/// A response a responder returns; the server adds `Content-Length`, `Date` and `Connection`.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Written now, held for later, or streamed.
    public var disposition: Disposition = .normal
    /// The whole response, encoded once for any number of keep-alive HTTP/1.1 connections
    /// (see ``precomposed()``); a fan-out then writes the same bytes to every client.
    public private(set) var encoded: [UInt8]?

    public enum Disposition: Sendable, Equatable {
        /// Write the response; keep the connection if the request allows.
        case normal
        /// The connection waits for `HeldResponse` to be completed and writes that instead.
        case held(HeldResponse)
        /// The head is written now and the body as its producer makes it (`body` is ignored).
        case streamed(StreamedBody)

        public static func == (lhs: Disposition, rhs: Disposition) -> Bool {
            switch (lhs, rhs) {
            case (.normal, .normal): true
            case let (.held(a), .held(b)): a === b
            default: false  // two streamed bodies are never the same
            }
        }
    }

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// This response with its bytes encoded once, for writing the same answer to many connections.
    /// Connections that must close, HTTP/1.0 and HEAD requests still get their own encoding.
    public func precomposed() -> HTTPResponse {
        var encoder = ResponseEncoder()
        var copy = self
        copy.encoded = encoder.encode(self, omitBody: false, close: false).flatMap { $0 }
        return copy
    }

    /// The answer comes later through `held`; the responder's task can end now.
    public static func held(_ held: HeldResponse) -> HTTPResponse {
        var response = HTTPResponse(status: .ok)
        response.disposition = .held(held)
        return response
    }

    /// A response whose body `produce` writes while it is sent (see ``StreamedBody``).
    public static func streamed(status: HTTPStatus = .ok, headers: HTTPHeaders,
                                _ produce: @escaping @Sendable (BodyWriter) async throws -> Void) -> HTTPResponse {
        var response = HTTPResponse(status: status, headers: headers)
        response.disposition = .streamed(StreamedBody(produce))
        return response
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }
}
