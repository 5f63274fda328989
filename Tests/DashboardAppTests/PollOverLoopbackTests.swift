import ChatServerClient
import ChatSimulator
import Engine
import Foundation
import HTTPCore
import Store
import Testing
import TestSupport
import Upstream
@testable import DashboardApp

/// The dashboard over real sockets: many parked polls, metrics.
@Suite("Dashboard over loopback")
struct PollOverLoopbackTests {
    @Test func aThousandParkedPollsAreAllWokenByOnePublish() async throws {
        let dashboard = try await LoopbackDashboard.start(store: try MessageStore(location: .memory), loopName: "poll-test")
        let (server, services, secrets, port) = (dashboard.server, dashboard.services, dashboard.secrets, dashboard.port)
        // A poll from another launch gets a reset: the loop hands it to its route, which answers it.
        let stale = try RawClient(port: port)
        try stale.send(rawGet("/api/poll?since=0&epoch=another-launch&timeout=60&visible=0", host: "127.0.0.1:\(port)",
                              extraHeaders: "Authorization: Bearer \(secrets.accessToken)\r\n"))
        #expect(try await RawClient.run { try stale.readResponse() }.text.contains(#""reset":true"#))
        let count = 1000
        let clients = try (0..<count).map { _ in try RawClient(port: port) }
        for client in clients {
            try client.send(rawGet("/api/poll?since=0&epoch=\(secrets.epoch)&timeout=60&visible=0", host: "127.0.0.1:\(port)",
                                   extraHeaders: "Authorization: Bearer \(secrets.accessToken)\r\n"))
        }
        var parked = 0
        for _ in 0..<10_000 where parked < count {
            parked = await services.feed.statistics().parkedPolls
            if parked < count { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(parked == count)
        await services.feed.publish("storage", ["usedBytes": 1])
        let answers = try await RawClient.run {
            try clients.map { try $0.readResponse() }
        }
        #expect(answers.allSatisfy { $0.status == 200 && $0.text.contains(#""type":"storage""#) })
        #expect(await services.feed.statistics().parkedPolls == 0)

        let metricsClient = try RawClient(port: port)
        try metricsClient.send(rawGet("/metrics", host: "127.0.0.1:\(port)", extraHeaders: "Authorization: Bearer \(secrets.accessToken)\r\n"))
        let metrics = try metricsClient.readResponse()
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = metrics.text
        #expect(text.contains("lp_feed_polls_total{outcome=\"woken\"} \(count)"))
        #expect(text.contains("lp_feed_polls_total{outcome=\"reset\"} 1\n"), "the reset is counted once, by the route that answered it")
        #expect(text.contains("lp_feed_polls_total{outcome=\"received\"} \(count + 1)\n"))
        #expect(text.contains("lp_feed_wake_seconds_count 1\n"), "the one publish was one wake pass")
        #expect(text.contains("lp_engine_second_polls_refused_total 0\n"), "the loud guard is exposed, and never tripped")
        #expect(PrometheusParse.isValid(text), "every line is a comment or `name{labels} value`")
        await server.shutdown(gracePeriod: .milliseconds(100))
    }
}

extension PollOverLoopbackTests {
    @Test func everyKindOfRouteAnswersAClientThatHalfCloses() async throws {
        let dashboard = try await LoopbackDashboard.start(store: try MessageStore(location: .memory), simulator: ChatSimulator(),
                                                          loopName: "half-close-test")
        let (server, services, secrets, port) = (dashboard.server, dashboard.services, dashboard.secrets, dashboard.port)
        let host = "Host: 127.0.0.1:\(port)\r\n"
        let token = "Authorization: Bearer \(secrets.accessToken)\r\n"
        let body = "{}"
        let post = "POST /api/engine/stop HTTP/1.1\r\n\(host)\(token)Content-Type: application/json\r\nX-CSRF-Token: \(secrets.csrfToken)\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let requests: [(name: String, raw: String, status: Int)] = [
            ("a static file, answered on the loop", "GET /app.js HTTP/1.1\r\n\(host)\r\n", 200),
            ("the health check", "GET /healthz HTTP/1.1\r\n\(host)\r\n", 200),
            ("the session", "GET /api/session HTTP/1.1\r\n\(host)\(token)\r\n", 200),
            ("the state, read from actors", "GET /api/state HTTP/1.1\r\n\(host)\(token)\r\n", 200),
            ("scroll-back", "GET /api/messages?account=primary HTTP/1.1\r\n\(host)\(token)\r\n", 200),
            ("metrics", "GET /metrics HTTP/1.1\r\n\(host)\(token)\r\n", 200),
            ("a poll with something to say", "GET /api/poll?since=0&epoch=other&timeout=0 HTTP/1.1\r\n\(host)\(token)\r\n", 200),
            ("the simulator's control", "GET /api/simulator/stats HTTP/1.1\r\n\(host)\(token)\r\n", 200),
            ("a state change with a body", post, 202),
            ("an unknown route", "GET /api/nothing HTTP/1.1\r\n\(host)\(token)\r\n", 404),
            ("no token", "GET /api/state HTTP/1.1\r\n\(host)\r\n", 401),
            ("a foreign Host", "GET /api/state HTTP/1.1\r\nHost: evil.example\r\n\r\n", 403),
            ("a malformed request", "GET /x HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        ]
        for round in 0..<3 {
            for request in requests {
                let (status, closed) = try await RawClient.run {
                    let client = try RawClient(port: port)
                    try client.send(request.raw)
                    client.finishSending()
                    return (try client.readResponse().status, client.waitForClose())
                }
                #expect(status == request.status, "\(request.name), round \(round)")
                #expect(closed, "\(request.name): closed once answered")
            }
        }
        // A poll that would park is the one request given up: its client stopped sending.
        let parked = try RawClient(port: port)
        try parked.send("GET /api/poll?since=0&epoch=\(secrets.epoch)&timeout=30 HTTP/1.1\r\n\(host)\(token)\r\n")
        var seen = 0
        for _ in 0..<2000 where seen == 0 {
            seen = await services.feed.statistics().parkedPolls
            if seen == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(seen == 1)
        parked.finishSending()
        #expect(try await RawClient.run { parked.waitForClose() }, "closed without an answer")
        await server.shutdown(gracePeriod: .milliseconds(100))
    }
}

enum PrometheusParse {
    /// A strict reading of the text format's sample lines.
    static func isValid(_ text: String) -> Bool {
        let sample = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9.e+Inf]+$/
        return text.split(separator: "\n").allSatisfy { line in
            line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") || line.wholeMatch(of: sample) != nil
        }
    }
}


extension PollOverLoopbackTests {
    @Test func everyChangeOfTheSimulatorsSettingsReachesAnOpenPageAndTheLastOneIsWhatItShows() async throws {
        let simulator = ChatSimulator()
        let dashboard = try await LoopbackDashboard.start(store: try MessageStore(location: .memory), simulator: simulator,
                                                          loopName: "simulator-settings-test")
        let (server, secrets, port) = (dashboard.server, dashboard.secrets, dashboard.port)
        await simulator.setFaults(FaultSettings(mode: .offline))
        await simulator.setFaults(FaultSettings(mode: .error500, rate: 0.5))
        await simulator.setFaults(FaultSettings(mode: .none))
        // Each poll waits for the next event: whatever came between, the last one says "none".
        var modes: [String] = []
        var since = 0
        let client = try RawClient(port: port)
        while modes.last != "none" {
            try client.send(rawGet("/api/poll?since=\(since)&epoch=\(secrets.epoch)&timeout=10&visible=0", host: "127.0.0.1:\(port)",
                                   extraHeaders: "Authorization: Bearer \(secrets.accessToken)\r\n"))
            let answer = try await RawClient.run { try client.readResponse() }
            let body = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
            let events = try #require(body["events"] as? [[String: Any]], "a poll of 10 s ended with no event: \(answer.text)")
            try #require(!events.isEmpty, "a poll of 10 s ended with no event")
            since = try #require(body["seq"] as? Int)
            modes += events.filter { $0["type"] as? String == "simulator" }.compactMap { ($0["data"] as? [String: Any])?["faultMode"] as? String }
        }
        #expect(modes.count <= 3)
        #expect(modes.firstIndex(of: "offline").map { $0 < modes.count - 1 } ?? true, "an older setting never comes after a newer one")
        await server.shutdown(gracePeriod: .milliseconds(100))
    }
}
