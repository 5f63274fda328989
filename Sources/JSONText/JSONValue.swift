/// A JSON value of any shape: what a reader keeps when the fields that matter are not known in
/// advance (an event's content, which the account's push rules may read at any path).
public enum JSONValue: Sendable, Equatable, Decodable {
    case string(String)
    case integer(Int64)
    /// A number that is not an integer or does not fit in 64 bits.
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    /// Reads one whole JSON text (RFC 8259) with ``JSONReader``: one pass, no `Decodable`.
    /// A key given twice in one object keeps its last value.
    /// Malformed text throws ``JSONReadError``.
    public init(parsing bytes: [UInt8]) throws {
        var reader = JSONReader(bytes)
        self = try reader.readValue()
        try reader.finish()
    }

    /// Tried in the order values come in events (strings, then objects, numbers, booleans,
    /// arrays): each wrong guess costs the decoder a thrown error and its coding path.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .array(try container.decode([JSONValue].self))
        }
    }

    // MARK: Reading fields

    /// The value under `key` when this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { fields[key] } else { nil }
    }

    public var string: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// An integer; a number with a fraction or out of range is none.
    public var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// An integer that fits in an `Int` (a count, a level).
    public var int: Int? {
        integer.flatMap { Int(exactly: $0) }
    }

    public var bool: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    public var array: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    public var object: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    // MARK: Writing

    /// The value as compact JSON text, keys in no particular order.
    public func serialized() -> [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    private func write(to writer: inout JSONWriter) {
        switch self {
        case .string(let value): writer.string(value)
        case .integer(let value): writer.number(value)
        case .number(let value): writer.raw(value.isFinite ? "\(value)" : "null")
        case .bool(let value): writer.bool(value)
        case .null: writer.null()
        case .array(let items):
            writer.raw("[")
            for (index, item) in items.enumerated() {
                if index > 0 { writer.raw(",") }
                item.write(to: &writer)
            }
            writer.raw("]")
        case .object(let fields):
            writer.raw("{")
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.string(key)
                writer.raw(":")
                value.write(to: &writer)
            }
            writer.raw("}")
        }
    }
}

extension JSONReader {
    /// Reads the next value, whatever its kind, as a ``JSONValue``.
    public mutating func readValue() throws -> JSONValue {
        switch try peekKind() {
        case .string:
            return .string(try readString())
        case .object:
            // An event's objects hold a few keys each: room for eight spares them growing twice.
            var fields: [String: JSONValue] = Dictionary(minimumCapacity: 8)
            try readObject { reader, key in fields[key] = try reader.readValue() }
            return .object(fields)
        case .array:
            var items: [JSONValue] = []
            try readArray { reader in items.append(try reader.readValue()) }
            return .array(items)
        case .number:
            return try readNumber()
        case .bool:
            return .bool(try readBool())
        case .null:
            guard readNullIfPresent() else { throw error("expected null") }
            return .null
        }
    }
}
