import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client for tests: sends exact bytes and reads exact responses, so tests can
/// speak malformed HTTP that no real client library would send. Every read has a timeout, so a
/// server bug fails the test instead of hanging it. A test uses one client from one thread at a
/// time (handing it to a helper thread and waiting), which is what the unchecked `Sendable` promises.
public final class RawClient: @unchecked Sendable {
    public struct Response: Sendable {
        public var status: Int
        public var reason: String
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public enum ClientError: Error {
        case connectFailed(Int32)
        case timedOut
        case closedByPeer
        case malformedResponse(String)
    }

    public let fd: Int32
    private var buffer: [UInt8] = []

    public init(port: Int, host: String = "127.0.0.1", timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw ClientError.connectFailed(error)
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
    }

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { throw ClientError.closedByPeer }
            offset += sent
        }
    }

    /// Closes our side of the connection entirely.
    public func disconnect() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Shuts the sending side only, as `printf ... | nc -N` does: the server reads the end of the
    /// stream, and the answer can still be read.
    public func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return
        }
        if count == 0 { throw ClientError.closedByPeer }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw ClientError.timedOut }
        throw ClientError.closedByPeer
    }

    /// Reads one response; `bodyExpected: false` for answers to HEAD.
    public func readResponse(bodyExpected: Bool = true) throws -> Response {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = Self.find([0x0D, 0x0A, 0x0D, 0x0A], in: buffer)
            if headEnd == nil { try fill() }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeSubrange(0..<(headEnd! + 4))
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
            throw ClientError.malformedResponse(statusLine)
        }
        let headers = lines.map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        var response = Response(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: [])
        guard bodyExpected, status >= 200, status != 204, status != 304 else { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            response.body = try take(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            response.body = try readChunkedBody()
        }
        return response
    }

    /// The pieces of a chunked body, joined (RFC 9112 section 7.1); no trailer fields expected.
    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = String(decoding: try line(), as: UTF8.self)
            guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                throw ClientError.malformedResponse("chunk size \(sizeLine.debugDescription)")
            }
            if size == 0 {
                guard try line().isEmpty else { throw ClientError.malformedResponse("trailer fields") }
                return body
            }
            body += try take(size)
            guard try line().isEmpty else { throw ClientError.malformedResponse("a chunk longer than its size") }
        }
    }

    private func line() throws -> [UInt8] {
        while true {
            if let end = Self.find([0x0D, 0x0A], in: buffer) {
                defer { buffer.removeSubrange(0..<(end + 2)) }
                return Array(buffer[0..<end])
            }
            try fill()
        }
    }

    private func take(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        defer { buffer.removeSubrange(0..<count) }
        return Array(buffer[0..<count])
    }

    /// Everything the server sends until it closes the connection (a body framed by the close).
    public func readUntilClose() throws -> [UInt8] {
        while true {
            do {
                try fill()
            } catch ClientError.closedByPeer {
                defer { buffer.removeAll() }
                return buffer
            }
        }
    }

    /// Reads and throws away at most `count` bytes of what arrives, returning how many were read.
    public func discard(upTo count: Int) throws -> Int {
        if buffer.isEmpty { try fill() }
        let taken = min(count, buffer.count)
        buffer.removeSubrange(0..<taken)
        return taken
    }

    /// True when the server has closed the connection (reads end of stream) within the timeout.
    public func waitForClose() -> Bool {
        while true {
            do {
                try fill()
                buffer.removeAll()
            } catch ClientError.closedByPeer {
                return true
            } catch {
                return false
            }
        }
    }

    /// True when a response's bytes are already waiting, without blocking.
    public func hasPendingBytes() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count > 0 || !buffer.isEmpty
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index..<index + needle.count].elementsEqual(needle) {
            return index
        }
        return nil
    }
}

extension RawClient {
    /// Runs blocking client code on its own thread, so it never starves the cooperative pool that
    /// the server's tasks run on.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}

/// A GET request with the headers every test needs.
public func rawGet(_ path: String, host: String, extraHeaders: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(extraHeaders)\r\n"
}
