import Foundation

/// Static serving of a 10 KB file: the dashboard against nginx, wrk with the same settings, same run.
enum StaticBenchmark {
    @discardableResult
    static func run(duration: String, connections: Int, threads: Int, rounds: Int) throws -> [ReportLine] {
        let root = NSTemporaryDirectory() + "lp-bench-static-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let page = String(repeating: "<p>0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz</p>\n", count: 128)
        let body = String(page.prefix(10240))
        try body.write(toFile: root + "/10k.html", atomically: true, encoding: .utf8)
        try "<!doctype html><title>bench</title>".write(toFile: root + "/index.html", atomically: true, encoding: .utf8)

        let nginx = try NginxPeer(root: root)
        defer { nginx.stop() }
        let (dashboard, endpoint) = try startDashboard(arguments: ["--public", root])
        let port = endpoint.port
        defer { dashboard.stop() }

        print("static 10 KB file, wrk -t\(threads) -c\(connections) -d\(duration), \(rounds) round(s), alternating")
        var nginxRates: [Double] = [], dashboardRates: [Double] = []
        for round in 1...rounds {
            let peer = try WrkResult.run(url: "http://127.0.0.1:\(nginx.port)/10k.html", threads: threads,
                                         connections: connections, duration: duration)
            let ours = try WrkResult.run(url: "http://127.0.0.1:\(port)/10k.html", threads: threads,
                                         connections: connections, duration: duration)
            nginxRates.append(peer.requestsPerSecond)
            dashboardRates.append(ours.requestsPerSecond)
            print(String(format: "  round %d: nginx %8.0f req/s (p50 %@, p99 %@)   dashboard %8.0f req/s (p50 %@, p99 %@)   ratio %.2f",
                         round, peer.requestsPerSecond, peer.latencyP50, peer.latencyP99,
                         ours.requestsPerSecond, ours.latencyP50, ours.latencyP99,
                         ours.requestsPerSecond / peer.requestsPerSecond))
            for errors in [peer.errors, ours.errors].compactMap({ $0 }) { print("    \(errors)") }
        }
        let ratios = zip(dashboardRates, nginxRates).map { $0 / $1 }
        print(String(format: "median: nginx %.0f req/s, dashboard %.0f req/s, median of the round ratios %.2f (goal >= 0.60)",
                     median(nginxRates), median(dashboardRates), median(ratios)))
        return [ReportLine(name: "static 10 KB, wrk -t\(threads) -c\(connections) -d\(duration)", ours: "\(Int(median(dashboardRates))) req/s",
                           peer: "nginx \(Int(median(nginxRates))) req/s", ratio: median(ratios), goal: ">= 0.6", met: median(ratios) >= 0.6)]
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
