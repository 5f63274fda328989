import Foundation
import Testing
import TestSupport

/// The dashboard killed with SIGKILL during heavy ingest, again and again: after each restart it
/// syncs on, and in the end every message the upstream sent is stored exactly once.
@Suite("Dashboard crash")
struct DashboardCrashTests {
    static let rounds = Int(ProcessInfo.processInfo.environment["CRASH_ROUNDS"] ?? "") ?? 20

    @Test func sigkillDuringIngestLosesAndDoublesNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = folder + "/store.sqlite"

        let upstream = try ChildProcess("chat-server", ["--port", "0", "--seed", "3"])
        let upstreamURL = String(try #require(await upstream.nextLine()).split(separator: " ").last!)
        let simulatorPort = try #require(Int(upstreamURL.split(separator: ":").last!.dropLast()))
        defer { upstream.signal(SIGTERM) }
        try Self.post(simulatorPort, "/sim/auto", #"{"perSecond": 3000}"#)

        var random = SystemRandomNumberGenerator()
        for round in 1...Self.rounds {
            let dashboard = try ChildProcess("dashboard", ["--port", "0", "--upstream", upstreamURL, "--db", database, "--always-on",
                                                           "--log-level", "error", "--backoff-base-ms", "50", "--backoff-cap-ms", "200"])
            _ = await dashboard.nextLine()
            usleep(UInt32.random(in: 20_000...250_000, using: &random))
            dashboard.signal(SIGKILL)
            let exit = await dashboard.waitForExit()
            #expect(exit.status == SIGKILL, "round \(round)")
        }
        try Self.post(simulatorPort, "/sim/auto", #"{"perSecond": 0}"#)
        let sent = try JSONDecoder().decode([String: [Int64]].self, from: Self.get(simulatorPort, "/sim/sent"))

        // A last, clean run catches up; then the store must hold every sent id exactly once.
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--upstream", upstreamURL, "--db", database, "--always-on",
                                                       "--log-level", "error"])
        let endpoint = try DashboardEndpoint(readyLine: try #require(await dashboard.nextLine()))
        var stored: [String: [Int64]] = [:]
        for _ in 0..<600 {
            stored = try ["primary", "linked"].reduce(into: [:]) { result, account in
                result[account] = try Self.storedIDs(endpoint, account)
            }
            if stored["primary"]?.count == sent["primary"]?.count && stored["linked"]?.count == sent["linked"]?.count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
        for account in ["primary", "linked"] {
            let ids = stored[account] ?? []
            #expect(ids.count == Set(ids).count, "\(account): nothing doubled")
            #expect(ids.sorted() == sent[account], "\(account): \(ids.count) stored of \(sent[account]?.count ?? 0) sent")
        }
        print("crash test: \(Self.rounds) SIGKILLs; sent \(sent["primary"]?.count ?? 0) primary and \(sent["linked"]?.count ?? 0) linked messages, all stored once")
        #expect((sent["primary"]?.count ?? 0) > 100, "there really was heavy ingest")
    }

    static func storedIDs(_ endpoint: DashboardEndpoint, _ account: String) throws -> [Int64] {
        struct Page: Decodable { struct Message: Decodable { var id: Int64 }; var messages: [Message] }
        let data = Data(try endpoint.get("/api/messages?account=\(account)&limit=500").body)
        var ids = try JSONDecoder().decode(Page.self, from: data).messages.map(\.id)
        // Pages of 500, newest first.
        while ids.count % 500 == 0, let oldest = ids.last {
            let more = try JSONDecoder().decode(Page.self, from: Data(endpoint.get("/api/messages?account=\(account)&limit=500&before=\(oldest)").body))
                .messages.map(\.id)
            if more.isEmpty { break }
            ids += more
        }
        return ids
    }

    static func get(_ port: Int, _ path: String, host: String = "x") throws -> Data {
        let client = try RawClient(port: port)
        try client.send("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
        return Data(try client.readResponse().body)
    }

    static func post(_ port: Int, _ path: String, _ body: String) throws {
        let client = try RawClient(port: port)
        try client.send("POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        _ = try client.readResponse()
    }
}
