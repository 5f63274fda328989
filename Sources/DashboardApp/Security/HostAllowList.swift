import HTTPCore

/// The `Host` values the dashboard answers: its port on the names that reach the address it
/// listens on (127.0.0.1 and localhost for IPv4 loopback, [::1] and localhost for IPv6 loopback,
/// all three for a wildcard, and the address itself when it is another one). Anything else may be
/// a DNS-rebinding attack, where a foreign page's name resolves to this machine.
public struct HostAllowList: Sendable {
    public let port: Int
    private let allowed: Set<String>

    /// - Parameter bound: the address listened on; nil is IPv4 loopback.
    public init(port: Int, bound: SocketAddress? = nil) {
        self.port = port
        var names: Set<String> = []
        let host = bound?.host ?? "127.0.0.1"
        let ipv6 = bound?.isIPv6 ?? false
        switch host {
        case "0.0.0.0", "::":
            names = ["127.0.0.1", "localhost", "[::1]"]
        case "::1":
            names = ["[::1]", "localhost"]
        case _ where !ipv6 && host.hasPrefix("127."):
            names = [host, "localhost"]
        default:
            names = [ipv6 ? "[\(host)]" : host]
        }
        allowed = Set(names.map { "\($0):\(port)" })
    }

    /// The address to print for people to open: the bound one, or loopback for a wildcard.
    public static func openableAddress(for bound: SocketAddress) -> String {
        switch bound.host {
        case "0.0.0.0": "127.0.0.1:\(bound.port)"
        case "::": "[::1]:\(bound.port)"
        default: bound.description
        }
    }

    public func allows(_ host: String?) -> Bool {
        guard let host else { return false }
        return allowed.contains(host.lowercased())
    }

    /// The origins a browser sends for pages loaded from an allowed host.
    public func allowsOrigin(_ origin: String) -> Bool {
        let lowered = origin.lowercased()
        guard lowered.hasPrefix("http://") else { return false }
        return allowed.contains(String(lowered.dropFirst("http://".count)))
    }
}
