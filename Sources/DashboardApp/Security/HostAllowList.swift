import HTTPCore

/// The `Host` values the dashboard answers: its port on 127.0.0.1, localhost and [::1].
/// Anything else may be a DNS-rebinding attack, where a foreign page's name resolves to loopback.
public struct HostAllowList: Sendable {
    public let port: Int
    private let allowed: Set<String>

    public init(port: Int) {
        self.port = port
        allowed = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
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
