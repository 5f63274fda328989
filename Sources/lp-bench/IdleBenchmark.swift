import Foundation

/// Memory and CPU of the dashboard at rest: with no clients, then holding many idle keep-alive
/// connections (each has made one request, as a browser tab's connection would).
enum IdleBenchmark {
    static func run(connections: Int, seconds: Int) throws {
        let (dashboard, port) = try startDashboard()
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
        print(String(format: "a new client beside them: %@ in %.2f ms", answered ? "answered" : "NOT answered",
                     Date().timeIntervalSince(probeStart) * 1000))
    }

    private static func measure(pid: Int32, seconds: Int) throws -> (rss: Int, ticks: Int, cpuPercent: Double) {
        let before = try ProcessStats.read(pid: pid)
        sleep(UInt32(seconds))
        let after = try ProcessStats.read(pid: pid)
        let ticks = after.cpuTicks - before.cpuTicks
        return (after.residentKiB, ticks, Double(ticks) / ProcessStats.ticksPerSecond / Double(seconds) * 100)
    }

    private static func connectLoopback(port: Int) throws -> Int32 {
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
}
