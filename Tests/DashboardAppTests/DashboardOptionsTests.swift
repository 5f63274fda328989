import Foundation
import Logging
import Testing
@testable import DashboardApp

@Suite("Command line")
struct DashboardOptionsTests {
    private func options(_ arguments: [String]) throws -> DashboardOptions {
        guard case .run(let options) = try DashboardOptions.parse(arguments) else {
            throw DashboardOptions.UsageError(message: "not a run command")
        }
        return options
    }

    private func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try DashboardOptions.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func defaultsFollowTheContract() throws {
        let parsed = try options([])
        #expect(parsed.host == "127.0.0.1")
        #expect(parsed.port == 8080)
        #expect(parsed.logLevel == .info)
        #expect(parsed.publicDirectory == nil)
    }

    @Test func hostsAreAddressesOrLocalhostAndBracketsAreFine() throws {
        #expect(try options(["--host", "[::1]"]).host == "::1")
        #expect(try options(["--host", "::1"]).host == "::1")
        #expect(try options(["--host", "localhost"]).host == "localhost")
        #expect(try options(["--host", "0.0.0.0"]).host == "0.0.0.0")
        #expect(usageError(["--host", "no-such-host.invalid"])?.hasPrefix("--host must be an IP address") == true, "a bad flag: exit 2")
    }

    @Test func holdSecondsIsOneToSixty() throws {
        #expect(try options([]).holdSeconds == 25)
        #expect(try options(["--hold-seconds", "3"]).holdSeconds == 3)
        #expect(usageError(["--hold-seconds", "0"]) == "--hold-seconds must be a number of seconds from 1 to 60, not \"0\"")
        #expect(usageError(["--hold-seconds", "61"]) != nil)
    }

    @Test func valuesAsSeparateArgumentsOrAfterEquals() throws {
        let parsed = try options(["--host", "::1", "--port=0", "--log-level", "debug", "--public=/tmp/p", "--db", ":memory:"])
        #expect(parsed.database == ":memory:")
        #expect(parsed.host == "::1")
        #expect(parsed.port == 0)
        #expect(parsed.logLevel == .debug)
        #expect(parsed.publicDirectory == "/tmp/p")
    }

    @Test func helpAndVersion() throws {
        #expect(try DashboardOptions.parse(["--port", "1", "--help"]) == .help)
        #expect(try DashboardOptions.parse(["--version"]) == .version)
    }

    @Test(arguments: [
        (["--port", "70000"], "--port must be a number from 0 to 65535"),
        (["--port", "-1"], "--port must be a number"),
        (["--port", "eighty"], "--port must be a number"),
        (["--port"], "option --port needs a value"),
        (["--log-level", "loud"], "--log-level must be error, warning, info, debug or trace"),
        (["--frobnicate"], "unknown option --frobnicate"),
        (["serve"], "unexpected argument"),
        (["--host="], "--host needs a non-empty address"),
        (["--db="], "--db needs a path or :memory:"),
        (["--upstream", "matrix+http://127.0.0.1:8008"], "--upstream matrix+http:// needs --matrix-user"),
        (["--upstream", "matrix+https://matrix.org"], "--upstream matrix+https:// needs --matrix-user"),
        (["--upstream", "ftp://x"], "--upstream must be an http://, matrix+http:// or matrix+https:// URL"),
        (["--upstream", "https://x"], "--upstream must be an http://, matrix+http:// or matrix+https:// URL"),
        (["--matrix-user", "@a:b"], "--matrix-user is for a Matrix upstream"),
        (["--upstream", "matrix+http://h:1", "--matrix-user", "alice"], "--matrix-user must be a full Matrix user id"),
        (["--upstream", "matrix+http://h:1", "--matrix-user", "@:b"], "--matrix-user must be a full Matrix user id"),
        (["--upstream", "matrix+http://h:1", "--matrix-user", "@a:b", "--matrix-timeline-limit", "0"], "--matrix-timeline-limit must be a number from 1 to 1000"),
    ])
    func badFlagsSayWhatIsWrong(_ arguments: [String], _ expected: String) {
        let message = usageError(arguments)
        #expect(message?.hasPrefix(expected) == true, "\(arguments): \(message ?? "accepted")")
        #expect(message?.contains("\n") == false, "one line")
    }

    @Test func aMatrixUpstreamTakesItsUserAndTimelineLimit() throws {
        let parsed = try options(["--upstream", "matrix+http://127.0.0.1:8008", "--matrix-user", "@alice:example.org", "--matrix-timeline-limit", "10"])
        #expect(parsed.upstream == "matrix+http://127.0.0.1:8008/")
        #expect(parsed.matrixUser == "@alice:example.org")
        #expect(parsed.matrixTimelineLimit == 10)
        #expect(try options([]).matrixTimelineLimit == 50)
        #expect(try options(["--upstream", "matrix+https://matrix.example.org", "--matrix-user", "@a:example.org"]).upstream
                == "matrix+https://matrix.example.org/")
    }

    @Test func helpMentionsEveryFlagItAccepts() {
        for flag in ["--host", "--port", "--public", "--db", "--log-level", "--help", "--version", "--upstream", "--matrix-user",
                     "--matrix-timeline-limit", "LP_MATRIX_PASSWORD", "LP_MATRIX_TOKEN"] {
            #expect(DashboardOptions.help.contains(flag))
        }
    }

    @Test func publicDirectoryIsFoundAboveTheExecutable() throws {
        let fixture = try PublicFixture()
        let binary = fixture.root.appendingPathComponent(".build/debug/dashboard").path
        try FileManager.default.createDirectory(atPath: (binary as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(PublicDirectory.locate(explicit: nil, executablePath: binary, sourceFile: "/nonexistent/a/b/c/d.swift")
            == fixture.publicPath)
        #expect(PublicDirectory.locate(explicit: fixture.publicPath, executablePath: "/bin/true") == fixture.publicPath)
        #expect(PublicDirectory.locate(explicit: "/nonexistent", executablePath: binary) == nil)
    }

    @Test func publicDirectoryFallsBackToTheSourceCheckout() {
        let found = PublicDirectory.locate(explicit: nil, executablePath: "/usr/bin/dashboard")
        #expect(found?.hasSuffix("/Public") == true)
    }
}
