/// JSON text written by hand, for hot paths where `JSONEncoder`'s generic machinery costs more
/// than the data (a batch of thousands of messages, an answer sent to thousands of polls).
///
/// ```swift
/// var json = JSONWriter()
/// json.raw(#"{"id":"#); json.number(42)
/// json.raw(#","text":"#); json.string("say \"hi\"")
/// json.raw("}")                 // {"id":42,"text":"say \"hi\""}
/// ```
///
/// The caller writes the punctuation and keys; the writer makes values valid JSON (RFC 8259).
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Text copied as is: punctuation, keys known to need no escaping, or JSON made elsewhere.
    public mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Bytes copied as is (JSON made elsewhere).
    public mutating func raw(bytes more: [UInt8]) {
        bytes.append(contentsOf: more)
    }

    /// A string literal: quotes, backslashes and control characters escaped; everything else,
    /// including non-ASCII, as UTF-8.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = text.utf8
        // Most text needs no escaping: copy it in one go.
        if !utf8.contains(where: Self.needsEscape) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                appendEscaping(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func number<Integer: BinaryInteger>(_ value: Integer) {
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ value: Bool) {
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        bytes.append(contentsOf: "null".utf8)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func appendEscaping(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
        case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
        case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
        case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
        case 0..<0x20:
            bytes.append(contentsOf: #"\u00"#.utf8)
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        default:
            bytes.append(byte)
        }
    }
}
