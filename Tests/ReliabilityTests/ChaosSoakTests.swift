import Foundation
import Synchronization
import Testing
import TestSupport

/// Every fault kind at random (seeded) while messages flow on both accounts and the linked account
/// flips, checked all along: one active cycle at most, the feed never repeats a message to a
/// poller, `/healthz` answers; at the end every sent message is stored exactly once.
/// `SOAK_SECONDS` (default 8) makes the long mode: `SOAK_SECONDS=600 swift test --filter ChaosSoak`.
@Suite("Chaos soak")
struct ChaosSoakTests {
    static let seconds = Double(ProcessInfo.processInfo.environment["SOAK_SECONDS"] ?? "") ?? 8

    @Test func invariantsHoldUnderEveryFault() async throws {
        let upstream = try ChildProcess("chat-server", ["--port", "0", "--seed", "11"])
        let upstreamURL = String(try #require(await upstream.nextLine()).split(separator: " ").last!)
        let simulator = try #require(Int(upstreamURL.split(separator: ":").last!.dropLast()))
        defer { upstream.signal(SIGTERM) }
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--upstream", upstreamURL, "--db", ":memory:", "--always-on",
                                                       "--log-level", "error", "--backoff-base-ms", "20", "--backoff-cap-ms", "200"])
        let endpoint = try DashboardEndpoint(readyLine: try #require(await dashboard.nextLine()))
        let port = endpoint.port

        let poller = FeedPoller(endpoint: endpoint)
        let pollThread = Thread { poller.run() }
        pollThread.start()

        var random = TestRandom(seed: 7)
        let faults = ["offline", "error500", "slow", "malformed", "drop", "none", "none"]
        let deadline = Date().addingTimeInterval(Self.seconds)
        var flips = 0, checks = 0
        try Self.post(simulator, "/sim/auto", #"{"perSecond": 400}"#)
        while Date() < deadline {
            let fault = faults[Int(random.next() % UInt64(faults.count))]
            let rate = [0.2, 0.5, 1.0][Int(random.next() % 3)]
            try Self.post(simulator, "/sim/faults", "{\"mode\": \"\(fault)\", \"rate\": \(rate)}")
            if random.next() % 6 == 0 {
                flips += 1
                try Self.post(simulator, "/sim/linked", "{\"linked\": \(flips % 2 == 0)}")
            }
            for _ in 0..<5 {
                try await Task.sleep(for: .milliseconds(30))
                let state = try endpoint.json("/api/state")
                let connection = state["connection"] as? [String: Any]
                #expect((connection?["activeCycles"] as? Int ?? 2) <= 1, "at most one active cycle")
                #expect(try Self.get(port, "/healthz") == "ok")
                checks += 1
            }
        }
        try Self.post(simulator, "/sim/auto", #"{"perSecond": 0}"#)
        try Self.post(simulator, "/sim/faults", #"{"mode": "none"}"#)
        try Self.post(simulator, "/sim/linked", #"{"linked": true}"#)
        try Self.post(simulator, "/sim/messages", #"{"account": "linked", "count": 1}"#)

        // Settle: the engine catches up once the faults stop.
        let sent = try JSONDecoder().decode([String: [Int64]].self, from: Data(Self.get(simulator, "/sim/sent").utf8))
        var stored: [String: [Int64]] = [:]
        for _ in 0..<600 {
            stored = try ["primary", "linked"].reduce(into: [:]) { $0[$1] = try DashboardCrashTests.storedIDs(endpoint, $1) }
            if stored["primary"]?.count == sent["primary"]?.count && stored["linked"]?.count == sent["linked"]?.count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        poller.stop()
        for account in ["primary", "linked"] {
            let ids = stored[account] ?? []
            #expect(ids.count == Set(ids).count, "\(account): stored once")
            #expect(ids.sorted() == sent[account], "\(account): \(ids.count) stored of \(sent[account]?.count ?? 0) sent")
        }
        let report = poller.report()
        #expect(report.repeats == 0, "the feed repeated \(report.repeats) message(s)")
        #expect(report.delivered > 0)
        print("chaos soak: \(Self.seconds) s, \(flips) linked flips, \(checks) checks, \(sent["primary"]?.count ?? 0) primary messages, "
              + "\(report.delivered) deliveries to the poller, \(report.resets) resets, 0 repeats")
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
    }

    static func get(_ port: Int, _ path: String) throws -> String {
        let client = try RawClient(port: port)
        try client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        return try client.readResponse().text
    }

    static func json(_ port: Int, _ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(get(port, path).utf8)) as? [String: Any] ?? [:]
    }

    static func post(_ port: Int, _ path: String, _ body: String) throws {
        try DashboardCrashTests.post(port, path, body)
    }
}

/// A page's feed loop, on its own thread: counts deliveries and any message delivered twice.
final class FeedPoller: Sendable {
    private let endpoint: DashboardEndpoint
    private let state = Mutex<(stop: Bool, seen: Set<String>, delivered: Int, repeats: Int, resets: Int)>((false, [], 0, 0, 0))

    init(endpoint: DashboardEndpoint) { self.endpoint = endpoint }

    func stop() { state.withLock { $0.stop = true } }

    func report() -> (delivered: Int, repeats: Int, resets: Int) {
        state.withLock { ($0.delivered, $0.repeats, $0.resets) }
    }

    func run() {
        var since = 0
        var epoch = ""
        var linkedGeneration = 0
        while !state.withLock({ $0.stop }) {
            guard let response = try? endpoint.get("/api/poll?since=\(since)&epoch=\(epoch)&timeout=1&visible=1", timeoutSeconds: 5),
                  let answer = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else { continue }
            epoch = answer["epoch"] as? String ?? epoch
            since = answer["seq"] as? Int ?? since
            if answer["reset"] as? Bool == true {
                state.withLock { $0.resets += 1 }
                continue
            }
            for event in answer["events"] as? [[String: Any]] ?? [] {
                let type = event["type"] as? String
                if type == "account.linked" || type == "account.unlinked" { linkedGeneration += 1 }
                guard type == "messages", let data = event["data"] as? [String: Any], let account = data["account"] as? String else { continue }
                for message in data["messages"] as? [[String: Any]] ?? [] {
                    let key = "\(account)/\(account == "linked" ? linkedGeneration : 0)/\(message["id"] as? Int ?? -1)"
                    state.withLock { state in
                        state.delivered += 1
                        if !state.seen.insert(key).inserted { state.repeats += 1 }
                    }
                }
            }
        }
    }
}
