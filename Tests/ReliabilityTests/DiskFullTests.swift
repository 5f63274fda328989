import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The store on a 1 MB filesystem: a real SQLITE_FULL becomes the out-of-space error, Free space
/// makes room, syncing resumes, and the messages that arrived are all there once.
@Suite("Disk full")
struct DiskFullTests {
    static var canMount: Bool { getuid() == 0 }

    @Test(.enabled(if: canMount, "mounting a tmpfs needs root (CI runs as root)"))
    func aFullDiskShowsOutOfSpaceAndFreeSpaceRecovers() async throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("tinyfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        #expect(try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint]) == 0)
        defer {
            _ = try? Self.run("/bin/umount", [mountPoint])
            try? FileManager.default.removeItem(atPath: mountPoint)
        }

        let upstream = try ChildProcess("chat-server", ["--port", "0", "--no-linked"])
        let upstreamURL = String(try #require(await upstream.nextLine()).split(separator: " ").last!)
        let simulator = try #require(Int(upstreamURL.split(separator: ":").last!.dropLast()))
        defer { upstream.signal(SIGTERM) }
        let dashboard = try ChildProcess("dashboard", ["--port", "0", "--upstream", upstreamURL, "--db", mountPoint + "/store.sqlite",
                                                       "--always-on", "--log-level", "error"])
        let endpoint = try DashboardEndpoint(readyLine: try #require(await dashboard.nextLine()))

        // 3 KB messages, 20 at a time, until the 1 MB disk is full.
        let text = String(repeating: "x", count: 3000)
        var error: [String: Any]?
        for _ in 0..<60 where error == nil {
            try DashboardCrashTests.post(simulator, "/sim/messages", "{\"account\": \"primary\", \"count\": 20, \"text\": \"\(text)\"}")
            for _ in 0..<20 where error == nil {
                let state = try endpoint.json("/api/state")
                error = (state["errors"] as? [[String: Any]])?.first { $0["type"] as? String == "/problems/out-of-space" }
                if error == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
        }
        let outOfSpace = try #require(error, "the full disk raised out-of-space")
        #expect(((outOfSpace["debug"] as? [String: Any])?["underlying"] as? String)?.contains("SQLITE_FULL") == true)
        #expect((try endpoint.json("/api/state")["connection"] as? [String: Any])?["state"] as? String == "paused")
        let storedBefore = try DashboardCrashTests.storedIDs(endpoint, "primary")
        let options = (outOfSpace["options"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(options == ["not-now", "free-space", "try-again"], "buying quota cannot help a full disk")

        // The person makes room on the disk (here: the filesystem grows), then tries again.
        #expect(try Self.run("/bin/mount", ["-o", "remount,size=16m", mountPoint]) == 0)
        let id = try #require(outOfSpace["id"] as? String)
        let answer = try endpoint.post("/api/errors/\(id)/attempts", #"{"option":"try-again"}"#, extraHeaders: "Idempotency-Key: again-1\r\n")
        #expect(answer.status == 200)
        #expect(answer.text.contains(#""status":"recovered""#), "\(answer.text)")

        // Syncing resumes and nothing was lost: every sent message is stored, once.
        try DashboardCrashTests.post(simulator, "/sim/messages", #"{"account": "primary", "count": 3, "text": "after"}"#)
        let sent = try JSONDecoder().decode([String: [Int64]].self, from: Data(ChaosSoakTests.get(simulator, "/sim/sent").utf8))
        var stored: [Int64] = []
        for _ in 0..<400 {
            stored = try DashboardCrashTests.storedIDs(endpoint, "primary")
            if stored.count == sent["primary"]?.count { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        print("disk full: \(storedBefore.count) messages fit on 1 MB before SQLITE_FULL; after making room, all \(stored.count) are stored")
        #expect(stored.sorted() == sent["primary"], "every message once")
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
    }

    static func run(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
