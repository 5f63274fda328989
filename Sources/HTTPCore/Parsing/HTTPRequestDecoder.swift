#if canImport(Glibc)
import Glibc
#endif

/// Size limits the decoder enforces while reading a request.
public struct HTTPLimits: Sendable {
    /// Request line plus header fields plus the blank line; beyond it the client gets 431.
    public var maxHeadBytes: Int
    /// Declared `Content-Length`; beyond it the client gets 413.
    public var maxBodyBytes: Int
    /// Number of header fields; beyond it the client gets 431.
    public var maxHeaderCount: Int

    public init(maxHeadBytes: Int = 16 * 1024, maxBodyBytes: Int = 64 * 1024, maxHeaderCount: Int = 100) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderCount = maxHeaderCount
    }
}

/// Turns the bytes of one connection into requests, incrementally.
///
/// A plain state machine with no I/O: feed it bytes with ``append(_:)``, then call ``next()`` until
/// it returns nil. It is strict where leniency enables request smuggling (RFC 9112 sections 2.2,
/// 5 and 6.3): lines end in CRLF, no obs-fold, no whitespace before the colon, one `Content-Length`
/// of digits only, never together with `Transfer-Encoding`.
public struct HTTPRequestDecoder {
    public enum Event: Sendable {
        /// A complete request, head and body.
        case request(HTTPRequest)
        /// The head asked for `100 Continue` and its body has not arrived yet.
        case continueExpected
    }

    public let limits: HTTPLimits

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Where the search for the blank line resumes, so a head that trickles in is scanned once.
    private var scanIndex = 0
    private var awaitingBody: AwaitingBody?

    private struct AwaitingBody {
        var request: HTTPRequest
        var length: Int
        var expectsContinue: Bool
    }

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Bytes received but not yet returned as part of a request.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// True while part of a request has arrived but not all of it.
    public var hasPartialRequest: Bool { bufferedByteCount > 0 || awaitingBody != nil }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    /// The next event, or nil until more bytes arrive. After an error the connection must close.
    public mutating func next() throws(HTTPParseError) -> Event? {
        if awaitingBody == nil {
            guard let request = try nextHead() else { return nil }
            let length = try bodyLength(of: request)
            if length == 0 {
                return .request(request)
            }
            let expectsContinue = request.headers["Expect"] != nil
            awaitingBody = AwaitingBody(request: request, length: length, expectsContinue: expectsContinue)
        }
        guard var pending = awaitingBody else { return nil }
        if bufferedByteCount >= pending.length {
            pending.request.body = Array(buffer[readIndex..<readIndex + pending.length])
            consume(pending.length)
            awaitingBody = nil
            return .request(pending.request)
        }
        if pending.expectsContinue && bufferedByteCount == 0 {
            awaitingBody?.expectsContinue = false
            return .continueExpected
        }
        return nil
    }

    private mutating func consume(_ count: Int) {
        readIndex += count
        if readIndex == buffer.count {
            // Release the memory: ten thousand idle keep-alive connections must stay cheap.
            buffer = []
            readIndex = 0
        } else if readIndex > 4096 && readIndex * 2 > buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        scanIndex = readIndex
    }

    private mutating func nextHead() throws(HTTPParseError) -> HTTPRequest? {
        // RFC 9112 section 2.2: a server SHOULD ignore at least one empty line before a request-line.
        while bufferedByteCount >= 2, buffer[readIndex] == 0x0D, buffer[readIndex + 1] == 0x0A {
            consume(2)
        }
        guard let headEnd = try findBlankLine() else {
            if bufferedByteCount > limits.maxHeadBytes {
                throw HTTPParseError(.headTooLarge, "no end of head within \(limits.maxHeadBytes) bytes")
            }
            return nil
        }
        let headLength = headEnd + 4 - readIndex
        if headLength > limits.maxHeadBytes {
            throw HTTPParseError(.headTooLarge, "head of \(headLength) bytes")
        }
        let request = try buffer.withUnsafeBufferPointer { bytes throws(HTTPParseError) in
            try HeadParser(bytes: UnsafeBufferPointer(rebasing: bytes[readIndex..<headEnd]), limits: limits).parse()
        }
        consume(headLength)
        return request
    }

    /// The index of the CR in the first `CRLF CRLF` after `readIndex`, or nil. A LF without its CR
    /// fails at once rather than leaving the client waiting for a timeout.
    private mutating func findBlankLine() throws(HTTPParseError) -> Int? {
        let start = max(readIndex, scanIndex)
        let result: Int?? = buffer.withUnsafeBufferPointer { bytes in
            // From line feed to line feed with `memchr` (vectorised), not byte by byte: every head
            // of every poll comes through here.
            var index = start
            while let lineFeed = bytes.index(of: 0x0A, from: index) {
                guard lineFeed > readIndex, bytes[lineFeed - 1] == 0x0D else { return .some(nil) }
                if lineFeed - readIndex >= 3, bytes[lineFeed - 2] == 0x0A, bytes[lineFeed - 3] == 0x0D {
                    return lineFeed - 3
                }
                index = lineFeed + 1
            }
            return nil
        }
        switch result {
        case .some(.some(let found)):
            return found
        case .some(.none):
            throw HTTPParseError(.malformed, "bare LF")
        case .none:
            scanIndex = buffer.count
            return nil
        }
    }

    private func bodyLength(of request: HTTPRequest) throws(HTTPParseError) -> Int {
        let lengths = request.headers.values(for: "Content-Length")
        let transferEncodings = request.headers.values(for: "Transfer-Encoding")
        if !transferEncodings.isEmpty {
            if !lengths.isEmpty {
                throw HTTPParseError(.malformed, "both Transfer-Encoding and Content-Length")
            }
            if request.version == .http1_0 {
                throw HTTPParseError(.malformed, "Transfer-Encoding in an HTTP/1.0 request")
            }
            let codings = transferEncodings.joined(separator: ",")
            let last = codings.split(separator: ",").last.map { String($0).trimmingHTTPWhitespace() } ?? ""
            if last.equalsIgnoringASCIICase("chunked") {
                throw HTTPParseError(.lengthRequired, "chunked request bodies are not accepted")
            }
            throw HTTPParseError(.notImplemented, "transfer coding \(codings)")
        }
        if let expect = request.headers["Expect"], !expect.equalsIgnoringASCIICase("100-continue") {
            throw HTTPParseError(.expectationFailed, "Expect: \(expect)")
        }
        guard let text = lengths.first else { return 0 }
        if lengths.count > 1 {
            throw HTTPParseError(.malformed, "\(lengths.count) Content-Length fields")
        }
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let length = Int(text)
        else {
            throw HTTPParseError(.malformed, "Content-Length \(text.debugDescription)")
        }
        if length > limits.maxBodyBytes {
            throw HTTPParseError(.bodyTooLarge, "Content-Length \(length) over \(limits.maxBodyBytes)")
        }
        return length
    }
}

/// Parses one request head (request line and fields, without the final blank line).
private struct HeadParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: HTTPLimits

    func parse() throws(HTTPParseError) -> HTTPRequest {
        // A first pass checks every line ending and counts the lines; the second reads them. Two
        // passes over a few hundred bytes cost less than the array of line ranges one pass needs.
        let lineCount = try countLines()
        if lineCount - 1 > limits.maxHeaderCount {
            throw HTTPParseError(.headTooLarge, "\(lineCount - 1) header fields")
        }
        var lineEnd = endOfLine(from: 0)
        var request = try parseRequestLine(0..<lineEnd)
        var headers = HTTPHeaders(reservingCapacity: lineCount - 1)  // one allocation, not one per doubling
        var hostCount = 0
        while lineEnd < bytes.count {
            let lineStart = lineEnd + 2
            lineEnd = endOfLine(from: lineStart)
            let (name, value) = try parseField(lineStart..<lineEnd)
            if name.equalsIgnoringASCIICase("Host") { hostCount += 1 }
            headers.add(name, value)
        }
        if hostCount > 1 {
            throw HTTPParseError(.malformed, "\(hostCount) Host fields")
        }
        // Every HTTP/1.1 request names its Host, an absolute-form one too (RFC 9112 3.2); the
        // target's authority is kept beside it, for servers that check where a request is meant for.
        if hostCount == 0 && request.request.version == .http1_1 {
            throw HTTPParseError(.malformed, "HTTP/1.1 request without Host")
        }
        request.request.absoluteFormAuthority = request.absoluteFormAuthority
        request.request.headers = headers
        return request.request
    }

    /// How many lines the head has; throws at a CR without its LF. (A LF without its CR never gets
    /// here: the decoder refuses it while it looks for the head's end.)
    private func countLines() throws(HTTPParseError) -> Int {
        var lines = 1
        var index = 0
        while let carriageReturn = bytes.index(of: 0x0D, from: index) {
            guard carriageReturn + 1 < bytes.count, bytes[carriageReturn + 1] == 0x0A else {
                throw HTTPParseError(.malformed, "bare CR")
            }
            lines += 1
            index = carriageReturn + 2
        }
        return lines
    }

    /// The index of the CR that ends the line starting at `start`, or the end of the head
    /// (line endings were checked by `countLines`).
    private func endOfLine(from start: Int) -> Int {
        bytes.index(of: 0x0D, from: start) ?? bytes.count
    }

    private func parseRequestLine(_ line: Range<Int>) throws(HTTPParseError) -> (request: HTTPRequest, absoluteFormAuthority: String?) {
        guard let firstSpace = bytes[line].firstIndex(of: 0x20),
              let secondSpace = bytes[(firstSpace + 1)..<line.upperBound].firstIndex(of: 0x20),
              !bytes[(secondSpace + 1)..<line.upperBound].contains(0x20)
        else {
            throw HTTPParseError(.malformed, "request line is not METHOD SP TARGET SP VERSION")
        }
        let method = bytes[line.lowerBound..<firstSpace], target = bytes[(firstSpace + 1)..<secondSpace]
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else {
            throw HTTPParseError(.malformed, "method is not a token")
        }
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPParseError(.malformed, "request target has spaces, controls or non-ASCII bytes")
        }
        let httpVersion = try parseVersion(bytes[(secondSpace + 1)..<line.upperBound])
        let methodText = String(decoding: method, as: UTF8.self)
        var targetText = String(decoding: target, as: UTF8.self)
        var authority: String?
        if target.first == UInt8(ascii: "/") {
        } else if targetText == "*" && methodText == "OPTIONS" {
        } else if let split = Self.splitAbsoluteForm(targetText) {
            authority = split.authority
            targetText = split.path
        } else {
            throw HTTPParseError(.malformed, "request target \(targetText.debugDescription) is not origin or absolute form")
        }
        return (HTTPRequest(method: methodText, target: targetText, version: httpVersion), authority)
    }

    private static func splitAbsoluteForm(_ target: String) -> (authority: String, path: String)? {
        let lowered = target.lowercased()
        let schemeLength: Int
        if lowered.hasPrefix("http://") { schemeLength = 7 } else if lowered.hasPrefix("https://") { schemeLength = 8 } else { return nil }
        let rest = target.dropFirst(schemeLength)
        let pathStart = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = String(rest[..<pathStart])
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var path = String(rest[pathStart...])
        if !path.hasPrefix("/") { path = "/" + path }
        return (authority, path)
    }

    private func parseVersion(_ version: Slice<UnsafeBufferPointer<UInt8>>) throws(HTTPParseError) -> HTTPVersion {
        let start = version.startIndex
        guard version.count == 8, version.starts(with: "HTTP/".utf8),
              (0x30...0x39).contains(bytes[start + 5]), bytes[start + 6] == UInt8(ascii: "."), (0x30...0x39).contains(bytes[start + 7])
        else {
            throw HTTPParseError(.malformed, "bad HTTP version")
        }
        switch (bytes[start + 5], bytes[start + 7]) {
        case (UInt8(ascii: "1"), UInt8(ascii: "1")): return .http1_1
        case (UInt8(ascii: "1"), UInt8(ascii: "0")): return .http1_0
        default: throw HTTPParseError(.unsupportedVersion, "HTTP/\(UnicodeScalar(bytes[start + 5])).\(UnicodeScalar(bytes[start + 7]))")
        }
    }

    private func parseField(_ line: Range<Int>) throws(HTTPParseError) -> (String, String) {
        let field = bytes[line]
        guard let first = field.first else {
            throw HTTPParseError(.malformed, "empty header line")
        }
        if first == 0x20 || first == 0x09 {
            throw HTTPParseError(.malformed, "obsolete line folding")
        }
        guard let colon = field.firstIndex(of: UInt8(ascii: ":")) else {
            throw HTTPParseError(.malformed, "header line without a colon")
        }
        let name = field[field.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            throw HTTPParseError(.malformed, "header name is not a token")
        }
        var valueStart = colon + 1
        var valueEnd = field.endIndex
        while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
        while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        let value = bytes[valueStart..<valueEnd]
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTPParseError(.malformed, "control character in a header value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The index of the first `byte` at or after `start`, found with `memchr`; nil if there is none.
    func index(of byte: UInt8, from start: Int) -> Int? {
        guard let base = baseAddress, start < count,
              let found = memchr(base + start, Int32(byte), count - start) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }
}
