/// Reads JSON text (RFC 8259) in one pass, value by value as the caller asks for them, without
/// building a tree or going through `Decodable`. For the hot path of ingest: an upstream answer
/// with thousands of messages.
///
/// ```swift
/// var reader = JSONReader(bytes)
/// var ids: [Int64] = []
/// try reader.readObject { reader, key in
///     if key == "ids" {
///         try reader.readArray { reader in ids.append(try reader.readInt64()) }
///     } else {
///         try reader.skipValue()       // every value must be read or skipped
///     }
/// }
/// try reader.finish()                  // nothing but whitespace may follow
/// ```
///
/// Everything is checked as it is read: malformed text, raw control characters in strings,
/// invalid UTF-8, lone surrogates, numbers that are not integers where integers are asked for,
/// and nesting deeper than ``maxDepth`` all throw ``JSONReadError``; nothing traps.
public struct JSONReader {
    /// The kinds of value that can come next.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null
    }

    /// Deeper nesting is refused instead of recursing without bound.
    public static let maxDepth = 512

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// An error at the current position, for callers that find the JSON valid but not what they need.
    public func error(_ reason: String) -> JSONReadError {
        JSONReadError(offset: index, reason: reason)
    }

    /// What the next value is, judged by its first byte and without reading it; the value itself
    /// is checked when it is read.
    public mutating func peekKind() throws -> Kind {
        skipWhitespace()
        guard let byte = peek() else { throw error("unexpected end") }
        switch byte {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw error("expected a value")
        }
    }

    /// Reads an object, calling `body` with each key; `body` must read or skip that key's value.
    public mutating func readObject(_ body: (inout JSONReader, String) throws -> Void) throws {
        try open(UInt8(ascii: "{"), "an object")
        guard !closesAtOnce(UInt8(ascii: "}")) else { return }
        repeat {
            let key = try readString()
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw error("expected ':' after a key") }
            try body(&self, key)
        } while try another(closedBy: UInt8(ascii: "}"))
    }

    /// Reads an array, calling `body` once per element; `body` must read or skip it.
    public mutating func readArray(_ body: (inout JSONReader) throws -> Void) throws {
        try open(UInt8(ascii: "["), "an array")
        guard !closesAtOnce(UInt8(ascii: "]")) else { return }
        repeat {
            try body(&self)
        } while try another(closedBy: UInt8(ascii: "]"))
    }

    public mutating func readString() throws -> String {
        skipWhitespace()
        guard consume(UInt8(ascii: "\"")) else { throw error("expected a string") }
        let start = index
        var highBits: UInt8 = 0
        // Fast path: no escapes, so the text is the bytes between the quotes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text: String
                if highBits < 0x80 {
                    // ASCII is valid UTF-8 as it is; the checking initializer is generic and,
                    // called per string, costs more than the rest of the parse.
                    text = String(decoding: bytes[start..<index], as: UTF8.self)
                } else {
                    guard let checked = String(validating: bytes[start..<index], as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                    text = checked
                }
                index += 1
                return text
            }
            highBits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string") }
            index += 1
        }
        return try readEscapedString(from: start)
    }

    public mutating func readInt64() throws -> Int64 {
        skipWhitespace()
        let negative = peek() == UInt8(ascii: "-")
        if negative { index += 1 }
        guard let first = peek(), Self.isDigit(first) else { throw error("expected an integer") }
        var value: Int64 = 0
        let digitsStart = index
        while let byte = peek(), Self.isDigit(byte) {
            let digit = Int64(byte - UInt8(ascii: "0"))
            // Accumulate negatively so Int64.min fits.
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.subtractingReportingOverflow(digit)
            if overflowA || overflowB { throw error("integer out of range") }
            value = next
            index += 1
        }
        if first == UInt8(ascii: "0") && index - digitsStart > 1 { throw error("leading zero in a number") }
        if let byte = peek(), byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            throw error("expected an integer")
        }
        if negative { return value }
        guard value != Int64.min else { throw error("integer out of range") }
        return -value
    }

    /// Reads a number of any form: ``JSONValue/integer(_:)`` when it has no fraction or exponent
    /// and fits in 64 bits, ``JSONValue/number(_:)`` otherwise.
    public mutating func readNumber() throws -> JSONValue {
        skipWhitespace()
        let start = index
        try skipNumber()
        let text = bytes[start..<index]
        let isInteger = !text.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        if isInteger, let value = Self.integer(text) { return .integer(value) }
        guard let value = Double(String(decoding: text, as: UTF8.self)) else { throw error("number out of range") }
        return .number(value)
    }

    /// Checked digits (an optional `-` first) as an Int64; nil when out of range.
    private static func integer(_ digits: ArraySlice<UInt8>) -> Int64? {
        let negative = digits.first == UInt8(ascii: "-")
        var value: Int64 = 0
        for byte in digits.dropFirst(negative ? 1 : 0) {
            // Accumulate negatively so Int64.min fits.
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            if overflowA || overflowB { return nil }
            value = next
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    public mutating func readBool() throws -> Bool {
        skipWhitespace()
        if literal("true") { return true }
        if literal("false") { return false }
        throw error("expected true or false")
    }

    /// Reads a `null` if one comes next and says so; otherwise reads nothing.
    public mutating func readNullIfPresent() -> Bool {
        skipWhitespace()
        return literal("null")
    }

    /// Reads and checks the next value, whatever it is, and drops it.
    public mutating func skipValue() throws {
        switch try peekKind() {
        case .object: try readObject { reader, _ in try reader.skipValue() }
        case .array: try readArray { reader in try reader.skipValue() }
        case .string: _ = try readString()
        case .bool: _ = try readBool()
        case .null: if !readNullIfPresent() { throw error("expected null") }
        case .number: try skipNumber()
        }
    }

    /// Checks that nothing but whitespace is left.
    public mutating func finish() throws {
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the value") }
    }

    // MARK: Details

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func next() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    /// Steps over `byte` if it comes next; errors thrown after a failed consume point at the byte.
    private mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func open(_ bracket: UInt8, _ what: String) throws {
        skipWhitespace()
        guard consume(bracket) else { throw error("expected \(what)") }
        depth += 1
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth)") }
    }

    /// Right after an opening bracket: whether the container is empty (and now closed).
    private mutating func closesAtOnce(_ close: UInt8) -> Bool {
        skipWhitespace()
        guard peek() == close else { return false }
        index += 1
        depth -= 1
        return true
    }

    /// After an element: true when a comma says another follows, false at the closing bracket.
    private mutating func another(closedBy close: UInt8) throws -> Bool {
        skipWhitespace()
        if consume(UInt8(ascii: ",")) { return true }
        guard consume(close) else { throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'") }
        depth -= 1
        return false
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { expected in
            expected.indices.allSatisfy { bytes[index + $0] == expected[$0] }
        }
        if matches { index += count }
        return matches
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func skipNumber() throws {
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), Self.isDigit(first) else { throw error("expected a digit") }
        index += 1
        if first != UInt8(ascii: "0") {
            while let byte = peek(), Self.isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            try skipDigits()
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            try skipDigits()
        }
    }

    private mutating func skipDigits() throws {
        guard let byte = peek(), Self.isDigit(byte) else { throw error("expected a digit") }
        while let byte = peek(), Self.isDigit(byte) { index += 1 }
    }

    private mutating func readEscapedString(from start: Int) throws -> String {
        var decoded = Array(bytes[start..<index])
        while let byte = next() {
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: decoded, as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                try appendEscape(to: &decoded)
            case 0..<0x20:
                throw error("control character in a string")
            default:
                decoded.append(byte)
            }
        }
        throw error("unterminated string")
    }

    private mutating func appendEscape(to decoded: inout [UInt8]) throws {
        switch next() {
        case UInt8(ascii: "\""): decoded.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): decoded.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): decoded.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var code = UInt32(try readHex4())
            if (0xD800...0xDBFF).contains(code) {
                guard literal("\\u") else { throw error("lone surrogate in a string") }
                let low = UInt32(try readHex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate in a string") }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(code) {
                throw error("lone surrogate in a string")
            }
            guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
            decoded.append(contentsOf: String(Character(scalar)).utf8)
        default:
            throw error("invalid escape in a string")
        }
    }

    private mutating func readHex4() throws -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = next() else { throw error("unterminated \\u escape") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}

/// Why JSON text could not be read, and where.
public struct JSONReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bytes from the start of the text.
    public let offset: Int
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}
