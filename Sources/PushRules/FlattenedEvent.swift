import JSONText

/// An event as the push rules read it: each property under its dot-separated path
/// (`content.body`, `content.m\.relates_to.rel_type`), a literal `.` or `\` in a property name
/// escaped with `\` as the spec's appendix says. A path names a string, number, boolean, null or
/// array; an object is not a value, only a property the event has.
///
/// A path is looked up in the event as it came when a rule asks for it: the rules read a handful
/// of properties, so nothing of the rest of the content (a long body's neighbours, an edit's new
/// content, a reply's quote) is copied for them.
public struct FlattenedEvent: Sendable, Equatable {
    private let fields: [String: JSONValue]

    /// The event (a JSON object); anything but an object has no properties.
    public init(_ event: JSONValue) {
        if case .object(let fields) = event { self.fields = fields } else { fields = [:] }
    }

    /// The value at `path`, unless it is an object (or there is none).
    public subscript(path: EventPath) -> JSONValue? {
        guard let value = lookUp(path) else { return nil }
        if case .object = value { return nil }
        return value
    }

    public subscript(path: String) -> JSONValue? { self[EventPath(path)] }

    /// Whether the event has the property at `path`, of whatever type (an empty object too).
    public func has(_ path: EventPath) -> Bool { lookUp(path) != nil }

    public func has(_ path: String) -> Bool { has(EventPath(path)) }

    private func lookUp(_ path: EventPath) -> JSONValue? {
        var object = fields
        var value: JSONValue?
        for name in path.names {
            if let outer = value {
                guard case .object(let inner) = outer else { return nil }
                object = inner
            }
            guard let next = object[name] else { return nil }
            value = next
        }
        return value
    }
}

/// A dot-separated path into an event (`content.m\.relates_to.rel_type`), read once into the
/// property names it walks through: a rule's key is split when the rule is read, not at every
/// event it is tried on.
public struct EventPath: Sendable, Hashable, CustomStringConvertible {
    /// The path as written.
    public let description: String
    /// The property names, split at each `.` not escaped, `\.` and `\\` read as the characters
    /// they stand for.
    public let names: [String]

    public init(_ path: String) {
        description = path
        guard path.utf8.contains(UInt8(ascii: "\\")) else {
            names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            return
        }
        var names: [String] = []
        var current = ""
        var escaping = false
        for character in path {
            if escaping {
                current.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "." {
                names.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        names.append(current)
        self.names = names
    }
}
