// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "LongPollDashboard",
    products: [
        .executable(name: "dashboard", targets: ["dashboard"]),
        .executable(name: "chat-server", targets: ["chat-server"]),
        .executable(name: "lp-bench", targets: ["lp-bench"]),
        .executable(name: "https-fetch", targets: ["https-fetch"]),
    ],
    targets: [
        // Syscalls that Glibc does not export to Swift (epoll, accept4, eventfd).
        .target(name: "CShims"),
        // The system's libsqlite3, used by the store.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // A small, safe layer over SQLite: connection, cached statements, transactions, typed errors.
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        // The local copy of the chat account: schema, migrations, batches, quota, paging.
        .target(name: "Store", dependencies: ["SQLite", "Upstream"]),
        // The upstream chat server as the engine sees it: the protocol and its models, no transport.
        .target(name: "Upstream", dependencies: ["JSONText"]),
        // A transport: the client of this project's chat-server protocol (CONTRACT section 3) over HTTPCore.
        .target(name: "ChatServerClient", dependencies: ["Upstream", "HTTPCore", "JSONText", "Logging"]),
        // A transport: a Matrix homeserver's client-server API (CONTRACT section 8) over HTTPCore.
        .target(name: "MatrixClient", dependencies: ["Upstream", "HTTPCore", "Logging", "CShims", "PushRules", "JSONText"]),
        // A chat server for demos and tests, with fault injection.
        .target(name: "ChatSimulator", dependencies: ["HTTPCore", "Upstream", "JSONText", "SQLite", "Logging"]),
        // The long-poll engine: one cycle at a time, backoff, lifecycle, two streams, first load, quota.
        .target(name: "Engine", dependencies: ["Store", "Upstream", "Logging"]),
        // A Matrix account's push rules as a value: each event in, notify / highlight / silent out.
        .target(name: "PushRules", dependencies: ["JSONText"]),
        // Recoverable errors: the model, options, attempters, the registry of open errors.
        .target(name: "Recovery"),
        // Running the process's services together and stopping them in reverse order.
        .target(name: "Lifecycle"),
        // Leveled logging to stderr.
        .target(name: "Logging"),
        // What is Linux's own: SIGINT / SIGTERM as something to await (SIGPIPE ignored), the netlink network monitor.
        .target(name: "Platform", dependencies: ["CShims"]),
        // JSON written by hand for the hot paths (message batches, events sent to every poll).
        .target(name: "JSONText"),
        // HTTP/1.1 server core: parser, epoll event loop, connections, static files.
        .target(name: "HTTPCore", dependencies: ["CShims", "Logging"]),
        // The dashboard application: routes, security policy, problem+json.
        .target(name: "DashboardApp", dependencies: ["HTTPCore", "Store", "Engine", "Recovery", "Upstream", "ChatSimulator", "Logging", "JSONText", "Lifecycle"]),
        // Executables: thin wiring only.
        .executableTarget(name: "dashboard", dependencies: ["DashboardApp", "HTTPCore", "Store", "Engine", "Upstream", "ChatServerClient", "MatrixClient", "ChatSimulator", "Platform", "Logging", "Lifecycle", "https-fetch"]),
        // One HTTPS request through URLSession per process, so that its traps cannot reach the dashboard.
        .executableTarget(name: "https-fetch"),
        .executableTarget(name: "chat-server", dependencies: ["ChatSimulator", "HTTPCore", "Platform", "Logging"]),
        .executableTarget(name: "lp-bench", dependencies: ["Store", "SQLite", "DashboardApp", "HTTPCore", "ChatSimulator", "JSONText", "CShims", "PushRules"]),
        // Test helper: ingests into a store until killed (the crash-safety test SIGKILLs it).
        .executableTarget(name: "store-ingest-loop", dependencies: ["Store"]),

        // What the test targets share: a raw-socket HTTP client, a child-process runner.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore", "TestSupport"]),
        .testTarget(name: "DashboardAppTests", dependencies: ["DashboardApp", "HTTPCore", "Store", "Engine", "Upstream", "ChatServerClient", "Recovery", "ChatSimulator", "TestSupport", "Logging", "Lifecycle"]),
        .testTarget(name: "RecoveryTests", dependencies: ["Recovery", "TestSupport"]),
        .testTarget(name: "PushRulesTests", dependencies: ["PushRules", "JSONText", "TestSupport"]),
        .testTarget(name: "LifecycleTests", dependencies: ["Lifecycle", "TestSupport"]),
        .testTarget(name: "DashboardCLITests", dependencies: ["TestSupport"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        .testTarget(name: "JSONTextTests", dependencies: ["JSONText", "TestSupport"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream"]),
        .testTarget(name: "ChatServerClientTests", dependencies: ["ChatServerClient", "Upstream", "JSONText", "TestSupport"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform"]),
        // The product under abuse: crashes, hostile clients, faults (real binaries, real sockets).
        .testTarget(name: "ReliabilityTests", dependencies: ["TestSupport"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "SQLite", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "ChatSimulatorTests", dependencies: ["ChatSimulator", "ChatServerClient", "HTTPCore", "Upstream"]),
        // Against a real Synapse homeserver, started by the tests on a loopback port.
        .testTarget(name: "MatrixTests", dependencies: ["MatrixClient", "PushRules", "JSONText", "Upstream", "Engine", "Store", "HTTPCore", "TestSupport"]),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "Store", "Upstream", "ChatServerClient", "ChatSimulator", "HTTPCore", "TestSupport"]),
    ]
)
