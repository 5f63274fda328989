#if canImport(Glibc)
import Glibc
#endif
import CShims

/// Client connections whose last response left them open (HTTP/1.1 keep-alive), kept for the next
/// request to the same address: a long poll after a long poll then costs no `connect`, `accept`,
/// `close` and no new socket on either side.
///
/// A kept connection is watched while idle: anything from the server (its close, or bytes nobody
/// asked for) ends it, and so does `maxIdle` (`HTTPClient`'s `keepIdleFor`), by default shorter
/// than servers' usual keep-alive timeouts (nginx 75 s, this project's server 75 s). A server may still close one just as a
/// request goes out on it; `ClientExchange` sends such a request again on a new connection.
/// Loop thread only.
final class IdleConnections: @unchecked Sendable {
    static let maxPerAddress = 2
    private let loop: EventLoop
    private let maxIdle: Duration
    private var byAddress: [String: [Idle]] = [:]

    init(loop: EventLoop, maxIdle: Duration) {
        self.loop = loop
        self.maxIdle = maxIdle
    }

    /// A kept connection to `address`, no longer watched as idle (its new owner rebinds it), or nil.
    func take(_ address: String) -> Int32? {
        loop.assertOnLoop()
        guard var kept = byAddress[address], let idle = kept.popLast() else { return nil }
        byAddress[address] = kept.isEmpty ? nil : kept
        if let timer = idle.timer { loop.cancelTimer(timer) }
        return idle.fd
    }

    /// Keeps `fd`, a connection to `address` that is registered with the loop, for the next request.
    func keep(_ fd: Int32, for address: String) {
        loop.assertOnLoop()
        guard byAddress[address, default: []].count < Self.maxPerAddress else { return drop(fd) }
        let idle = Idle(fd: fd, address: address, pool: self)
        do {
            try loop.rebind(fd, events: CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP, handler: idle)
        } catch {
            return drop(fd)
        }
        idle.timer = loop.schedule(after: maxIdle) { [weak self, idle] in
            idle.timer = nil
            self?.discard(idle)
        }
        byAddress[address, default: []].append(idle)
    }

    /// How many connections are kept now (tests).
    var count: Int {
        loop.assertOnLoop()
        return byAddress.values.reduce(0) { $0 + $1.count }
    }

    private func discard(_ idle: Idle) {
        guard var kept = byAddress[idle.address], let index = kept.firstIndex(where: { $0 === idle }) else { return }
        kept.remove(at: index)
        byAddress[idle.address] = kept.isEmpty ? nil : kept
        if let timer = idle.timer { loop.cancelTimer(timer) }
        drop(idle.fd)
    }

    private func drop(_ fd: Int32) {
        loop.deregister(fd)
        close(fd)
    }

    /// One kept connection while nobody uses it.
    private final class Idle: EventLoopHandler {
        let fd: Int32
        let address: String
        var timer: TimerHeap.ID?
        weak var pool: IdleConnections?

        init(fd: Int32, address: String, pool: IdleConnections) {
            self.fd = fd
            self.address = address
            self.pool = pool
        }

        /// Any event on an idle connection ends it: the server closed it, or sent what nobody asked for.
        func handleEvents(_ events: UInt32) {
            pool?.discard(self)
        }
    }
}
