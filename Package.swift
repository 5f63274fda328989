// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "LongPollDashboard",
    products: [
        .executable(name: "dashboard", targets: ["dashboard"]),
        .executable(name: "lp-bench", targets: ["lp-bench"]),
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
        .target(name: "Store", dependencies: ["SQLite"]),
        // Leveled logging to stderr.
        .target(name: "Logging"),
        // SIGINT / SIGTERM as something to await; SIGPIPE ignored.
        .target(name: "Lifecycle"),
        // HTTP/1.1 server core: parser, epoll event loop, connections, static files.
        .target(name: "HTTPCore", dependencies: ["CShims", "Logging"]),
        // The dashboard application: routes, security policy, problem+json.
        .target(name: "DashboardApp", dependencies: ["HTTPCore", "Store", "Logging"]),
        // Executables: thin wiring only.
        .executableTarget(name: "dashboard", dependencies: ["DashboardApp", "HTTPCore", "Store", "Lifecycle", "Logging"]),
        .executableTarget(name: "lp-bench", dependencies: ["Store", "SQLite"]),
        // Test helper: ingests into a store until killed (the crash-safety test SIGKILLs it).
        .executableTarget(name: "store-ingest-loop", dependencies: ["Store"]),

        // What the test targets share: a raw-socket HTTP client, a child-process runner.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore", "TestSupport"]),
        .testTarget(name: "DashboardAppTests", dependencies: ["DashboardApp", "HTTPCore", "Store", "TestSupport", "Logging"]),
        .testTarget(name: "DashboardCLITests", dependencies: ["TestSupport"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "SQLite", "TestSupport"]),
    ]
)
