import JSONText

extension JSONValue {
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
