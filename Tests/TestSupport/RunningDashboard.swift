import Foundation

/// The `dashboard` binary running as a child process, with its API a call away: JSON reads,
/// state-changing posts with the session's CSRF token, the built-in simulator's control calls,
/// and waiting on the dashboard's own feed for a condition (no fixed sleeps).
public final class RunningDashboard: Sendable {
    public let process: ChildProcess
    public let port: Int
    /// The built-in simulator's port, when there is one.
    public let simulatorPort: Int?
    /// The access token from the ready line (nil with `--no-auth`).
    public let token: String?

    public convenience init(_ arguments: [String], environment: [String: String] = [:]) async throws {
        try await self.init(process: try ChildProcess("dashboard", arguments, environment: environment))
    }

    /// The dashboard started some other way (e.g. by `unshare`, which then `exec`s it).
    public init(process: ChildProcess) async throws {
        self.process = process
        var line = await process.nextLine() ?? ""
        var simulator: Int?
        if line.hasPrefix("simulator listening on ") {
            simulator = Self.port(in: line)
            line = await process.nextLine() ?? ""
        }
        guard line.hasPrefix("dashboard listening on "), let port = Self.port(in: line) else {
            throw RunningDashboardError.noListeningLine(line)
        }
        self.port = port
        simulatorPort = simulator
        token = Self.token(in: line)
    }

    /// `TOKEN` of a ready line `dashboard listening on http://HOST:PORT/?token=TOKEN`.
    public static func token(in line: String) -> String? {
        URLComponents(string: String(line.split(separator: " ").last ?? ""))?.queryItems?.first { $0.name == "token" }?.value
    }

    /// The header that lets a client read: `Authorization: Bearer TOKEN\r\n`, or nothing with `--no-auth`.
    public var authorization: String {
        token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
    }

    private static func port(in line: String) -> Int? {
        guard let url = URL(string: String(line.split(separator: " ").last ?? "")) else { return nil }
        return url.port
    }

    public var host: String { "127.0.0.1:\(port)" }

    /// A GET with the token, the answer as it came (status, headers, bytes).
    public func fetch(_ path: String) async throws -> RawClient.Response {
        let host = self.host, port = self.port, authorization = self.authorization
        return try await RawClient.run {
            let client = try RawClient(port: port, timeoutSeconds: 70)
            try client.send(rawGet(path, host: host, extraHeaders: authorization))
            return try client.readResponse()
        }
    }

    /// A GET of the dashboard's API, decoded as a JSON object.
    public func json(_ path: String) async throws -> [String: Any] {
        let host = self.host, port = self.port, authorization = self.authorization
        let response = try await RawClient.run {
            let client = try RawClient(port: port, timeoutSeconds: 70)
            try client.send(rawGet(path, host: host, extraHeaders: authorization))
            return try client.readResponse()
        }
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }

    /// A POST to the dashboard's API with the CSRF token (and `extraHeaders`); status and JSON body.
    public func post(_ path: String, _ body: String = "{}", extraHeaders: [String: String] = [:]) async throws -> (status: Int, body: [String: Any]) {
        try await send("POST", path, body, extraHeaders: extraHeaders)
    }

    /// A state-changing request (`method`: POST, DELETE, ...) with the CSRF token; status and JSON body.
    public func send(_ method: String, _ path: String, _ body: String = "", extraHeaders: [String: String] = [:]) async throws -> (status: Int, body: [String: Any]) {
        let csrf = try await json("/api/session")["csrfToken"] as? String ?? ""
        let host = self.host, port = self.port
        let headers = authorization + extraHeaders.map { "\($0.key): \($0.value)\r\n" }.joined()
        let response = try await RawClient.run {
            let client = try RawClient(port: port, timeoutSeconds: 70)
            try client.send("\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nX-CSRF-Token: \(csrf)\r\n"
                + "\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
            return try client.readResponse()
        }
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:])
    }

    /// A call to the built-in simulator's control API (`/sim/...`) on its own port.
    @discardableResult
    public func simulator(_ path: String, _ body: String? = nil) async throws -> [String: Any] {
        guard let port = simulatorPort else { throw RunningDashboardError.noSimulator }
        return try await Self.call(port: port, path, body)
    }

    /// A call to any chat server of this project's protocol on `port`.
    @discardableResult
    public static func call(port: Int, _ path: String, _ body: String? = nil) async throws -> [String: Any] {
        let response = try await RawClient.run {
            let client = try RawClient(port: port, timeoutSeconds: 30)
            if let body {
                try client.send("POST \(path) HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            } else {
                try client.send(rawGet(path, host: "sim"))
            }
            return try client.readResponse()
        }
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }

    /// Reads `/api/state` until `condition` holds, waiting on the feed between reads (each poll
    /// returns when something changes). Gives up after `rounds` changes.
    public func state(until condition: ([String: Any]) -> Bool, rounds: Int = 60) async throws -> [String: Any] {
        var state = try await json("/api/state")
        for _ in 0..<rounds {
            if condition(state) { return state }
            let seq = state["seq"] as? Int ?? 0
            _ = try await json("/api/poll?since=\(seq)&timeout=10&visible=1")
            state = try await json("/api/state")
        }
        return state
    }

    deinit {
        // A test that failed before `stop()` leaves no dashboard behind.
        if process.isRunning { process.signal(SIGKILL) }
    }

    /// Kills it with SIGKILL (nothing of it runs to an end) and returns how it exited.
    public func kill() async -> ChildProcess.Exit {
        process.signal(SIGKILL)
        return await process.waitForExit()
    }

    /// Stops it with SIGTERM and returns how it exited.
    public func stop() async -> ChildProcess.Exit {
        process.signal(SIGTERM)
        return await process.waitForExit()
    }
}

public enum RunningDashboardError: Error {
    case noListeningLine(String)
    case noSimulator
}

/// Small readers for the untyped JSON the API tests look at.
public extension Dictionary where Key == String, Value == Any {
    subscript(path path: String...) -> Any? {
        var current: Any? = self
        for key in path {
            current = (current as? [String: Any])?[key]
        }
        return current
    }
}

/// Where a dashboard answers, read from its ready line (`dashboard listening on
/// http://HOST:PORT/?token=TOKEN`): the port and the access token, with blocking calls that
/// carry the token, for tests that talk to the dashboard from a thread of their own.
public struct DashboardEndpoint: Sendable {
    public let port: Int
    public let token: String?

    public init(readyLine: String) throws {
        guard let url = URL(string: String(readyLine.split(separator: " ").last ?? "")), let port = url.port else {
            throw RunningDashboardError.noListeningLine(readyLine)
        }
        self.port = port
        token = RunningDashboard.token(in: readyLine)
    }

    public var host: String { "127.0.0.1:\(port)" }

    /// `Authorization: Bearer TOKEN\r\n`, or nothing without a token.
    public var authorization: String {
        token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
    }

    /// A GET with the token, on a connection of its own (closed after the answer).
    public func get(_ path: String, timeoutSeconds: Int = 10) throws -> RawClient.Response {
        let client = try RawClient(port: port, timeoutSeconds: timeoutSeconds)
        try client.send("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(authorization)Connection: close\r\n\r\n")
        return try client.readResponse()
    }

    public func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(get(path).body)) as? [String: Any] ?? [:]
    }

    /// A POST with the token and the page's CSRF token, as the page sends it.
    public func post(_ path: String, _ body: String, extraHeaders: String = "") throws -> RawClient.Response {
        let csrf = try json("/api/session")["csrfToken"] as? String ?? ""
        let client = try RawClient(port: port)
        try client.send("POST \(path) HTTP/1.1\r\nHost: \(host)\r\n\(authorization)Content-Type: application/json\r\nX-CSRF-Token: \(csrf)\r\n"
            + "\(extraHeaders)Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return try client.readResponse()
    }
}
