/// Maps a method and a path to a handler. Patterns are `/`-separated literals and `{name}`
/// parameters, e.g. `/api/errors/{id}/attempts`. A route for GET also answers HEAD.
public struct Router: Sendable {
    public typealias Handler = @Sendable (HTTPRequest, RouteParameters, RequestContext) async throws -> HTTPResponse

    public enum Match: Sendable {
        case found(Handler, RouteParameters)
        /// The path exists, but not for this method; `allowed` is for the `Allow` header.
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private struct Route: Sendable {
        var method: String
        var segments: [Segment]
        var handler: Handler
    }

    private var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        let segments = pattern.split(separator: "/").map { part -> Segment in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        routes.append(Route(method: method, segments: segments, handler: handler))
    }

    /// Matches the still percent-encoded `path`; parameter values are decoded.
    public func match(method: String, path: Substring) -> Match {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var allowed: [String] = []
        for route in routes {
            guard let parameters = Self.parameters(of: route.segments, in: parts) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .found(route.handler, parameters)
            }
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    private static func parameters(of segments: [Segment], in parts: ArraySlice<Substring>) -> RouteParameters? {
        guard segments.count == parts.count else { return nil }
        var values: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let literal):
                guard part == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty, let value = PercentDecoding.decode(part) else { return nil }
                values[name] = value
            }
        }
        return RouteParameters(values: values)
    }
}

/// Values of a route's `{name}` segments.
public struct RouteParameters: Sendable {
    public let values: [String: String]

    public subscript(name: String) -> String? { values[name] }
}
