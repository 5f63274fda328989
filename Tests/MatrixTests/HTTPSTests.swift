import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `matrix+https://`: the dashboard binary syncing a real Synapse behind Debian's nginx with a
/// self-signed certificate. URLSession runs in a child process per request (`https-fetch`); these
/// tests hold the dashboard to never crashing or hanging when requests are cut or cancelled.
@Suite("Dashboard on Synapse over https", .requiresSynapse, .serialized,
       .enabled(if: TLSTerminator.mustRun, "needs nginx, openssl and root for a private mount namespace (.ci/run installs them)"))
struct HTTPSTests {
    typealias World = DashboardOnSynapseTests.World

    private func dashboard(_ world: World, _ terminator: TLSTerminator, trusted: Bool = true) async throws -> RunningDashboard {
        let arguments = ["--port", "0", "--db", world.storePath, "--always-on", "--hold-seconds", "5", "--backoff-base-ms", "200",
                         "--backoff-cap-ms", "1000", "--log-level", "trace", "--upstream", "matrix+https://127.0.0.1:\(terminator.port)", "--matrix-user", world.aliceID]
        let environment = ["LP_MATRIX_PASSWORD": DashboardOnSynapseTests.alicePassword]
        guard trusted else { return try await RunningDashboard(arguments, environment: environment) }
        let command = terminator.trustingCommand(arguments)
        return try await RunningDashboard(process: try ChildProcess(path: command.path, command.arguments, environment: environment))
    }

    /// The `https-fetch` children the dashboard has now (each is one request in flight), read
    /// from `/proc/*/stat` with plain reads: this runs every 100 ms for minutes, and Foundation's
    /// directory listing and string decoding for every process on the machine cost a whole core.
    private func helpers(of dashboard: RunningDashboard) -> Int {
        guard let directory = opendir("/proc") else { return 0 }
        defer { closedir(directory) }
        let parent = dashboard.process.pid
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 512)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid != parent else { continue }
            let file = open("/proc/\(pid)/stat", O_RDONLY)
            guard file >= 0 else { continue }
            let length = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            close(file)
            guard length > 0 else { continue }
            // pid (comm) state ppid ...
            let stat = buffer[..<length]
            guard let nameStart = stat.firstIndex(of: UInt8(ascii: "(")), let nameEnd = stat.lastIndex(of: UInt8(ascii: ")")),
                  String(decoding: stat[(nameStart + 1)..<nameEnd], as: UTF8.self) == "https-fetch" else { continue }
            let fields = stat[(nameEnd + 2)...].split(separator: UInt8(ascii: " "), maxSplits: 2)
            // A killed child stays a zombie until the dashboard reaps it: it is no request in flight.
            guard fields.count > 1, fields[0].first != UInt8(ascii: "Z"),
                  Int32(String(decoding: fields[1], as: UTF8.self)) == parent else { continue }
            count += 1
        }
        return count
    }

    /// Waits (checking every 100 ms, up to 30 s) until the dashboard's requests in flight satisfy
    /// `enough`, and returns the count that did. The count seen is returned, not a new one: a held
    /// sync ends every few seconds, and a second look may fall between two of them.
    private func waitForHelpers(_ dashboard: RunningDashboard, until enough: (Int) -> Bool) async throws -> Int {
        var count = helpers(of: dashboard)
        for _ in 0..<300 {
            if enough(count) { break }
            try await Task.sleep(for: .milliseconds(100))
            count = helpers(of: dashboard)
        }
        return count
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
            let held = try await waitForHelpers(dashboard) { $0 >= 1 }
            // When no sync is held, what the dashboard says of its connection tells a stuck engine from a miscount.
            guard held >= 1 else {
                let said = String(describing: (try? await dashboard.json("/api/state"))?["connection"] ?? "no state")
                let log = await dashboard.stop().stderr.suffix(4000)
                Issue.record("round \(round): no sync is held; the dashboard says \(said); its log ends:\n\(log)")
                return
            }
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
        // Between tries (waiting) or in the next one (connecting), which a short backoff may
        // already have begun when the error shows: either way not live.
        let retrying = state[path: "connection", "state"] as? String
        #expect(retrying == "waiting" || retrying == "connecting", "a connection problem, retried: \(retrying ?? "no state")")
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
