#if canImport(Glibc)
import Glibc
#endif

/// Where to listen and the limits that keep one client from hurting the others.
public struct HTTPServerConfiguration: Sendable {
    public var host: String
    /// 0 asks the kernel for a free port; the server's `localAddress` tells which.
    public var port: Int
    public var limits: HTTPLimits
    /// From the first byte of a connection or of a request until its head has arrived: then 408.
    public var headTimeout: Duration
    /// An idle keep-alive connection is closed after this long.
    public var idleTimeout: Duration
    /// A client that reads none of a pending response for this long is disconnected.
    public var writeTimeout: Duration
    /// Connections beyond this are answered 503 and closed.
    public var maxConnections: Int
    /// How often deadlines are checked while any connection is open; timeouts fire this late at most.
    public var timerResolution: Duration
    /// How responses the core makes on its own (400, 408, 413, 431, 500, 503, ...) look.
    public var errorResponse: @Sendable (_ status: HTTPStatus, _ detail: String) -> HTTPResponse
    /// The time that deadlines are set and checked by (`ConnectionState` decides with it).
    public var clock: @Sendable () -> MonotonicTime
    /// Answers cut on purpose (a server that plays a broken network); nil: none ever is.
    public var wireFaults: WireFaults?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        limits: HTTPLimits = HTTPLimits(),
        headTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(75),
        writeTimeout: Duration = .seconds(30),
        maxConnections: Int? = nil,
        timerResolution: Duration = .seconds(1),
        errorResponse: @escaping @Sendable (_ status: HTTPStatus, _ detail: String) -> HTTPResponse = { status, _ in
            .text("\(status.code) \(status.reason)\n", status: status)
        },
        clock: @escaping @Sendable () -> MonotonicTime = { .now },
        wireFaults: WireFaults? = nil
    ) {
        self.host = host
        self.port = port
        self.limits = limits
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.writeTimeout = writeTimeout
        self.maxConnections = maxConnections ?? Self.defaultMaxConnections()
        self.timerResolution = timerResolution
        self.errorResponse = errorResponse
        self.clock = clock
        self.wireFaults = wireFaults
    }

    /// The open-file limit less a reserve for the store, logs and the upstream client.
    public static func defaultMaxConnections() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1000 }
        return max(16, Int(min(limit.rlim_cur, 1 << 20)) - 64)
    }
}
