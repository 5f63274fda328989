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
        let fixture = try PublicFixture()
        let loop = try EventLoop(name: "poll-test")
        let store = try MessageStore(location: .memory)
        let secrets = LaunchSecrets()
        let services = await DashboardServices.assemble(store: store, reader: nil, epoch: secrets.epoch, loop: loop, simulator: nil) { emit in
            SyncEngine(store: store, upstream: HTTPUpstreamClient(baseURL: URL(string: "http://127.0.0.1:9/")!, loop: loop), emit: emit)
        }
        let server = try HTTPServer(configuration: HTTPServerConfiguration(port: 0, errorResponse: DashboardApp.coreErrorResponse), loop: loop)
        try await server.start(responder: DashboardApp(port: server.localAddress.port, staticFiles: try StaticFiles(root: fixture.publicPath),
                                                       services: services, secrets: secrets))
        let port = server.localAddress.port
        let count = 1000
        let clients = try (0..<count).map { _ in try RawClient(port: port) }
        for client in clients {
            try client.send(rawGet("/api/poll?since=0&epoch=\(secrets.epoch)&timeout=60&visible=0", host: "127.0.0.1:\(port)"))
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
        try metricsClient.send(rawGet("/metrics", host: "127.0.0.1:\(port)"))
        let metrics = try metricsClient.readResponse()
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = metrics.text
        #expect(text.contains("lp_feed_polls_total{outcome=\"woken\"} \(count)"))
        #expect(text.contains("lp_feed_wake_seconds_count 1\n"), "the one publish was one wake pass")
        #expect(PrometheusParse.isValid(text), "every line is a comment or `name{labels} value`")
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

