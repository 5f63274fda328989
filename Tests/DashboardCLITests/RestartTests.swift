import Foundation
import Testing
import TestSupport

/// The real binary stopped and started again, as a person does: the built-in simulator keeps its
/// world beside a persistent store, and an external server that went back is noticed.
@Suite("Restarts")
struct RestartTests {
    private static func primaryCursor(_ state: [String: Any]) -> Int? {
        (state[path: "accounts", "primary", "cursor"] as? String).flatMap { Int($0) }
    }

    private static func errorTypes(_ state: [String: Any]) -> [String] {
        (state["errors"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String }
    }

    @Test func theBuiltInSimulatorKeepsItsWorldAndTheBoughtQuotaAcrossARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("restart-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = ["--port", "0", "--db", folder + "/store.sqlite", "--always-on", "--no-demo", "--log-level", "warning"]

        let first = try await RunningDashboard(arguments)
        try await first.simulator("/sim/messages", #"{"account": "primary", "count": 5}"#)
        var state = try await first.state { Self.primaryCursor($0) == 5 }
        #expect(Self.primaryCursor(state) == 5)
        // Fill the storage and buy more, through the dashboard, as the page does.
        let used = state[path: "storage", "usedBytes"] as? Int ?? 0
        try await first.simulator("/sim/quota", #"{"bytes": \#(used + 100)}"#)
        _ = try await first.state { $0[path: "storage", "quotaBytes"] as? Int == used + 100 }
        try await first.simulator("/sim/messages", #"{"account": "primary", "count": 20}"#)
        state = try await first.state { Self.errorTypes($0).contains("/problems/out-of-space") }
        let error = try #require((state["errors"] as? [[String: Any]])?.first { $0["type"] as? String == "/problems/out-of-space" })
        let bought = try await first.post("/api/errors/\(error["id"] as? String ?? "")/attempts", #"{"option": "buy-space"}"#,
                                          extraHeaders: ["Idempotency-Key": "restart-test"])
        #expect(bought.body["status"] as? String == "recovered")
        state = try await first.state { Self.primaryCursor($0) == 25 }
        let boughtQuota = try #require(state[path: "storage", "quotaBytes"] as? Int)
        #expect(boughtQuota > used + 100)
        #expect(await first.stop().status == 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/store.simulator.sqlite"), "the simulator's world beside the store")

        let second = try await RunningDashboard(arguments)
        try await second.simulator("/sim/messages", #"{"account": "primary", "count": 3}"#)
        state = try await second.state { Self.primaryCursor($0) == 28 }
        #expect(Self.primaryCursor(state) == 28, "the three new messages arrive after the restart")
        #expect(state[path: "connection", "state"] as? String == "live")
        #expect(Self.errorTypes(state).isEmpty)
        #expect(state[path: "storage", "quotaBytes"] as? Int == boughtQuota, "the purchase is not forgotten")
        let page = try await second.json("/api/messages?account=primary&limit=500")
        let ids = (page["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        #expect(ids.sorted() == Array(1...28), "every message once")
        #expect(await second.stop().status == 0)
    }

    @Test func theAccessTokenIsKeptBesideTheStoreUnlessANewOneIsAskedFor() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = ["--port", "0", "--db", folder + "/store.sqlite", "--no-demo", "--log-level", "warning"]

        let first = try await RunningDashboard(arguments)
        let token = try #require(first.token)
        #expect(await first.stop().status == 0)
        let tokenFile = folder + "/store.token"
        let attributes = try FileManager.default.attributesOfItem(atPath: tokenFile)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "readable by its owner only")
        #expect(try String(contentsOfFile: tokenFile, encoding: .utf8).contains(token))

        let second = try await RunningDashboard(arguments)
        #expect(second.token == token, "a page left open goes on with the same cookie")
        #expect(try await second.json("/api/session")["csrfToken"] is String, "and reads with it")
        #expect(await second.stop().status == 0)

        let renewed = try await RunningDashboard(arguments + ["--new-token"])
        #expect(renewed.token != nil && renewed.token != token, "--new-token makes a new one")
        #expect(await renewed.stop().status == 0)
        let afterRenewal = try await RunningDashboard(arguments)
        #expect(afterRenewal.token == renewed.token, "and that one is kept")
        #expect(await afterRenewal.stop().status == 0)

        let memory = ["--port", "0", "--db", ":memory:", "--log-level", "warning"]
        let once = try await RunningDashboard(memory)
        #expect(await once.stop().status == 0)
        let again = try await RunningDashboard(memory)
        #expect(again.token != once.token, "with nothing kept, the token lives for one launch")
        #expect(await again.stop().status == 0)
    }

    @Test func anExternalServerThatWentBackIsNoticedAndResyncLosesNothing() async throws {
        let server = try ChildProcess("chat-server", ["--port", "0"])
        let serverLine = try #require(await server.nextLine())
        let serverPort = try #require(URL(string: String(serverLine.split(separator: " ").last!))?.port)
        let dashboard = try await RunningDashboard(["--port", "0", "--db", ":memory:", "--always-on", "--log-level", "warning",
                                                    "--upstream", "http://127.0.0.1:\(serverPort)/", "--backoff-base-ms", "100", "--backoff-cap-ms", "500"])
        try await RunningDashboard.call(port: serverPort, "/sim/messages", #"{"account": "primary", "count": 5}"#)
        _ = try await dashboard.state { Self.primaryCursor($0) == 5 }

        // The server restarts with nothing kept: it numbers from 1 again, below the cursor.
        server.signal(SIGTERM)
        _ = await server.waitForExit()
        let restarted = try ChildProcess("chat-server", ["--port", "\(serverPort)"])
        _ = await restarted.nextLine()
        defer { restarted.signal(SIGTERM) }
        try await RunningDashboard.call(port: serverPort, "/sim/messages", #"{"account": "primary", "count": 2, "text": "after"}"#)
        var state = try await dashboard.state { Self.errorTypes($0).contains("/problems/upstream-behind") }
        #expect(state[path: "connection", "state"] as? String == "paused", "not Live while messages wait")
        let metrics = try await RawClient.run { [port = dashboard.port, authorization = dashboard.authorization] in
            let client = try RawClient(port: port)
            try client.send(rawGet("/metrics", host: "127.0.0.1:\(port)", extraHeaders: authorization))
            return try client.readResponse().text
        }
        #expect(metrics.contains("lp_engine_upstream_behind_total 1"), "counted in /metrics")

        let error = try #require((state["errors"] as? [[String: Any]])?.first)
        #expect((error["options"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["stop-syncing", "resync"])
        let answer = try await dashboard.post("/api/errors/\(error["id"] as? String ?? "")/attempts", #"{"option": "resync"}"#,
                                              extraHeaders: ["Idempotency-Key": "resync"])
        #expect(answer.body["status"] as? String == "recovered")
        let summary = answer.body["summary"] as? String ?? ""
        #expect(summary.hasPrefix("5 messages were set aside") && summary.contains("this computer's copy"),
                "the page is told where the messages it no longer shows are: \(summary)")
        state = try await dashboard.state { Self.primaryCursor($0) == 2 }
        let page = try await dashboard.json("/api/messages?account=primary&limit=500")
        let texts = (page["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(texts == ["after", "after"], "the server's messages now, once each")
        #expect(state[path: "connection", "state"] as? String == "live")
        #expect(await dashboard.stop().status == 0)
    }
}
