import Foundation

/// A program the benchmark starts and stops: the dashboard under test or a peer server.
final class ChildProcess {
    let process = Process()
    private let stdout = Pipe()
    private let stdin: Pipe?
    let name: String

    /// `environment` adds to this process's own; `takesInput` gives the child a stdin for `send`.
    /// `stderrFile`: where the child's stderr goes instead (a log kept to read after the run).
    init(name: String, executable: String, arguments: [String], quietStderr: Bool = true, environment: [String: String] = [:],
         takesInput: Bool = false, stderrFile: String? = nil) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = stdout
        if let stderrFile, FileManager.default.createFile(atPath: stderrFile, contents: nil), let file = FileHandle(forWritingAtPath: stderrFile) {
            process.standardError = file
        } else {
            process.standardError = quietStderr ? FileHandle.nullDevice : FileHandle.standardError
        }
        stdin = takesInput ? Pipe() : nil
        process.standardInput = stdin ?? FileHandle.nullDevice
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
    }

    /// Writes `line` and a newline to the child's stdin (a child started with `takesInput`).
    func send(_ line: String) throws {
        guard let stdin else { throw BenchError("\(name) was started without a stdin") }
        try stdin.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    var pid: Int32 { process.processIdentifier }

    /// What was read from stdout and not yet consumed by `waitForLine`.
    private var unread = ""

    /// Reads stdout until a line starting with `prefix`; returns that line. Lines after it stay
    /// for the next call (two ready lines often come in one read).
    func waitForLine(startingWith prefix: String) throws -> String {
        let handle = stdout.fileHandleForReading
        while true {
            while let end = unread.firstIndex(of: "\n") {
                let line = String(unread[..<end])
                unread.removeSubrange(...end)
                if line.hasPrefix(prefix) { return line }
            }
            let data = handle.availableData
            if data.isEmpty { throw BenchError("\(name) exited before printing \(prefix.debugDescription)") }
            unread += String(decoding: data, as: UTF8.self)
        }
    }

    func stop() {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        process.waitUntilExit()
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a command to completion and returns its stdout.
func runCommand(_ executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.standardError
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchError("\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self)
}

/// The first of `names` found on PATH (or as given when absolute).
func findExecutable(_ names: String...) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for name in names {
        if name.hasPrefix("/") { if FileManager.default.isExecutableFile(atPath: name) { return name } else { continue } }
        let folders: [String] = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        for folder in folders {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
    }
    return nil
}

/// A free loopback port, found by binding port 0 and letting go of it.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw BenchError("cannot find a free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The dashboard binary built in the same configuration as this benchmark.
func dashboardBinary() throws -> String {
    let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    let path = folder.appendingPathComponent("dashboard").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw BenchError("no dashboard binary next to lp-bench; run `swift build -c release` first")
    }
    return path
}

/// Where a started dashboard answers: its port and the access token from its ready line.
struct BenchEndpoint {
    var port: Int
    var token: String?

    /// From `dashboard listening on http://HOST:PORT/?token=TOKEN`.
    init(readyLine line: String) throws {
        guard let url = URLComponents(string: String(line.split(separator: " ").last ?? "")), let port = url.port else {
            throw BenchError("cannot read the port from \(line.debugDescription)")
        }
        self.port = port
        token = url.queryItems?.first { $0.name == "token" }?.value
    }

    init(port: Int, token: String?) {
        self.port = port
        self.token = token
    }

    /// `Authorization: Bearer TOKEN\r\n`, or nothing.
    var authorization: String { token.map { "Authorization: Bearer \($0)\r\n" } ?? "" }

    /// One GET of a protected path with the token.
    func get(_ path: String) throws -> Data {
        try httpGet(port: port, path: path, headers: authorization)
    }
}

/// Starts the dashboard on a free port; returns the process and where it answers.
func startDashboard(arguments: [String] = []) throws -> (ChildProcess, endpoint: BenchEndpoint) {
    let child = try ChildProcess(name: "dashboard", executable: try dashboardBinary(),
                                 arguments: ["--port", "0", "--log-level", "warning"] + arguments)
    let line = try child.waitForLine(startingWith: "dashboard listening on http://")
    return (child, try BenchEndpoint(readyLine: line))
}

/// The port of a ready line such as `simulator listening on http://127.0.0.1:PORT/`.
func port(inReadyLine line: String) throws -> Int {
    guard let port = Int(line.split(separator: ":").last?.dropLast() ?? "") else { throw BenchError("no port in \(line)") }
    return port
}

/// One JSON POST on a fresh connection (the simulator's `/sim/...` control calls); returns the body.
func postJSON(port: Int, path: String, body: String) throws -> Data {
    try httpExchange(port: port, request: "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
}
