import CShims
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on non-blocking sockets and one epoll loop.
///
/// ```swift
/// let server = try HTTPServer(configuration: .init(port: 0), loop: EventLoop())
/// try await server.start(responder: app)      // `server.localAddress` tells the real port
/// ...
/// await server.shutdown()                      // stop accepting, finish in-flight, close
/// ```
///
/// All mutable state is confined to the loop thread; public methods hop there. That is what the
/// `@unchecked Sendable` promises.
public final class HTTPServer: EventLoopHandler, @unchecked Sendable {
    public let configuration: HTTPServerConfiguration
    public let localAddress: SocketAddress
    let loop: EventLoop
    let log = Logger("http")

    // Loop-confined state.
    private(set) var responder: any HTTPResponder = ClosureResponder { _, _ in .text("not started", status: .serviceUnavailable) }
    private var listenFD: Int32
    private var connections = DescriptorTable<Connection>()
    private var nextConnectionID: UInt64 = 1
    private var lifecycle = Lifecycle.serving
    private var sweepTimer: TimerHeap.ID?
    private var spareFD: Int32 = -1
    private var lastOverloadLog = MonotonicTime(nanoseconds: 0)
    private var refusedSinceLastLog = 0
    var encoder = ResponseEncoder()

    private let counters = Mutex(HTTPServerStatistics())

    /// Binds and listens at once (so the port is known), but accepts nothing until ``start(responder:)``.
    public init(configuration: HTTPServerConfiguration, loop: EventLoop) throws {
        self.configuration = configuration
        self.loop = loop
        (listenFD, localAddress) = try Socket.listen(host: configuration.host, port: configuration.port)
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    /// Starts accepting connections and answering them with `responder`.
    public func start(responder: any HTTPResponder) async throws {
        try await loop.submit { [self] in
            self.responder = responder
            try loop.register(listenFD, events: CSHIMS_EPOLLIN, handler: self)
        }
        log.debug("listening on \(localAddress)")
    }

    /// A snapshot of the server's counters, safe to read from any thread.
    public var statistics: HTTPServerStatistics {
        counters.withLock { $0 }
    }

    /// Where the server is in its life.
    private enum Lifecycle {
        case serving
        /// No connection is accepted; those open close as they finish (`stage`). The callers of
        /// ``shutdown(gracePeriod:)`` wait until the last has closed.
        case stopping(ShutdownStage, waiters: [CheckedContinuation<Void, Never>])
        case stopped
    }

    /// The steps of a shutdown, each harder on the requests still open than the one before.
    private enum ShutdownStage {
        /// Requests in flight are answered; idle connections are closed.
        case draining
        /// The requests still running are cancelled (their responders see task cancellation and
        /// may still answer).
        case cancelling
        /// Every connection left is closed.
        case aborting
    }

    /// Shutting down: answers say `Connection: close`.
    var isShuttingDown: Bool {
        if case .serving = lifecycle { false } else { true }
    }

    /// Stops accepting, lets requests in flight finish for up to `gracePeriod`, then cancels the
    /// ones still running (their responders see task cancellation and may still answer), and
    /// closes every connection no later than half a second after that.
    public func shutdown(gracePeriod: Duration = .seconds(1)) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                switch lifecycle {
                case .stopped:
                    continuation.resume()
                case .stopping(let stage, let waiters):
                    lifecycle = .stopping(stage, waiters: waiters + [continuation])
                case .serving:
                    lifecycle = .stopping(.draining, waiters: [continuation])
                    if listenFD >= 0 {
                        loop.deregister(listenFD)
                        close(listenFD)
                        listenFD = -1
                    }
                    for connection in connections.values {
                        connection.closeWhenIdle()
                    }
                    loop.schedule(after: gracePeriod) { [self] in advanceShutdown(to: .cancelling) }
                    finishShutdownIfDone()
                }
            }
        }
    }

    private func advanceShutdown(to stage: ShutdownStage) {
        guard case .stopping(_, let waiters) = lifecycle else { return }
        lifecycle = .stopping(stage, waiters: waiters)
        switch stage {
        case .draining:
            break
        case .cancelling:
            for connection in connections.values where connection.hasRequestInFlight {
                connection.cancelInFlight()
            }
            loop.schedule(after: .milliseconds(500)) { [self] in advanceShutdown(to: .aborting) }
        case .aborting:
            for connection in connections.values {
                connection.abort()
            }
        }
    }

    private func finishShutdownIfDone() {
        guard case .stopping(_, let waiters) = lifecycle, connections.isEmpty else { return }
        lifecycle = .stopped
        if spareFD >= 0 {
            close(spareFD)
            spareFD = -1
        }
        if let sweepTimer {
            loop.cancelTimer(sweepTimer)
            self.sweepTimer = nil
        }
        waiters.forEach { $0.resume() }
    }

    // MARK: Accepting

    func handleEvents(_ events: UInt32) {
        // Accept a bounded batch per wake-up so a connection flood cannot starve open connections.
        for _ in 0..<256 {
            guard listenFD >= 0 else { return }
            guard let (fd, peer) = Socket.accept(listenFD) else {
                switch errno {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EMFILE, ENFILE:
                    refuseWithSpareDescriptor()
                    return
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                default:
                    log.warning("accept failed: \(SystemError.last("accept"))")
                    return
                }
            }
            if connections.count >= configuration.maxConnections {
                refuse(fd, reason: "connection limit of \(configuration.maxConnections) reached")
                continue
            }
            let connection = Connection(fd: fd, id: nextConnectionID, peer: peer, server: self)
            nextConnectionID += 1
            do {
                try connection.start()
            } catch {
                close(fd)
                continue
            }
            connections[fd] = connection
            counters.withLock {
                $0.connectionsAccepted += 1
                $0.openConnections = connections.count
            }
            startSweepIfNeeded()
        }
    }

    /// Out of descriptors: free the spare one, take the waiting connection, refuse it, re-arm.
    /// Without this the listening socket stays readable and the loop would spin.
    private func refuseWithSpareDescriptor() {
        guard spareFD >= 0 else { return }
        close(spareFD)
        if let (fd, _) = Socket.accept(listenFD) {
            refuse(fd, reason: "out of file descriptors")
        }
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    private func refuse(_ fd: Int32, reason: String) {
        // Best effort: one non-blocking write into a fresh socket's empty buffer.
        var refusal = OutboundQueue()
        var response = configuration.errorResponse(.serviceUnavailable, reason)
        responder.finishing(for: nil).apply(to: &response)
        encoder.encode(response, omitBody: false, close: true).forEach { refusal.append($0) }
        _ = refusal.write(to: fd)
        close(fd)
        counters.withLock { $0.connectionsRefused += 1 }
        recordResponse(status: 503)
        refusedSinceLastLog += 1
        let now = configuration.clock()
        if now.nanoseconds - lastOverloadLog.nanoseconds >= 1_000_000_000 {
            log.warning("refused \(refusedSinceLastLog) connection(s) with 503: \(reason)")
            lastOverloadLog = now
            refusedSinceLastLog = 0
        }
    }

    // MARK: Connections

    func connection(fd: Int32, id: UInt64) -> Connection? {
        guard let connection = connections[fd], connection.id == id else { return nil }
        return connection
    }

    func connectionClosed(_ connection: Connection) {
        guard connections[connection.fd] === connection else { return }
        connections[connection.fd] = nil
        counters.withLock { $0.openConnections = connections.count }
        finishShutdownIfDone()
    }

    func streamWaiting(_ waiting: Bool) {
        counters.withLock { $0.streamsWaitingForClients += waiting ? 1 : -1 }
    }

    func recordResponse(status: Int) {
        counters.withLock { $0.countResponse(status: status) }
    }

    /// Checks every connection's deadline once per `timerResolution`, only while there are connections, so an
    /// idle server with no clients never wakes up.
    private func startSweepIfNeeded() {
        guard sweepTimer == nil else { return }
        sweepTimer = loop.schedule(after: configuration.timerResolution) { [self] in
            sweepTimer = nil
            let now = configuration.clock()
            for connection in connections.values {
                connection.checkDeadline(now: now)
            }
            if !connections.isEmpty {
                startSweepIfNeeded()
            }
        }
    }
}

/// Counters the server keeps for metrics.
public struct HTTPServerStatistics: Sendable {
    public var connectionsAccepted = 0
    public var connectionsRefused = 0
    public var openConnections = 0
    /// Responses by status code, for the codes answered at least once.
    public var responsesByStatus: [Int: Int] {
        var byStatus: [Int: Int] = [:]
        for (index, count) in countsByStatus.enumerated() where count > 0 {
            byStatus[Self.lowestStatus + index] = count
        }
        return byStatus
    }
    /// Indexed by code (100...599): counted on every answer, so no hashing there.
    private var countsByStatus = [Int](repeating: 0, count: 500)
    private static let lowestStatus = 100

    mutating func countResponse(status: Int) {
        let index = status - Self.lowestStatus
        guard countsByStatus.indices.contains(index) else { return }
        countsByStatus[index] += 1
    }
    /// Streamed bodies whose producer waits because their client is behind (back-pressure at work).
    public var streamsWaitingForClients = 0
}
