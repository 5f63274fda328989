/// A body made while it is being sent (an export of a whole store): the producer writes pieces
/// through a ``BodyWriter``, and each write waits while the client is behind, so the server holds
/// a bounded amount of it however long the body is. HTTP/1.1 clients get it chunked; HTTP/1.0
/// clients get it to the end of the connection.
///
/// ```swift
/// var response = HTTPResponse(headers: ["Content-Type": "application/x-ndjson"])
/// response.disposition = .streamed(StreamedBody { writer in
///     for line in lines { try await writer.write(line) }
/// })
/// ```
///
/// A producer that throws cuts the connection: the client sees an unfinished body, never a
/// complete-looking one. When the client leaves, the producer's task is cancelled and its
/// pending write throws.
public struct StreamedBody: Sendable {
    let produce: @Sendable (BodyWriter) async throws -> Void

    public init(_ produce: @escaping @Sendable (BodyWriter) async throws -> Void) {
        self.produce = produce
    }
}

/// Why a write to a streamed body failed: the connection is gone.
public struct BodyWriterClosed: Error, Sendable {}

/// Writes a streamed body's pieces to its connection, on the connection's event loop.
public final class BodyWriter: Sendable {
    private let server: HTTPServer
    private let fd: Int32
    private let connectionID: UInt64

    init(server: HTTPServer, fd: Int32, connectionID: UInt64) {
        self.server = server
        self.fd = fd
        self.connectionID = connectionID
    }

    /// Queues `bytes` and returns once the connection can take more (little is waiting for the
    /// client). Throws ``BodyWriterClosed`` when the client is gone.
    public func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try Task.checkCancellation()
        let server = self.server, fd = self.fd, id = connectionID
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            server.loop.execute {
                guard let connection = server.connection(fd: fd, id: id) else {
                    continuation.resume(throwing: BodyWriterClosed())
                    return
                }
                connection.appendStreamed(bytes, resumeWhenReady: continuation)
            }
        }
    }
}
