import CShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A request for `HTTPClient`.
public struct HTTPClientRequest: Sendable {
    public var method: String
    /// Origin-form target: `/path?query`.
    public var target: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// A response larger than this (head and body) fails with `HTTPClientError.tooLarge`.
    public var maxResponseBytes: Int

    public init(method: String, target: String, headers: HTTPHeaders = [:], body: [UInt8] = [], maxResponseBytes: Int = 64 * 1024 * 1024) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.maxResponseBytes = maxResponseBytes
    }
}

/// Why a client request failed.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host name did not resolve.
    case resolution(String)
    /// The connection could not be made (refused, unreachable, ...).
    case connect(String)
    /// The connection broke: reset, or closed before a complete response.
    case connectionLost(String)
    /// The response was not HTTP we can read.
    case malformedResponse(String)
    /// The response was larger than the request's `maxResponseBytes`.
    case tooLarge(limit: Int)
    case timedOut
    case cancelled

    public var description: String {
        switch self {
        case .resolution(let detail): "cannot resolve: \(detail)"
        case .connect(let detail): "cannot connect: \(detail)"
        case .connectionLost(let detail): "connection lost: \(detail)"
        case .malformedResponse(let detail): "malformed response: \(detail)"
        case .tooLarge(let limit): "response larger than \(limit) bytes"
        case .timedOut: "timed out"
        case .cancelled: "cancelled"
        }
    }
}

/// A small HTTP/1.1 client on the same epoll loop as the server: connections kept alive between
/// requests to the same address (`IdleConnections`), a deadline per request, and Task cancellation
/// that closes the socket. Plain `http://` only.
public final class HTTPClient: Sendable {
    let loop: EventLoop
    let idleConnections: IdleConnections

    /// `keepIdleFor`: how long a kept connection may wait for its next request (20 s by default,
    /// under servers' usual keep-alive timeouts).
    public init(loop: EventLoop, keepIdleFor: Duration = .seconds(20)) {
        self.loop = loop
        self.idleConnections = IdleConnections(loop: loop, maxIdle: keepIdleFor)
    }

    /// How many connections are kept open for the next request now (tests).
    public func keptConnections() async -> Int {
        (try? await loop.submit { [idleConnections] in idleConnections.count }) ?? 0
    }

    /// Sends `request` to `host:port` and returns the whole response, or throws within `timeout`.
    public func send(_ request: HTTPClientRequest, host: String, port: Int, timeout: Duration) async throws(HTTPClientError) -> HTTPClientResponse {
        let address = try await Self.resolve(host: host, port: port)
        let bytes = Self.wireBytes(of: request, host: host, port: port)
        // A request that may not arrive twice (a POST without an `Idempotency-Key`) never goes out
        // on a kept connection, where a server's close at the same moment would make it go again.
        let mayRepeat = switch request.method {
        case "GET", "HEAD", "OPTIONS", "PUT", "DELETE": true
        default: request.headers["Idempotency-Key"] != nil
        }
        let exchange = ClientExchange(loop: loop, address: address, addressKey: "\(host):\(port)", idleConnections: idleConnections,
                                      request: bytes, expectsBody: request.method != "HEAD", mayRepeat: mayRepeat, timeout: timeout,
                                      maxResponseBytes: request.maxResponseBytes)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPClientResponse, any Error>) in
                    exchange.start(continuation)
                }
            } onCancel: {
                exchange.cancel()
            }
        } catch let error as HTTPClientError {
            throw error
        } catch {
            throw .connectionLost("\(error)")
        }
    }

    /// The request as it goes on the wire, head and body in one array: `Host` (an IPv6 address in
    /// brackets), the caller's fields but the three the client writes itself (`Host`,
    /// `Content-Length`, `Connection`), and `Content-Length` for a body or a POST or PUT.
    static func wireBytes(of request: HTTPClientRequest, host: String, port: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + request.body.count)
        func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
        append(request.method)
        append(" ")
        append(request.target)
        append(" HTTP/1.1\r\nHost: ")
        if host.utf8.contains(UInt8(ascii: ":")) {
            append("[")
            append(host)
            append("]")
        } else {
            append(host)
        }
        append(":")
        append(String(port))
        append("\r\n")
        for (name, value) in request.headers
        where !name.equalsIgnoringASCIICase("Host") && !name.equalsIgnoringASCIICase("Content-Length") && !name.equalsIgnoringASCIICase("Connection") {
            append(name)
            append(": ")
            append(value)
            append("\r\n")
        }
        if !request.body.isEmpty || request.method == "POST" || request.method == "PUT" {
            append("Content-Length: ")
            append(String(request.body.count))
            append("\r\n")
        }
        append("\r\n")
        bytes.append(contentsOf: request.body)
        return bytes
    }

    /// Numeric addresses resolve at once; names are looked up off the loop and off the
    /// cooperative pool, since `getaddrinfo` blocks.
    static func resolve(host: String, port: Int) async throws(HTTPClientError) -> ResolvedAddress {
        let lookup = host == "localhost" ? "127.0.0.1" : host
        if let numeric = ResolvedAddress(numeric: lookup, port: port) { return numeric }
        let result: Result<ResolvedAddress, HTTPClientError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: ResolvedAddress.lookUp(lookup, port: port))
            }
        }
        return try result.get()
    }
}

/// A socket address ready for `connect`.
struct ResolvedAddress: Sendable {
    var storage: sockaddr_storage
    var length: socklen_t
    var family: Int32

    init?(numeric host: String, port: Int) {
        var storage = sockaddr_storage()
        var address4 = sockaddr_in()
        var address6 = sockaddr_in6()
        let trimmed = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if inet_pton(AF_INET, trimmed, &address4.sin_addr) == 1 {
            address4.sin_family = sa_family_t(AF_INET)
            address4.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address4) { target.copyMemory(from: $0) }
            }
            self.init(storage: storage, length: socklen_t(MemoryLayout<sockaddr_in>.size), family: AF_INET)
        } else if inet_pton(AF_INET6, trimmed, &address6.sin6_addr) == 1 {
            address6.sin6_family = sa_family_t(AF_INET6)
            address6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address6) { target.copyMemory(from: $0) }
            }
            self.init(storage: storage, length: socklen_t(MemoryLayout<sockaddr_in6>.size), family: AF_INET6)
        } else {
            return nil
        }
    }

    init(storage: sockaddr_storage, length: socklen_t, family: Int32) {
        self.storage = storage
        self.length = length
        self.family = family
    }

    static func lookUp(_ host: String, port: Int) -> Result<ResolvedAddress, HTTPClientError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            return .failure(.resolution("\(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(results) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return .success(ResolvedAddress(storage: storage, length: first.pointee.ai_addrlen, family: first.pointee.ai_family))
    }
}
