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
        // Leveled logging to stderr.
        .target(name: "Logging"),
        // SIGINT / SIGTERM as something to await; SIGPIPE ignored.
        .target(name: "Lifecycle"),
        // HTTP/1.1 server core: parser, epoll event loop, connections, static files.
        .target(name: "HTTPCore", dependencies: ["CShims", "Logging"]),
        // The dashboard application: routes, security policy, problem+json.
        .target(name: "DashboardApp", dependencies: ["HTTPCore", "Logging"]),
        // Executables: thin wiring only.
        .executableTarget(name: "dashboard", dependencies: ["DashboardApp", "HTTPCore", "Lifecycle", "Logging"]),
        .executableTarget(name: "lp-bench", dependencies: ["CShims"]),

        // A raw-socket HTTP client the test targets share.
        .target(name: "HTTPTestSupport", path: "Tests/HTTPTestSupport"),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore", "HTTPTestSupport"]),
        .testTarget(name: "DashboardAppTests", dependencies: ["DashboardApp", "HTTPCore", "HTTPTestSupport", "Logging"]),
        .testTarget(name: "DashboardCLITests", dependencies: ["HTTPTestSupport"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
    ]
)
