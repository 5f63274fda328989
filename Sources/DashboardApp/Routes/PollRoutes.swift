import Foundation
import HTTPCore

/// `GET /api/poll?since=SEQ&epoch=E&timeout=S&visible=0|1`: the page's own long-poll (CONTRACT section 5).
struct PollRoutes {
    let services: DashboardServices
    let state: StateRoutes

    static let defaultTimeout = 25
    static let maxTimeout = 60

    func register(in router: inout Router) {
        router.add("GET", "/api/poll") { request, _, _ in
            try await poll(request)
        }
    }

    private func poll(_ request: HTTPRequest) async throws -> HTTPResponse {
        var since = 0
        if let text = request.queryValue("since") {
            guard let value = Int(text), value >= 0 else {
                return Problem(status: .badRequest, detail: "since must be a sequence number (0 or more).").response
            }
            since = value
        }
        var timeout = Self.defaultTimeout
        if let text = request.queryValue("timeout") {
            guard let value = Int(text), (0...Self.maxTimeout).contains(value) else {
                return Problem(status: .badRequest, detail: "timeout must be 0 to \(Self.maxTimeout) seconds.").response
            }
            timeout = value
        }
        let visible = request.queryValue("visible") == "1"
        switch await services.feed.poll(since: since, epoch: request.queryValue("epoch"), timeout: .seconds(timeout), visible: visible) {
        case .now(let response):
            return response
        case .held(let held):
            // The connection waits for the feed; no task stays suspended per parked poll.
            return .held(held)
        case .reset:
            let snapshot = try await state.snapshot()
            return try JSONResponse.make(ResetBody(epoch: services.feed.epoch, seq: snapshot.seq, reset: true, state: snapshot), dates: true)
        }
    }
}

struct ResetBody: Encodable, Sendable {
    var epoch: String
    var seq: Int
    var reset: Bool
    var state: StateSnapshot
}
