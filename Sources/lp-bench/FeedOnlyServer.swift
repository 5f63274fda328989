import DashboardApp
import Foundation
import HTTPCore
import Store

/// `lp-bench feed-server`: the dashboard's event feed and HTTP server with nothing behind them.
///
/// A publish (`POST /api/simulator/messages`, the fan-out client's publish) goes straight into the
/// feed as the dashboard's own `MessagesEvent`, so the answers the parked polls get are the
/// dashboard's answers, byte for byte in form, without the simulator, the engine and
/// SQLite in front. Under the fan-out client this splits the fan-out latency: what is left here is
/// the feed, the HTTP writes and the client reading our answers.
enum FeedOnlyServer {
    static func run(port: Int) async throws -> Never {
        let loop = try EventLoop(name: "feed-server")
        let epoch = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let feed = EventFeed(epoch: epoch, loop: loop)
        let server = try HTTPServer(configuration: HTTPServerConfiguration(port: port, maxConnections: 16_000), loop: loop)
        try await server.start(responder: FeedOnlyResponder(feed: feed, epoch: epoch))
        FileHandle.standardOutput.write(Data("feed-server listening on http://127.0.0.1:\(server.localAddress.port)/\n".utf8))
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}

struct FeedOnlyResponder: HTTPResponder {
    let feed: EventFeed
    let epoch: String

    /// Polls take the dashboard's own path: the same parameters, checks and feed calls.
    func respondOnLoop(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        guard request.method == "GET", request.path == "/api/poll" else { return nil }
        return PollRoutes.onLoop(request, feed: feed)
    }

    func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        switch (request.method, request.path) {
        case ("GET", "/api/session"):
            return json(#"{"csrfToken":"","epoch":"\#(epoch)"}"#)
        case ("GET", "/api/poll"):
            // Only a reset comes here; the client just needs the current seq.
            return json(#"{"epoch":"\#(epoch)","seq":\#(await feed.currentSeq),"reset":true,"state":{}}"#)
        case ("POST", "/api/simulator/messages"):
            let order = try JSONDecoder().decode(PublishOrder.self, from: Data(request.body))
            await publish(order)
            return json("{}", status: .accepted)
        default:
            return json(#"{"title":"Not Found"}"#, status: .notFound)
        }
    }

    private func publish(_ order: PublishOrder) async {
        let sentAt = "2026-11-29T12:00:00.000Z"  // the form and length of the dashboard's timestamps
        let messages = (0..<max(1, order.count ?? 1)).map { index in
            StoredMessage(account: .primary, id: Int64(index + 1), chatId: 5, sender: "Chloé", text: order.text ?? "hello",
                          sentAt: sentAt, receivedAt: sentAt)
        }
        let event = MessagesEvent(account: order.account ?? "primary", messages: messages, notify: true,
                                  storage: StorageUsage(usedBytes: 181, quotaBytes: 50_000_000))
        await feed.publish("messages", json: event.json())
    }

    private func json(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: Array(text.utf8))
    }
}

private struct PublishOrder: Decodable {
    var account: String?
    var count: Int?
    var text: String?
}
