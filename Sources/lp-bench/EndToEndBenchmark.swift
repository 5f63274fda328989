import Foundation

/// End-to-end ingest: the real dashboard binary with its built-in simulator, `--always-on`, a
/// store file. Publishes messages through the simulator's control API and measures until the
/// dashboard's `/api/state` shows the last one stored: upstream -> client -> engine -> SQLite.
enum EndToEndBenchmark {
    @discardableResult
    static func run(messages: Int, rounds: Int) throws -> [ReportLine] {
        print("end-to-end ingest: \(messages) messages per round on the primary account, \(rounds) round(s)")
        var rates: [Double] = []
        for round in 1...rounds {
            let folder = NSTemporaryDirectory() + "lp-bench-e2e-\(getpid())-\(round)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let child = try ChildProcess(name: "dashboard", executable: try dashboardBinary(),
                                         arguments: ["--port", "0", "--log-level", "warning", "--always-on", "--db", folder + "/store.sqlite",
                                                     "--quota", "100000000000"])
            defer { child.stop() }
            let simulatorLine = try child.waitForLine(startingWith: "simulator listening on http://")
            let dashboardLine = try child.waitForLine(startingWith: "dashboard listening on http://")
            let simulatorPort = try port(inReadyLine: simulatorLine), dashboard = try BenchEndpoint(readyLine: dashboardLine)
            // Let the engine connect (its first poll is held) before the clock starts.
            _ = try waitFor(dashboard) { $0.state == "live" }
            let start = Date()
            var published = 0
            while published < messages {
                let count = min(100_000, messages - published)
                _ = try postJSON(port: simulatorPort, path: "/sim/messages", body: "{\"account\":\"primary\",\"count\":\(count)}")
                published += count
            }
            _ = try waitFor(dashboard) { $0.primaryCursor >= Int64(messages) }
            let elapsed = Date().timeIntervalSince(start)
            let rate = Double(messages) / elapsed
            rates.append(rate)
            print(String(format: "  round %d: %d messages stored in %.2f s: %.0f msg/s", round, messages, elapsed, rate))
        }
        print(String(format: "median: %.0f msg/s (goal >= 50,000)", median(rates)))
        return [ReportLine(name: "end-to-end ingest, simulator -> engine -> SQLite", ours: "\(Int(median(rates))) msg/s", peer: "",
                           ratio: nil, goal: ">= 50,000 msg/s", met: median(rates) >= 50_000)]
    }

    struct State {
        var state: String
        var primaryCursor: Int64
    }

    /// Reads `/api/state` every 2 ms until `condition` holds (60 s at most).
    private static func waitFor(_ dashboard: BenchEndpoint, _ condition: (State) -> Bool) throws -> State {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let body = try dashboard.get("/api/state")
            let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
            let connection = object["connection"] as? [String: Any]
            let primary = (object["accounts"] as? [String: Any])?["primary"] as? [String: Any]
            let state = State(state: connection?["state"] as? String ?? "", primaryCursor: (primary?["cursor"] as? String).flatMap { Int64($0) } ?? 0)  // the simulator's cursors are its ids
            if condition(state) { return state }
            usleep(2000)
        }
        throw BenchError("timed out waiting for the dashboard")
    }
}
