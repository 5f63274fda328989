import Foundation
import TestSupport
import Testing

/// The `dashboard` executable as a user meets it: flags, the listening line, signals.
@Suite("dashboard command line")
struct DashboardCLITests {
    @Test func helpListsTheFlagsAndExitsZero() async throws {
        let exit = try await ChildProcess.run("dashboard", ["--help"])
        #expect(exit.status == 0)
        #expect(exit.stdout.contains("Usage: dashboard"))
        #expect(exit.stdout.contains("--port"))
    }

    @Test func versionPrintsOneLine() async throws {
        let exit = try await ChildProcess.run("dashboard", ["--version"])
        #expect(exit.status == 0)
        #expect(exit.stdout.hasPrefix("dashboard "))
    }

    @Test(arguments: [["--port", "99999"], ["--bogus"], ["--log-level"], ["extra"], ["--public", "/nonexistent"]])
    func badFlagsExitTwoWithOneLine(_ arguments: [String]) async throws {
        let exit = try await ChildProcess.run("dashboard", arguments)
        #expect(exit.status == 2)
        #expect(exit.stdout.isEmpty)
        let lines = exit.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(exit.stderr)")
        #expect(lines.first?.hasPrefix("dashboard: ") == true)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func servesAfterTheListeningLineAndStopsCleanlyOnSignal(_ signal: Int32) async throws {
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--db", ":memory:"])
        let line = try #require(await dashboard.nextLine())
        let prefix = "dashboard listening on http://127.0.0.1:"
        #expect(line.hasPrefix(prefix) && line.hasSuffix("/"), "\(line)")
        let port = try #require(Int(line.dropFirst(prefix.count).dropLast()))
        #expect(port > 0)

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
        #expect(exit.stdout == line + "\n", "stdout holds only the listening line; logs go to stderr")
    }

    @Test func aPortInUseIsAClearError() async throws {
        let first = try ChildProcess("dashboard", ["--port", "0", "--db", ":memory:"])
        let line = try #require(await first.nextLine())
        let port = String(line.split(separator: ":").last!.dropLast())
        let second = try await ChildProcess.run("dashboard", ["--port", port, "--db", ":memory:"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(port)"))
        first.signal(SIGTERM)
        #expect(await first.waitForExit().status == 0)
    }

    @Test func theStoreIsCreatedWhereDbSaysAndKeptAcrossRuns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-db-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/nested/store.sqlite"
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--db", path])
        _ = try #require(await dashboard.nextLine())
        #expect(FileManager.default.fileExists(atPath: path))
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
    }

    @Test func theDefaultStoreFollowsXDGDataHome() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-xdg-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let dashboard = try ChildProcess("dashboard", ["--port", "0"], environment: ["XDG_DATA_HOME": folder])
        _ = try #require(await dashboard.nextLine())
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

    @Test func aNonLoopbackHostPrintsAWarning() async throws {
        let dashboard = try ChildProcess("dashboard", ["--host", "0.0.0.0", "--port", "0", "--db", ":memory:"])
        let line = try #require(await dashboard.nextLine())
        #expect(line.hasPrefix("dashboard listening on http://0.0.0.0:"))
        dashboard.signal(SIGTERM)
        let exit = await dashboard.waitForExit()
        #expect(exit.stderr.contains("WARNING"))
        #expect(exit.stderr.contains("not a loopback address"))
    }
}
