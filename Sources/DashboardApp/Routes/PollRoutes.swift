import Foundation
import HTTPCore

/// `GET /api/poll?since=SEQ&epoch=E&timeout=S&visible=0|1`: the page's own long-poll (CONTRACT section 5).
public struct PollRoutes: Sendable {
    let services: DashboardServices
    let state: StateRoutes

    static let defaultTimeout = 25
    static let maxTimeout = 60

    func register(in router: inout Router) {
        router.add("GET", "/api/poll") { request, _, _ in
            try await poll(request)
        }
    }

    struct Parameters {
        var since: Int
        var timeout: Int
        var visible: Bool
        var epoch: String?
    }

    /// The query's parameters, or the problem to answer with.
    static func parameters(of request: HTTPRequest) -> Result<Parameters, Problem> {
        var parameters = Parameters(since: 0, timeout: defaultTimeout, visible: request.queryValue("visible") == "1",
                                    epoch: request.queryValue("epoch"))
        if let text = request.queryValue("since") {
            guard let value = Int(text), value >= 0 else {
                return .failure(Problem(status: .badRequest, detail: "since must be a sequence number (0 or more)."))
            }
            parameters.since = value
        }
        if let text = request.queryValue("timeout") {
            guard let value = Int(text), (0...maxTimeout).contains(value) else {
                return .failure(Problem(status: .badRequest, detail: "timeout must be a whole number of seconds from 0 to \(maxTimeout)."))
            }
            parameters.timeout = value
        }
        if let text = request.queryValue("visible"), text != "0", text != "1" {
            return .failure(Problem(status: .badRequest, detail: "visible must be 0 or 1."))
        }
        return .success(parameters)
    }

    /// The poll answered on the event loop's thread (the feed runs there): an answer now or a
    /// parked poll, with no task at all. Nil for what needs the async path (a reset, a bad query).
    public static func onLoop(_ request: HTTPRequest, feed: EventFeed) -> HTTPResponse? {
        guard case .success(let parameters) = Self.parameters(of: request) else { return nil }
        return feed.assumeIsolated { feed -> HTTPResponse? in
            guard !feed.needsReset(since: parameters.since, epoch: parameters.epoch) else { return nil }
            switch feed.poll(since: parameters.since, epoch: parameters.epoch, timeout: .seconds(parameters.timeout),
                             visible: parameters.visible) {
            case .now(let response): return response
            case .held(let held): return .held(held)
            case .reset: return nil
            }
        }
    }

    private func poll(_ request: HTTPRequest) async throws -> HTTPResponse {
        let parameters: Parameters
        switch Self.parameters(of: request) {
        case .success(let parsed): parameters = parsed
        case .failure(let problem): return problem.response
        }
        switch await services.feed.poll(since: parameters.since, epoch: parameters.epoch, timeout: .seconds(parameters.timeout),
                                        visible: parameters.visible) {
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
