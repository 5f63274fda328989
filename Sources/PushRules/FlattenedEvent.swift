import JSONText

/// An event as the push rules read it: each property under its dot-separated path
/// (`content.body`, `content.m\.relates_to.rel_type`), a literal `.` or `\` in a property name
/// escaped with `\` as the spec's appendix says. Objects are flattened; strings, numbers, booleans,
/// null and arrays are kept at their path.
public struct FlattenedEvent: Sendable, Equatable {
    public private(set) var properties: [String: JSONValue] = [:]
    /// The paths of the objects flattened away (`content`, `content.m\.mentions`): an empty
    /// object still says the event has the property.
    public private(set) var objects: Set<String> = []

    /// The event (a JSON object) flattened; anything but an object has no properties.
    public init(_ event: JSONValue) {
        guard case .object(let fields) = event else { return }
        flatten(fields, under: "")
    }

    public subscript(path: String) -> JSONValue? { properties[path] }

    /// Whether the event has the property at `path`, of whatever type.
    public func has(_ path: String) -> Bool { properties[path] != nil || objects.contains(path) }

    private mutating func flatten(_ fields: [String: JSONValue], under prefix: String) {
        for (name, value) in fields {
            let path = prefix.isEmpty ? Self.escaped(name) : prefix + "." + Self.escaped(name)
            if case .object(let inner) = value {
                objects.insert(path)
                flatten(inner, under: path)
            } else {
                properties[path] = value
            }
        }
    }

    /// A property name as a path segment: `m.relates_to` is `m\.relates_to`, `m\foo` is `m\\foo`.
    static func escaped(_ name: String) -> String {
        guard name.contains(where: { $0 == "." || $0 == "\\" }) else { return name }
        var result = ""
        for character in name {
            if character == "." || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
