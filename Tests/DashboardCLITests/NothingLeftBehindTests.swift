import Foundation
import Testing
import TestSupport

/// A server started by a supervisor that asks for it (`LP_END_WITH_PARENT=<its pid>`, which the
/// tests' `ChildProcess` sets) stops when that supervisor ends, however it ends: a test run that crashes
/// leaves no `chat-server` or `dashboard` behind.
@Suite("Nothing left behind")
struct NothingLeftBehindTests {
    @Test(arguments: [["chat-server", "--port", "0"], ["dashboard", "--port", "0", "--db", ":memory:", "--no-demo"]])
    func aServerWhoseParentEndsStopsToo(_ command: [String]) async throws {
        let path = ChildProcess.binaryPath(command[0])
        let arguments = command.dropFirst().joined(separator: " ")
        // The shell starts the server in the background and ends a second later: the server,
        // running by then, is orphaned.
        let (status, output) = try await runToCompletion("/bin/sh", ["-c", "LP_END_WITH_PARENT=$$ '\(path)' \(arguments) < /dev/null > /dev/null 2>&1 & echo $!; sleep 1"])
        #expect(status == 0)
        let pid = try #require(Int32(output.trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(pid, SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(15)
        while Self.running(pid), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(!Self.running(pid), "\(command[0]) still runs after its parent ended")
    }

    /// Whether `pid` is a live process (a zombie waiting for init to reap it has ended).
    static func running(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }
}
