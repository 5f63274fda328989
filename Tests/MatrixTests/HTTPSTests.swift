import Foundation
import Testing
import TestSupport

/// `matrix+https://`: the dashboard binary syncing a real Synapse behind Debian's nginx with a
/// self-signed certificate. URLSession runs in a child process per request (`https-fetch`); these
/// tests hold the dashboard to never crashing or hanging when requests are cut or cancelled.
@Suite("Dashboard on Synapse over https", .requiresSynapse, .serialized,
       .enabled(if: TLSTerminator.mustRun, "needs nginx, openssl and root for a private mount namespace (.ci/run installs them)"))
struct HTTPSTests {
    typealias World = DashboardOnSynapseTests.World

    private func dashboard(_ world: World, _ terminator: TLSTerminator, trusted: Bool = true) async throws -> RunningDashboard {
        let arguments = ["--port", "0", "--db", world.storePath, "--always-on", "--hold-seconds", "5", "--backoff-base-ms", "200",
                         "--backoff-cap-ms", "1000", "--upstream", "matrix+https://127.0.0.1:\(terminator.port)", "--matrix-user", world.aliceID]
        let environment = ["LP_MATRIX_PASSWORD": DashboardOnSynapseTests.alicePassword]
        guard trusted else { return try await RunningDashboard(arguments, environment: environment) }
        let command = terminator.trustingCommand(arguments)
        return try await RunningDashboard(process: try ChildProcess(path: command.path, command.arguments, environment: environment))
    }

    /// The `https-fetch` children the dashboard has now (each is one request in flight).
    private func helpers(of dashboard: RunningDashboard) -> Int {
        let parent = String(dashboard.process.pid)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { entry in
            guard Int(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8) else { return false }
            // pid (comm) state ppid ...
            guard let close = stat.lastIndex(of: ")") else { return false }
            let name = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            // A killed child stays a zombie until the dashboard reaps it: it is no request in flight.
            return name == "https-fetch" && fields.count > 1 && fields[0] != "Z" && fields[1] == parent
        }.count
    }

    /// Waits (checking every 20 ms, up to 30 s) until the dashboard's requests in flight satisfy `enough`.
    private func waitForHelpers(_ dashboard: RunningDashboard, until enough: (Int) -> Bool) async throws -> Int {
        for _ in 0..<1500 where !enough(helpers(of: dashboard)) {
            try await Task.sleep(for: .milliseconds(20))
        }
        return helpers(of: dashboard)
    }

    @Test func messagesArriveOverHTTPSAndStoppingEndsTheHeldRequestEveryTime() async throws {
        let world = try await World.make()
        let terminator = try await TLSTerminator(proxyingTo: world.server.port)
        for index in 1...3 { _ = try await world.bob.send(world.room, text: "before \(index)") }
        let dashboard = try await dashboard(world, terminator)

        let history = try await DashboardOnSynapseTests.follow(dashboard, from: 0) { $0.count >= 3 }
        #expect(history.heard.map(\.text) == (1...3).map { "before \($0)" } && history.heard.allSatisfy { !$0.notify })
        _ = try await world.bob.send(world.room, text: "over tls")
        let live = try await DashboardOnSynapseTests.follow(dashboard, from: history.seq) { !$0.isEmpty }
        #expect(live.heard == [.init(text: "over tls", notify: true, caughtUp: false)])

        // Stop and start ten times, each stop cancelling a sync held in a child process.
        for round in 1...10 {
            #expect(try await waitForHelpers(dashboard) { $0 >= 1 } >= 1, "round \(round): a sync is held")
            #expect(try await dashboard.post("/api/engine/stop").status == 202)
            #expect(try await waitForHelpers(dashboard) { $0 == 0 } == 0, "round \(round): stopping killed the held request")
            #expect(try await dashboard.post("/api/engine/start").status == 202)
            _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        }
        _ = try await world.bob.send(world.room, text: "after ten stops")
        let state = try await dashboard.state { ($0[path: "messages", "primary"] as? [[String: Any]])?.first?["text"] as? String == "after ten stops" }
        #expect((state[path: "messages", "primary"] as? [[String: Any]])?.first?["text"] as? String == "after ten stops")
        let exit = await dashboard.stop()
        #expect(exit.status == 0, "no trap, no hang: \(exit.stderr.suffix(500))")
    }

    @Test func aTerminatorKilledUnderAHeldRequestIsAConnectionProblemThenLiveAgain() async throws {
        let world = try await World.make()
        let terminator = try await TLSTerminator(proxyingTo: world.server.port)
        let dashboard = try await dashboard(world, terminator)
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        #expect(try await waitForHelpers(dashboard) { $0 >= 1 } >= 1)

        await terminator.kill()
        var state = try await dashboard.state { ($0["errors"] as? [[String: Any]])?.first?["type"] as? String == "/problems/upstream-unreachable" }
        #expect(state[path: "connection", "state"] as? String == "waiting")
        try await terminator.start()
        state = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" && ($0["errors"] as? [Any])?.isEmpty == true }
        _ = try await world.bob.send(world.room, text: "through the new terminator")
        state = try await dashboard.state { ($0[path: "messages", "primary"] as? [[String: Any]])?.first?["text"] as? String == "through the new terminator" }
        #expect((state[path: "messages", "primary"] as? [[String: Any]])?.first?["text"] as? String == "through the new terminator")
        let exit = await dashboard.stop()
        #expect(exit.status == 0)
    }

    @Test func aCertificateTheSystemDoesNotTrustIsRefused() async throws {
        let world = try await World.make()
        let terminator = try await TLSTerminator(proxyingTo: world.server.port)
        _ = try await world.bob.send(world.room, text: "not to be read")
        let dashboard = try await dashboard(world, terminator, trusted: false)
        let state = try await dashboard.state { ($0["errors"] as? [[String: Any]])?.first != nil }
        let error = try #require((state["errors"] as? [[String: Any]])?.first)
        #expect(error["type"] as? String == "/problems/upstream-unreachable")
        print("untrusted certificate: \(error[path: "debug", "underlying"] ?? "")")
        #expect((state[path: "messages", "primary"] as? [Any])?.isEmpty ?? true, "nothing is read from a server that is not who it says")
        _ = await dashboard.stop()
    }
}
