/// The protocol version of a request; only HTTP/1.0 and HTTP/1.1 are accepted.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0
    case http1_1
}

/// A complete request: head and body, as the server hands it to a responder.
public struct HTTPRequest: Sendable {
    /// The method token exactly as sent (methods are case-sensitive).
    public var method: String
    /// The request-target in origin form (`/path?query`), or `*`; an absolute-form target
    /// (`http://host/path`) is kept here as its path and query.
    public var target: String {
        didSet { queryMark = Self.queryMark(in: target) }
    }
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The authority of an absolute-form target (`127.0.0.1:8080` of `http://127.0.0.1:8080/x`);
    /// nil for the usual origin form. A server that checks `Host` checks this too.
    public var absoluteFormAuthority: String?

    public init(method: String, target: String, version: HTTPVersion = .http1_1,
                headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.queryMark = Self.queryMark(in: target)
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// Where the target's `?` is, found once (a poll's path and query are asked for six times).
    private var queryMark: String.Index?

    private static func queryMark(in target: String) -> String.Index? {
        target.utf8.firstIndex(of: UInt8(ascii: "?"))
    }

    /// The target's path, still percent-encoded.
    public var path: Substring {
        queryMark.map { target[..<$0] } ?? target[...]
    }

    /// The target's query string without the `?`, or nil when there is none.
    public var query: Substring? {
        queryMark.map { target[target.utf8.index(after: $0)...] }
    }

    /// The decoded value of the first query parameter called `name`.
    public func queryValue(_ name: String) -> String? {
        guard let query else { return nil }
        // Polls ask for four values each: scan the query's bytes in place, allocating only the value.
        if let found = query.utf8.withContiguousStorageIfAvailable({ Self.value(of: name, in: $0) }) {
            return found
        }
        return Self.value(of: name, in: Array(query.utf8))
    }

    private static func value<Bytes: RandomAccessCollection<UInt8>>(of name: String, in bytes: Bytes) -> String? where Bytes.Index == Int {
        var found: String?
        forEachPair(in: bytes) { key, value in
            guard Self.key(key, is: name) else { return true }
            found = Self.decodedValue(value)
            return false
        }
        return found
    }

    /// Every query parameter in order, its name and value decoded, until `body` returns false: one
    /// pass over the query for a route that reads several (a poll reads four). `value` is nil when
    /// it is not valid percent-encoded UTF-8, as `queryValue` would answer; a name that is not is
    /// skipped. Short names and values (up to 15 bytes) are made without allocating.
    public func forEachQueryParameter(_ body: (_ name: String, _ value: String?) -> Bool) {
        guard let query else { return }
        func visit<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) where Bytes.Index == Int {
            Self.forEachPair(in: bytes) { key, value in
                guard let name = PercentDecoding.decode(String(decoding: key, as: UTF8.self), plusAsSpace: true) else { return true }
                return body(name, Self.decodedValue(value))
            }
        }
        if query.utf8.withContiguousStorageIfAvailable({ visit($0) }) == nil {
            visit(Array(query.utf8))
        }
    }

    /// Splits `name=value&...` in place; `value` is nil for a pair without `=`.
    private static func forEachPair<Bytes: RandomAccessCollection<UInt8>>(
        in bytes: Bytes, _ body: (_ key: Bytes.SubSequence, _ value: Bytes.SubSequence?) -> Bool
    ) where Bytes.Index == Int {
        var pairStart = bytes.startIndex
        while pairStart < bytes.endIndex {
            var pairEnd = pairStart, equals: Int?
            while pairEnd < bytes.endIndex && bytes[pairEnd] != UInt8(ascii: "&") {
                if equals == nil && bytes[pairEnd] == UInt8(ascii: "=") { equals = pairEnd }
                pairEnd += 1
            }
            let value = equals.map { bytes[($0 + 1)..<pairEnd] }
            guard body(bytes[pairStart..<(equals ?? pairEnd)], value) else { return }
            pairStart = pairEnd == bytes.endIndex ? pairEnd : pairEnd + 1
        }
    }

    private static func decodedValue<Bytes: Collection<UInt8>>(_ raw: Bytes?) -> String? {
        guard let raw else { return "" }
        return PercentDecoding.decode(String(decoding: raw, as: UTF8.self), plusAsSpace: true)
    }

    private static func key<Bytes: Collection<UInt8>>(_ raw: Bytes, is name: String) -> Bool {
        if raw.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            return PercentDecoding.decode(String(decoding: raw, as: UTF8.self), plusAsSpace: true) == name
        }
        return raw.elementsEqual(name.utf8)
    }

    /// Whether the connection may carry another request after this one.
    public var keepAlive: Bool {
        let connection = headers["Connection"] ?? ""
        switch version {
        case .http1_1: return !connection.containsHeaderToken("close")
        case .http1_0: return connection.containsHeaderToken("keep-alive")
        }
    }
}
