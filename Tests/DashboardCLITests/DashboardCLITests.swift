import Foundation
import Testing
import TestSupport

/// The `dashboard` executable as a user meets it: flags, the listening line, signals.
@Suite("dashboard command line")
struct DashboardCLITests {
    @Test func helpListsTheFlagsAndExitsZero() async throws {
        let exit = try await ChildProcess.run("dashboard", ["--help"])
        #expect(exit.status == 0)
        #expect(exit.stdout.contains("Usage: dashboard"))
        #expect(exit.stdout.contains("--port"))
    }

    @Test func theHelpAndTheCommandLineArticleListTheSameFlags() async throws {
        let help = try await ChildProcess.run("dashboard", ["--help"]).stdout
        // The README's command-line reference is the DocC article it links to.
        let section = try String(contentsOf: BrowserTests.repositoryRoot.appendingPathComponent("Sources/DashboardApp/DashboardApp.docc/CommandLine.md"),
                                 encoding: .utf8)
        let flag = /--[a-z][a-z-]+/
        let inHelp = Set(help.matches(of: flag).map { String($0.output) })
        let inREADME = Set(section.matches(of: flag).map { String($0.output) })
        #expect(inHelp.subtracting(inREADME).isEmpty, "in --help, not in the README: \(inHelp.subtracting(inREADME).sorted())")
        #expect(inREADME.subtracting(inHelp).subtracting(["--seed", "--no-linked", "--data"]).isEmpty,
                "in the README, not in --help: \(inREADME.subtracting(inHelp).sorted())")
    }

    @Test func versionPrintsOneLine() async throws {
        let exit = try await ChildProcess.run("dashboard", ["--version"])
        #expect(exit.status == 0)
        #expect(exit.stdout.hasPrefix("dashboard "))
    }

    @Test(arguments: [["--port", "99999"], ["--bogus"], ["--log-level"], ["extra"], ["--public", "/nonexistent"],
                      ["--upstream", "ftp://x"], ["--upstream", "https://example.org/"], ["--quota", "-5"],
                      ["--backoff-base-ms", "0"], ["--backoff-base-ms", "5000", "--backoff-cap-ms", "100"],
                      ["--host", "192.0.2.1", "--port", "0", "--db", ":memory:"]])
    func badFlagsExitTwoWithOneLine(_ arguments: [String]) async throws {
        let exit = try await ChildProcess.run("dashboard", arguments)
        #expect(exit.status == 2)
        #expect(exit.stdout.isEmpty)
        let lines = exit.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(exit.stderr)")
        #expect(lines.first?.hasPrefix("dashboard: ") == true)
    }

    /// Reads the simulator's line (printed first when it is built in) and the dashboard's.
    private func readyLines(_ process: ChildProcess) async throws -> (simulator: String?, dashboard: String) {
        var first = try #require(await process.nextLine())
        var simulator: String?
        if first.hasPrefix("simulator listening on ") {
            simulator = first
            first = try #require(await process.nextLine())
        }
        return (simulator, first)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func servesAfterTheListeningLineAndStopsCleanlyOnSignal(_ signal: Int32) async throws {
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--db", ":memory:"])
        let (simulatorLine, line) = try await readyLines(dashboard)
        #expect(simulatorLine?.hasPrefix("simulator listening on http://127.0.0.1:") == true, "the built-in simulator comes first")
        let prefix = "dashboard listening on http://127.0.0.1:"
        #expect(line.wholeMatch(of: /dashboard listening on http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}/) != nil, "\(line)")
        let port = try #require(URL(string: String(line.dropFirst("dashboard listening on ".count)))?.port)
        #expect(port > 0 && line.hasPrefix(prefix))

        // An idle keep-alive connection must not keep the process alive.
        let client = try RawClient(port: port)
        try client.send(rawGet("/", host: "127.0.0.1:\(port)"))
        let page = try client.readResponse()
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")

        dashboard.signal(signal)
        let exit = await dashboard.waitForExit()
        #expect(!exit.timedOut)
        #expect(exit.status == 0)
        #expect(client.waitForClose())
        #expect(exit.stdout == simulatorLine! + "\n" + line + "\n", "stdout holds only the two listening lines; logs go to stderr")
    }

    @Test func aPortInUseIsAClearError() async throws {
        let first = try ChildProcess("dashboard", ["--port", "0", "--db", ":memory:"])
        let line = try await readyLines(first).dashboard
        let port = String(try #require(URL(string: String(line.split(separator: " ").last!))?.port))
        let second = try await ChildProcess.run("dashboard", ["--port", port, "--db", ":memory:"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(port)"))
        first.signal(SIGTERM)
        #expect(await first.waitForExit().status == 0)
    }

    @Test func theStoreIsCreatedWhereDbSaysAndKeptAcrossRuns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-db-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let missing = try await ChildProcess.run("dashboard", ["--port", "0", "--db", folder + "/nested/store.sqlite"])
        #expect(missing.status == 1, "a folder that is not there is not made: a typo must not scatter folders")
        #expect(missing.stderr.hasPrefix("dashboard: cannot open the store at \(folder)/nested/store.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: folder))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/store.sqlite"
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--db", path])
        _ = try await readyLines(dashboard)
        #expect(FileManager.default.fileExists(atPath: path))
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
    }

    @Test func theDefaultStoreFollowsXDGDataHome() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-xdg-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let dashboard = try ChildProcess("dashboard", ["--port", "0"], environment: ["XDG_DATA_HOME": folder])
        _ = try await readyLines(dashboard)
        #expect(FileManager.default.fileExists(atPath: folder + "/lp-dashboard/store.sqlite"))
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
    }

    @Test func aStoreThatCannotBeOpenedIsAClearError() async throws {
        let exit = try await ChildProcess.run("dashboard", ["--port", "0", "--db", "/proc/no-such-place/store.sqlite"])
        #expect(exit.status == 1)
        #expect(exit.stderr.hasPrefix("dashboard: cannot open the store at /proc/no-such-place/store.sqlite"))
        #expect(exit.stderr.split(separator: "\n").count == 1)
    }

    @Test func alwaysOnSyncsFromTheBuiltInSimulatorOutOfTheBox() async throws {
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--db", ":memory:", "--always-on", "--quota", "123456"])
        let (simulatorLine, line) = try await readyLines(dashboard)
        let announced = try #require(simulatorLine)
        let simulatorPort = try #require(Int(announced.split(separator: ":").last!.dropLast()))
        let port = try #require(URL(string: String(line.split(separator: " ").last!))?.port)
        let authorization = "Authorization: Bearer \(try #require(RunningDashboard.token(in: line)))\r\n"
        let publish = try RawClient(port: simulatorPort)
        let body = #"{"account":"primary","count":3,"text":"<b>hi</b>"}"#
        try publish.send("POST /sim/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(try publish.readResponse().status == 200)

        // Wait on the dashboard's own feed: each long-poll returns when something changes, and the
        // state is read again then, until the cursor shows all three (bounded, no fixed sleeps).
        func get(_ path: String) throws -> [String: Any] {
            let client = try RawClient(port: port, timeoutSeconds: 30)
            try client.send(rawGet(path, host: "127.0.0.1:\(port)", extraHeaders: authorization))
            return try JSONSerialization.jsonObject(with: Data(try client.readResponse().body)) as? [String: Any] ?? [:]
        }
        var state = try get("/api/state")
        for _ in 0..<50 {
            let primary = (state["accounts"] as? [String: Any])?["primary"] as? [String: Any]
            if primary?["cursor"] as? String == "3" { break }
            let seq = state["seq"] as? Int ?? 0
            _ = try get("/api/poll?since=\(seq)&timeout=10")
            state = try get("/api/state")
        }
        let connection = try #require(state["connection"] as? [String: Any])
        #expect(connection["state"] as? String == "live")
        #expect(connection["activeCycles"] as? Int == 1)
        #expect((state["storage"] as? [String: Any])?["quotaBytes"] as? Int == 123456, "--quota overrides the upstream's figure")
        let messages = try #require((state["messages"] as? [String: Any])?["primary"] as? [[String: Any]])
        #expect(messages.map { $0["text"] as? String } == ["<b>hi</b>", "<b>hi</b>", "<b>hi</b>"])
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
    }

    @Test func aParkedPollIsAnsweredWhenTheProcessStops() async throws {
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--db", ":memory:"])
        let line = try await readyLines(dashboard).dashboard
        let port = try #require(URL(string: String(line.split(separator: " ").last!))?.port)
        let authorization = "Authorization: Bearer \(try #require(RunningDashboard.token(in: line)))\r\n"
        let client = try RawClient(port: port)
        try client.send(rawGet("/api/poll?since=0&timeout=0", host: "127.0.0.1:\(port)", extraHeaders: authorization))
        let first = try JSONSerialization.jsonObject(with: Data(try client.readResponse().body)) as? [String: Any]
        let seq = try #require(first?["seq"] as? Int)
        try client.send(rawGet("/api/poll?since=\(seq)&timeout=60", host: "127.0.0.1:\(port)", extraHeaders: authorization))
        dashboard.signal(SIGTERM)
        let answer = try client.readResponse()
        #expect(answer.status == 200, "released with what it has, not cut")
        let exit = await dashboard.waitForExit()
        #expect(exit.status == 0 && !exit.timedOut)
    }

    @Test func theAccessTokenIsPrintedOnceAndNeverLogged() async throws {
        let dashboard = try await RunningDashboard(["--port", "0", "--db", ":memory:", "--log-level", "trace"])
        let token = try #require(dashboard.token)
        // The token in every place a client may put it, right and wrong, and a failing request.
        let port = dashboard.port
        for request in ["GET /?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n",
                        "GET /?token=\(token)x HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n",
                        "GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: lp_token_\(port)=\(token)\r\n\r\n",
                        "GET /api/state HTTP/1.1\r\nHost: evil\r\nAuthorization: Bearer \(token)\r\n\r\n",
                        "GET /api/nothing?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(dashboard.authorization)\r\n"] {
            _ = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(request)
                return try client.readResponse().status
            }
        }
        let exit = await dashboard.stop()
        #expect(exit.status == 0)
        #expect(exit.stdout.components(separatedBy: token).count == 2, "once: in the ready line")
        #expect(!exit.stderr.contains(token), "never in the logs")
        #expect(exit.stderr.contains("TRACE") || exit.stderr.contains("DEBUG"), "the logs were on")
    }

    @Test func withoutAuthTheReadyLineHasNoToken() async throws {
        let dashboard = try await RunningDashboard(["--port", "0", "--db", ":memory:", "--no-auth"])
        #expect(dashboard.token == nil)
        #expect(try await dashboard.json("/api/session")["csrfToken"] != nil, "reads are open")
        #expect(await dashboard.stop().status == 0)
    }

    @Test func aMatrixHomeserverOverPlainHTTPElsewhereThanThisMachineIsWarnedAbout() async throws {
        for (upstream, warned) in [("matrix+http://192.0.2.1:8008", true), ("matrix+http://127.0.0.1:9", false)] {
            let dashboard = try ChildProcess("dashboard", ["--port", "0", "--db", ":memory:", "--upstream", upstream, "--matrix-user", "@a:b"])
            _ = try await readyLines(dashboard)
            dashboard.signal(SIGTERM)
            let exit = await dashboard.waitForExit()
            #expect(exit.stderr.contains("unencrypted") == warned, "\(upstream): \(exit.stderr)")
        }
    }

    @Test func aNonLoopbackHostPrintsAWarning() async throws {
        let dashboard = try ChildProcess("dashboard", ["--host", "0.0.0.0", "--port", "0", "--db", ":memory:"])
        let line = try await readyLines(dashboard).dashboard
        #expect(line.hasPrefix("dashboard listening on http://127.0.0.1:"), "an address a browser can open: \(line)")
        let endpoint = try DashboardEndpoint(readyLine: line)
        #expect(try await RawClient.run { try endpoint.get("/api/session").status } == 200, "and it answers")
        dashboard.signal(SIGTERM)
        let exit = await dashboard.waitForExit()
        #expect(exit.stderr.contains("WARNING"))
        #expect(exit.stderr.contains("not a loopback address"))
    }
}
