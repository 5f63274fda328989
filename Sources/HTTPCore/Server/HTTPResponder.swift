/// The seam between the HTTP core and an application: a request in, a response out.
///
/// The server calls it in a task per request. Holding a request open (a long-poll) is simply not
/// returning yet: suspend on a ``HeldResponse`` or any other async work, no thread is blocked.
/// When the client disconnects first, the server cancels that task, so a holder learns it through
/// ordinary task cancellation.
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse

    /// An answer made on the event loop's thread, without a task, or nil to take the async path.
    /// For requests that need no waiting (a static file, a long-poll that parks or answers at
    /// once); it must never block. The default takes the async path for everything.
    func respondOnLoop(to request: HTTPRequest, context: RequestContext) -> HTTPResponse?

    /// The last step every answer to `request` takes before it is written, whatever made it:
    /// `respond`, `respondOnLoop`, a held answer, or the core itself (a 400, 408, 503, ...: then
    /// `request` is nil). Headers every answer must carry belong here. Asked when the request
    /// arrives, so a held request keeps only this (shared constants cost a parked poll nothing).
    /// An answer already encoded (``HTTPResponse/precomposed()``) is written as it is: whoever
    /// composed it finished it. The default does nothing.
    func finishing(for request: HTTPRequest?) -> ResponseFinishing
}

/// Headers set on an answer just before it is written (replacing any of the same name).
public struct ResponseFinishing: Sendable {
    public let headers: HTTPHeaders

    public init(setting headers: HTTPHeaders) {
        self.headers = headers
    }

    public static let none = ResponseFinishing(setting: [:])

    public func apply(to response: inout HTTPResponse) {
        for (name, value) in headers {
            response.headers.set(name, value)
        }
    }
}

extension HTTPResponder {
    public func respondOnLoop(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        nil
    }

    public func finishing(for request: HTTPRequest?) -> ResponseFinishing { .none }
}

/// Facts about the connection a request arrived on.
public struct RequestContext: Sendable {
    public let remoteAddress: SocketAddress
    public let localAddress: SocketAddress
    /// Unique per connection for the life of the server; requests of one keep-alive connection share it.
    public let connectionID: UInt64

    public init(remoteAddress: SocketAddress, localAddress: SocketAddress, connectionID: UInt64) {
        self.remoteAddress = remoteAddress
        self.localAddress = localAddress
        self.connectionID = connectionID
    }
}

/// A responder made from a closure; handy in tests.
public struct ClosureResponder: HTTPResponder {
    private let body: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse

    public init(_ body: @escaping @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) {
        self.body = body
    }

    public func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        try await body(request, context)
    }
}
