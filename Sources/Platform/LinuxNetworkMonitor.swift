import CShims
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches Linux's routing netlink socket for link and address events, and after each one checks
/// whether any interface other than loopback is up and running with an address.
/// The engine sees it through its `NetworkMonitor` protocol (the executable adapts one to the other).
public final class LinuxNetworkMonitor: Sendable {
    private let state: Mutex<(online: Bool, subscribers: [AsyncStream<Bool>.Continuation])>

    /// Nil when the netlink socket cannot be opened (then the caller falls back to `AlwaysOnline`).
    public init?() {
        let fd = cshims_netlink_route_socket()
        guard fd >= 0 else { return nil }
        state = Mutex((Self.hasUsableInterface(), []))
        let thread = Thread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                guard let self else { break }
                self.recheck()
            }
            close(fd)
        }
        thread.name = "netlink"
        thread.start()
    }

    public var isOnline: Bool { state.withLock { $0.online } }

    public func transitions() -> AsyncStream<Bool> {
        AsyncStream { continuation in
            state.withLock { $0.subscribers.append(continuation) }
        }
    }

    private func recheck() {
        let online = Self.hasUsableInterface()
        let subscribers = state.withLock { state -> [AsyncStream<Bool>.Continuation] in
            guard state.online != online else { return [] }
            state.online = online
            return state.subscribers
        }
        subscribers.forEach { $0.yield(online) }
    }

    /// Any interface that is up and running, is not loopback, and has an IPv4 or IPv6 address.
    static func hasUsableInterface() -> Bool {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return true }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            let flags = Int32(current.pointee.ifa_flags)
            let family = current.pointee.ifa_addr.map { Int32($0.pointee.sa_family) } ?? -1
            if flags & Int32(IFF_UP) != 0, flags & Int32(IFF_RUNNING) != 0,
               flags & Int32(IFF_LOOPBACK) == 0, family == AF_INET || family == AF_INET6 {
                return true
            }
            entry = current.pointee.ifa_next
        }
        return false
    }
}
