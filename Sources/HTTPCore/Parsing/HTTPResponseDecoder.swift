import Foundation

/// A response as the client reads it.
public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Turns the bytes of a response into status, headers and body: `Content-Length`, chunked, or
/// (for a connection the server closes) everything up to the end of the stream. A plain state
/// machine like the request decoder; the client feeds it and tells it when the stream ended.
struct HTTPResponseDecoder {
    enum Failure: Error, Equatable {
        case malformed(String)
        case tooLarge
        /// The connection ended before the response was complete.
        case truncated
    }

    private enum Phase {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private var buffer: [UInt8] = []
    private var phase = Phase.head
    private var isHTTP11 = false
    /// The body ran until the server closed the connection.
    private var endedByClose = false
    private var status = 0
    private var headers = HTTPHeaders()
    private var body: [UInt8] = []
    private let maxBytes: Int
    /// HEAD answers and 1xx/204/304 carry no body whatever their headers say.
    private let expectsBody: Bool

    init(maxBytes: Int = 64 * 1024 * 1024, expectsBody: Bool = true) {
        self.maxBytes = maxBytes
        self.expectsBody = expectsBody
    }

    /// After a complete response: whether its connection can carry the next request (HTTP/1.1
    /// keep-alive). Only when the body's end was known from its framing, the server did not say
    /// `Connection: close`, and nothing came after the response.
    var leavesConnectionOpen: Bool {
        guard case .done = phase, isHTTP11, !endedByClose, buffer.isEmpty else { return false }
        return !(headers["Connection"]?.containsHeaderToken("close") ?? false)
    }

    /// Feeds bytes; returns the response once complete.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> HTTPClientResponse? {
        buffer.append(contentsOf: bytes)
        if buffer.count + body.count > maxBytes { throw .tooLarge }
        return try advance()
    }

    /// The server closed the stream: complete when the body runs until close, else truncated.
    mutating func finish() throws(Failure) -> HTTPClientResponse {
        if case .untilClose = phase {
            body.append(contentsOf: buffer)
            buffer = []
            phase = .done
            endedByClose = true
            return HTTPClientResponse(status: status, headers: headers, body: body)
        }
        throw .truncated
    }

    private mutating func advance() throws(Failure) -> HTTPClientResponse? {
        while true {
            switch phase {
            case .head:
                guard let end = Self.find([13, 10, 13, 10], in: buffer) else { return nil }
                try parseHead(Array(buffer[0..<end]))
                buffer.removeSubrange(0..<(end + 4))
                if status >= 100 && status < 200 {
                    // An interim response (100 Continue): the real one follows.
                    headers = HTTPHeaders()
                    continue
                }
                if !expectsBody || status == 204 || status == 304 {
                    phase = .done
                } else if let coding = headers["Transfer-Encoding"] {
                    guard coding.containsHeaderToken("chunked") else { throw .malformed("transfer coding \(coding)") }
                    phase = .chunkSize
                } else if let length = try contentLength() {
                    if length > maxBytes { throw .tooLarge }
                    phase = .fixed(remaining: length)
                } else {
                    phase = .untilClose
                }
            case .fixed(let remaining):
                let left = takeBody(remaining)
                guard left == 0 else {
                    phase = .fixed(remaining: left)
                    return nil
                }
                phase = .done
            case .chunkSize:
                guard let end = Self.find([13, 10], in: buffer) else { return nil }
                let line = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeSubrange(0..<(end + 2))
                let sizeText = line.split(separator: ";", maxSplits: 1).first.map(String.init)?.trimmingHTTPWhitespace() ?? ""
                guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.utf8.allSatisfy(isHexDigitByte),
                      let size = Int(sizeText, radix: 16) else { throw .malformed("chunk size \(line.debugDescription)") }
                if size > maxBytes - body.count { throw .tooLarge }
                phase = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let left = takeBody(remaining)
                guard left == 0 else {
                    phase = .chunkData(remaining: left)
                    return nil
                }
                phase = .chunkDataEnd
            case .chunkDataEnd:
                guard buffer.count >= 2 else { return nil }
                guard buffer[0] == 13, buffer[1] == 10 else { throw .malformed("chunk without CRLF") }
                buffer.removeSubrange(0..<2)
                phase = .chunkSize
            case .trailers:
                guard let end = Self.find([13, 10], in: buffer) else { return nil }
                buffer.removeSubrange(0..<(end + 2))
                if end == 0 { phase = .done }
            case .untilClose:
                body.append(contentsOf: buffer)
                buffer = []
                return nil
            case .done:
                return HTTPClientResponse(status: status, headers: headers, body: body)
            }
        }
    }

    /// Moves up to `remaining` buffered bytes into the body; returns how many are still to come.
    private mutating func takeBody(_ remaining: Int) -> Int {
        let take = min(remaining, buffer.count)
        body.append(contentsOf: buffer[0..<take])
        buffer.removeSubrange(0..<take)
        return remaining - take
    }

    /// The head is read as strictly as the request decoder reads requests: a server we did not
    /// write (a homeserver, a proxy, a captive portal) may send anything. Read as bytes, line by
    /// line: the Foundation string splitting it replaced was 5 % of the CPU per message at N = 1.
    private mutating func parseHead(_ head: [UInt8]) throws(Failure) {
        var lines = Self.lines(head)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        let version = parts.first.map { String(decoding: $0, as: UTF8.self) }
        let codeDigits = parts.count >= 2 ? parts[1] : []
        guard parts.count >= 2, version == "HTTP/1.1" || version == "HTTP/1.0", codeDigits.count == 3,
              codeDigits.allSatisfy({ (0x30...0x39).contains($0) }),
              let code = Int(String(decoding: codeDigits, as: UTF8.self)), (100...599).contains(code) else {
            throw .malformed("status line \(String(decoding: statusLine, as: UTF8.self).debugDescription)")
        }
        status = code
        isHTTP11 = version == "HTTP/1.1"
        headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw .malformed("header line \(String(decoding: line, as: UTF8.self).debugDescription)")
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
                throw .malformed("header name \(String(decoding: name, as: UTF8.self).debugDescription)")
            }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw .malformed("control character in the value of \(String(decoding: name, as: UTF8.self))")
            }
            headers.add(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
    }

    /// The head's lines, split at CRLF only (a lone CR or LF stays in its line and fails the checks).
    private static func lines(_ head: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0, index = 0
        while index + 1 < head.count {
            if head[index] == 13 && head[index + 1] == 10 {
                lines.append(head[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(head[start...])
        return lines
    }

    /// `Content-Length`: plain digits; several fields must agree (RFC 9112 section 6.3).
    private func contentLength() throws(Failure) -> Int? {
        let values = headers.values(for: "Content-Length").flatMap { $0.split(separator: ",").map { String($0).trimmingHTTPWhitespace() } }
        guard let first = values.first else { return nil }
        guard values.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 18,
              first.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let length = Int(first) else {
            throw .malformed("Content-Length \(values.joined(separator: ", "))")
        }
        return length
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
