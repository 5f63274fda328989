/// Tells whether the machine has a network, and when that changes (transitions only). The
/// platform module watches Linux's netlink socket; tests script it.
public protocol NetworkMonitor: Sendable {
    var isOnline: Bool { get }
    /// Each element is a transition: false when the network went away, true when it came back.
    func transitions() -> AsyncStream<Bool>
}

/// For upstreams on this machine (the built-in simulator): loopback never goes away.
public struct AlwaysOnline: NetworkMonitor {
    public init() {}
    public var isOnline: Bool { true }
    public func transitions() -> AsyncStream<Bool> { AsyncStream { _ in } }
}
