/// An ordered list of header fields with case-insensitive lookup by name.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init() {
        fields = []
    }

    /// Room for `capacity` fields without growing (a parser knows how many lines it has).
    init(reservingCapacity capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

    public init(_ fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value for `name`, or nil.
    public subscript(name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.equalsIgnoringASCIICase(name) }
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field called `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension String {
    /// ASCII case-insensitive comparison, as header names and tokens need.
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        if self == other { return true }
        let left = utf8, right = other.utf8
        guard left.count == right.count else { return false }
        var otherIndex = right.startIndex
        for byte in left {
            if lowerASCII(byte) != lowerASCII(right[otherIndex]) { return false }
            otherIndex = right.index(after: otherIndex)
        }
        return true
    }

    /// True when this comma-separated header value lists `token` (case-insensitively).
    public func containsHeaderToken(_ token: String) -> Bool {
        split(separator: ",").contains {
            String($0).trimmingHTTPWhitespace().equalsIgnoringASCIICase(token)
        }
    }

    public func trimmingHTTPWhitespace() -> String {
        String(self[...].trimmingHTTPWhitespace())
    }
}

extension Substring {
    /// Without spaces or tabs at either end: a slice of the same text, not a copy.
    public func trimmingHTTPWhitespace() -> Substring {
        let bytes = utf8
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

@inline(__always)
func lowerASCII(_ byte: UInt8) -> UInt8 {
    (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
}
