/// A JSON value of any shape, as an event's properties are to the push rules: the evaluator reads
/// properties the rules name, which no fixed model can know in advance.
public enum JSONValue: Sendable, Equatable, Decodable {
    case string(String)
    case integer(Int64)
    /// A number that is not an integer in the range canonical JSON allows: never equal to a
    /// rule's value (`event_property_is` matches only canonical values).
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    /// Tried in the order values come in events (strings, then objects, numbers, booleans,
    /// arrays): each wrong guess costs the decoder a thrown error and its coding path, which was
    /// most of decoding a large initial sync.
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

    /// The value as a rule may compare it exactly: a string, an integer within
    /// ±(2⁵³ − 1), a boolean or null; nil for anything else.
    var canonicalScalar: JSONValue? {
        switch self {
        case .string, .bool, .null: self
        case .integer(let value) where abs(value) <= 9_007_199_254_740_991: self
        default: nil
        }
    }
}
