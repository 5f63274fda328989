import Foundation

/// Memory and CPU of the dashboard at rest: with no clients, then holding many idle keep-alive
/// connections (each has made one request, as a browser tab's connection would).
enum IdleBenchmark {
    @discardableResult
    static func run(connections: Int, seconds: Int) throws -> [ReportLine] {
        let (dashboard, endpoint) = try startDashboard(arguments: ["--db", ":memory:"])  // never the person's own store
        let port = endpoint.port
        defer { dashboard.stop() }
        let pid = dashboard.pid

        let bare = try measure(pid: pid, seconds: seconds)
        print(String(format: "no clients: RSS %.1f MB, CPU %.2f%% over %d s (%d ticks)",
                     Double(bare.rss) / 1024, bare.cpuPercent, seconds, bare.ticks))

        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let started = Date()
        for index in 0..<connections {
            let fd = try connectLoopback(port: port)
            sockets.append(fd)
            guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count,
                  buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0
            else {
                throw BenchError("connection \(index) got no answer")
            }
        }
        print(String(format: "opened %d keep-alive connections, one request each, in %.2f s", connections,
                     Date().timeIntervalSince(started)))
        let held = try measure(pid: pid, seconds: seconds)
        print(String(format: "%d idle connections: RSS %.1f MB (goal < 80 MB), CPU %.2f%% over %d s (%d ticks)",
                     connections, Double(held.rss) / 1024, held.cpuPercent, seconds, held.ticks))

        let probe = try connectLoopback(port: port)
        defer { close(probe) }
        let probeStart = Date()
        _ = request.withUnsafeBytes { send(probe, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let answered = buffer.withUnsafeMutableBytes { recv(probe, $0.baseAddress, $0.count, 0) } > 0
        let probeMilliseconds = Date().timeIntervalSince(probeStart) * 1000
        print(String(format: "a new client beside them: %@ in %.2f ms", answered ? "answered" : "NOT answered", probeMilliseconds))
        return [
            ReportLine(name: "idle, no clients", ours: String(format: "RSS %.1f MB, CPU %.2f %%", Double(bare.rss) / 1024, bare.cpuPercent),
                       peer: "", ratio: nil, goal: "no busy polling", met: bare.ticks <= 1),
            ReportLine(name: "\(connections) idle keep-alive connections", ours: String(format: "RSS %.1f MB, CPU %.2f %%", Double(held.rss) / 1024, held.cpuPercent),
                       peer: "", ratio: nil, goal: "RSS < 80 MB", met: held.rss < 80 * 1024),
            ReportLine(name: "a new request beside them", ours: String(format: "%.2f ms", probeMilliseconds), peer: "", ratio: nil,
                       goal: "< 50 ms", met: answered && probeMilliseconds < 50),
        ]
    }

    private static func measure(pid: Int32, seconds: Int) throws -> (rss: Int, ticks: Int, cpuPercent: Double) {
        let before = try ProcessStats.read(pid: pid)
        sleep(UInt32(seconds))
        let after = try ProcessStats.read(pid: pid)
        let ticks = after.cpuTicks - before.cpuTicks
        return (after.residentKiB, ticks, Double(ticks) / ProcessStats.ticksPerSecond / Double(seconds) * 100)
    }

}
