import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Slowloris and a connection flood up to the open-file limit: a normal client keeps being
/// answered, and the process recovers when they go.
@Suite("Hostile clients")
struct HostileClientsTests {
    @Test func slowlorisAndAFloodDoNotStallANormalClient() async throws {
        // A small open-file limit so the flood reaches it quickly: 2,048 less a reserve.
        let dashboard = try ChildProcess(path: "/usr/bin/prlimit",
                                         ["--nofile=2048:2048", ChildProcess.binaryPath("dashboard"), "--port", "0", "--db", ":memory:",
                                          "--log-level", "error"])
        _ = await dashboard.nextLine()
        let line = try #require(await dashboard.nextLine())
        let port = try DashboardEndpoint(readyLine: line).port
        let host = "127.0.0.1:\(port)"

        let normal = try RawClient(port: port)
        func ask() throws -> (status: Int, milliseconds: Double) {
            let started = Date()
            try normal.send(rawGet("/healthz", host: host))
            return (try normal.readResponse().status, Date().timeIntervalSince(started) * 1000)
        }
        #expect(try ask().status == 200)

        // 1,000 slowloris connections: each sends part of a head and then nothing.
        var hostile: [RawClient] = []
        for _ in 0..<1000 {
            let client = try RawClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: \(host)\r\nX-Slow: ")
            hostile.append(client)
        }
        // Then a flood until the server refuses with 503 (its connection limit).
        var refused = 0
        for _ in 0..<1200 where refused < 20 {
            guard let client = try? RawClient(port: port, timeoutSeconds: 5) else { break }
            try? client.send(rawGet("/healthz", host: host))
            if let response = try? client.readResponse(), response.status == 503 { refused += 1 } else { hostile.append(client) }
        }
        #expect(refused > 0, "the flood reached the connection limit")

        var worst = 0.0
        for _ in 0..<20 {
            let (status, milliseconds) = try ask()
            #expect(status == 200)
            worst = max(worst, milliseconds)
        }
        print("hostile clients: \(hostile.count) held, \(refused) refused with 503; normal client's slowest answer \(String(format: "%.2f", worst)) ms")

        hostile.forEach { $0.disconnect() }
        hostile.removeAll()
        // Recovered: new connections are served again (the server closes the hostile ones as it reads their end).
        var recovered = false
        for _ in 0..<200 where !recovered {
            if let client = try? RawClient(port: port), (try? client.send(rawGet("/healthz", host: host))) != nil,
               let response = try? client.readResponse(), response.status == 200 {
                recovered = true
            } else {
                try await Task.sleep(for: .milliseconds(25))
            }
        }
        #expect(recovered)
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit().status == 0)
    }
}
