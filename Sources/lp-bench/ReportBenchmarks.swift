import Foundation

/// RSS of the dashboard holding many parked `/api/poll` requests.
enum ParkedPollsBenchmark {
    static func run(polls: Int) throws -> [ReportLine] {
        let (dashboard, port) = try startDashboard(arguments: ["--db", ":memory:"])
        defer { dashboard.stop() }
        let first = try jsonObject(try httpGet(port: port, path: "/api/poll?since=0&timeout=0"))
        let seq = first["seq"] as? Int ?? 0
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        let request = Array("GET /api/poll?since=\(seq)&timeout=60 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        for _ in 0..<polls {
            let fd = try connectLoopback(port: port)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            sockets.append(fd)
        }
        var parked = 0
        for _ in 0..<2000 where parked < polls {
            let metrics = String(decoding: try httpGet(port: port, path: "/metrics"), as: UTF8.self)
            parked = metrics.split(separator: "\n").first { $0.hasPrefix("lp_feed_parked_polls ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
            if parked < polls { usleep(5000) }
        }
        let rss = try ProcessStats.read(pid: dashboard.pid).residentKiB
        print(String(format: "%d parked polls (%d seen by the feed): RSS %.1f MB", polls, parked, Double(rss) / 1024))
        return [ReportLine(name: "\(polls) parked polls", ours: String(format: "RSS %.1f MB", Double(rss) / 1024), peer: "", ratio: nil,
                           goal: "", met: parked == polls)]
    }
}

/// From starting the process to the first page served.
enum ColdStartBenchmark {
    static func run(rounds: Int) throws -> [ReportLine] {
        var times: [Double] = []
        for _ in 0..<rounds {
            let started = Date()
            let (dashboard, port) = try startDashboard(arguments: ["--db", ":memory:"])
            _ = try httpGet(port: port, path: "/")
            times.append(Date().timeIntervalSince(started) * 1000)
            dashboard.stop()
        }
        print(String(format: "cold start to the first page: median %.1f ms over %d runs", median(times), rounds))
        return [ReportLine(name: "cold start to first page", ours: String(format: "%.1f ms", median(times)), peer: "", ratio: nil,
                           goal: "", met: true)]
    }
}

/// The shared fan-out client against the dashboard and against nginx + Nchan, in one run.
enum FanOutBenchmark {
    static let benchFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/bench").path

    static func run(subscribers: [Int], rounds: Int) throws -> [ReportLine] {
        let client = benchFolder + "/lp_fanout.py"
        guard FileManager.default.fileExists(atPath: client), let python = findExecutable("python3") else {
            throw BenchError("no fan-out client at \(client)")
        }
        let counts = subscribers.map(String.init).joined(separator: ",")
        let (dashboard, port) = try startDashboard(arguments: ["--db", ":memory:", "--always-on"])
        let ours = try results(runCommand(python, [client, "--adapter", "swift", "-n", counts, "-r", String(rounds),
            "--sub-url", "http://127.0.0.1:\(port)/api/poll?since={cursor}&timeout={timeout}&visible=1",
            "--pub-url", "http://127.0.0.1:\(port)/api/simulator/messages", "--server-pid", String(dashboard.pid)]))
        dashboard.stop()
        // nginx daemonizes and keeps our stdout open: run these scripts without capturing it.
        try runUncaptured("/bin/bash", [benchFolder + "/nchan/start.sh"])
        defer { try? runUncaptured("/bin/bash", [benchFolder + "/nchan/stop.sh"]) }
        let peer = try results(runCommand(python, [client, "--adapter", "nchan", "-n", counts, "-r", String(rounds)]))
        return subscribers.compactMap { n in
            guard let mine = ours[n], let theirs = peer[n] else { return nil }
            let ratio = mine / theirs
            return ReportLine(name: "fan-out p99, \(n) subscribers", ours: String(format: "%.2f ms", mine),
                              peer: String(format: "Nchan %.2f ms", theirs), ratio: ratio,
                              goal: n >= 1000 ? "<= 1.0" : "", met: n < 1000 || ratio <= 1)
        }
    }

    /// p99 latency per subscriber count, from the client's JSON lines.
    private static func results(_ output: String) throws -> [Int: Double] {
        var p99: [Int: Double] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("{\"bench\": \"lp_fanout\"") {
            let object = try jsonObject(Data(line.utf8))
            if let n = object["n"] as? Int, let value = object["lat_p99_ms"] as? Double { p99[n] = value }
        }
        return p99
    }
}

func jsonObject(_ data: Data) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw BenchError("not a JSON object") }
    return object
}

/// One GET on a fresh connection; returns the body.
func httpGet(port: Int, path: String) throws -> Data {
    try httpExchange(port: port, request: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
}

/// One request on a fresh connection, read until the server closes it; returns the body.
func httpExchange(port: Int, request text: String) throws -> Data {
    let fd = try connectLoopback(port: port)
    defer { close(fd) }
    let request = Array(text.utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var response = Data()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        response.append(contentsOf: chunk[0..<count])
    }
    guard let split = response.range(of: Data("\r\n\r\n".utf8)) else { throw BenchError("no HTTP response") }
    return response[split.upperBound...]
}

func connectLoopback(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno))) (raise ulimit -n?)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        close(fd)
        throw BenchError("connect: \(String(cString: strerror(errno)))")
    }
    return fd
}

/// Runs a command with its output discarded and waits for it alone: nginx, which it starts,
/// daemonizes and would keep Foundation's `Process` waiting on inherited descriptors.
func runUncaptured(_ executable: String, _ arguments: [String]) throws {
    let command = ([executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    guard system(command + " > /dev/null 2>&1") == 0 else { throw BenchError("\(command) failed") }
}
