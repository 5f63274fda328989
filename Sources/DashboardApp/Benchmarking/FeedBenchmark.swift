import Foundation
import HTTPCore
import Store

/// The dashboard's event feed and poll entrance with nothing behind them, for `lp-bench
/// feed-server`: the one public surface the benchmarks use besides HTTP.
///
/// A publish (`POST /api/simulator/messages`, the fan-out client's publish) goes straight into the
/// feed as the dashboard's own messages event, so the parked polls get the dashboard's answers,
/// byte for byte in form, without the simulator, the engine and SQLite in front. Under the fan-out
/// client this splits the fan-out latency: what is left is the feed, the HTTP writes and the
/// client reading the answers.
public struct FeedBenchmarkResponder: HTTPResponder {
    private let polls: PollRoutes
    private let router: Router

    public init(loop: EventLoop) {
        let epoch = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let feed = EventFeed(epoch: epoch, loop: loop, finish: { SecurityHeaders.api.apply(to: &$0) })
        // A reset carries only the sequence number: the client needs nothing else.
        let polls = PollRoutes(feed: feed, reset: { epoch in
            try JSONResponse.make(BenchmarkReset(epoch: epoch, seq: await feed.currentSeq, reset: true, state: [:]))
        })
        self.polls = polls
        var router = Router()
        polls.register(in: &router)
        router.add("GET", "/api/session") { _, _, _ in try JSONResponse.make(["csrfToken": "", "epoch": epoch]) }
        // The one figure the fan-out client asks for: how many polls are parked.
        router.add("GET", "/metrics") { _, _, _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                         body: Array("lp_feed_parked_polls \(await feed.statistics().parkedPolls)\n".utf8))
        }
        router.add("POST", "/api/simulator/messages") { request, _, _ in
            let order = try JSONDecoder().decode(PublishOrder.self, from: Data(request.body))
            await Self.publish(order, to: feed)
            return try JSONResponse.make([String: String](), status: .accepted)
        }
        self.router = router
    }

    /// Polls take the dashboard's own entrance: the same parameters, checks and feed calls.
    public func respondOnLoop(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        guard request.method == "GET", request.path == "/api/poll" else { return nil }
        return polls.answerOnLoop(request)
    }

    public func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        if case .found(let handler, let parameters) = router.match(method: request.method, path: request.path) {
            return try await handler(request, parameters, context)
        }
        return Problem.notFound(request.path).response
    }

    public func finishing(for request: HTTPRequest?) -> ResponseFinishing {
        SecurityHeaders.api
    }

    private static func publish(_ order: PublishOrder, to feed: EventFeed) async {
        let sentAt = "2026-11-29T12:00:00.000Z"  // the form and length of the dashboard's timestamps
        let messages = (0..<max(1, order.count ?? 1)).map { index in
            StoredMessage(account: .primary, id: Int64(index + 1), chatId: 5, sender: "Chloé", text: order.text ?? "hello",
                          sentAt: sentAt, receivedAt: sentAt)
        }
        let event = MessagesEvent(account: order.account ?? "primary", messages: messages, notify: true,
                                  storage: StorageUsage(usedBytes: 181, quotaBytes: 50_000_000))
        await feed.publish("messages", json: event.json())
    }
}

private struct BenchmarkReset: Encodable {
    var epoch: String
    var seq: Int
    var reset: Bool
    var state: [String: String]
}

private struct PublishOrder: Decodable {
    var account: String?
    var count: Int?
    var text: String?
}
