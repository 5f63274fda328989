import Foundation
import HTTPCore

/// `GET /api/poll?since=SEQ&epoch=E&timeout=S&visible=0|1`: the page's own long-poll (CONTRACT section 5).
///
/// Every poll is decided in one place, `decide(_:)`, on the feed's executor (the loop thread
/// that owns the polls' sockets): an answer now, a parked poll, a 400 for a bad query, or a reset.
/// The loop thread writes all but the reset without a task; a reset needs the whole state from
/// the store, so the loop leaves it to the route, which completes it.
struct PollRoutes: Sendable {
    let feed: EventFeed
    /// The answer to a poll that needs the whole state again (another launch's epoch, a `since`
    /// the buffer no longer holds), given the feed's epoch.
    let reset: @Sendable (_ epoch: String) async throws -> HTTPResponse

    /// The dashboard's polls: a reset carries the whole state (`GET /api/state`'s body).
    init(feed: EventFeed, state: StateRoutes) {
        self.feed = feed
        self.reset = { epoch in
            let snapshot = try await state.snapshot()
            return try JSONResponse.make(ResetBody(epoch: epoch, seq: snapshot.seq, reset: true, state: snapshot), dates: true)
        }
    }

    init(feed: EventFeed, reset: @escaping @Sendable (_ epoch: String) async throws -> HTTPResponse) {
        self.feed = feed
        self.reset = reset
    }

    static let defaultTimeout = 25
    static let maxTimeout = 60

    func register(in router: inout Router) {
        router.add("GET", "/api/poll") { request, _, _ in
            switch await feed.onItsExecutor({ _ in decide(request) }) {
            case .answer(let response):
                return response
            case .reset(let epoch):
                await feed.countReset()
                return try await reset(epoch)
            }
        }
    }

    struct Parameters {
        var since: Int
        var timeout: Int
        var visible: Bool
        var epoch: String?
    }

    /// The query's parameters, or the problem to answer with. The query is read in one pass (a
    /// poll comes for every answer); the first parameter of each name counts, as `queryValue`'s.
    static func parameters(of request: HTTPRequest) -> Result<Parameters, Problem> {
        var since, timeout, visible, epoch: String??
        request.forEachQueryParameter { name, value in
            switch name {
            case "since" where since == nil: since = .some(value)
            case "timeout" where timeout == nil: timeout = .some(value)
            case "visible" where visible == nil: visible = .some(value)
            case "epoch" where epoch == nil: epoch = .some(value)
            default: break
            }
            return since == nil || timeout == nil || visible == nil || epoch == nil
        }
        var parameters = Parameters(since: 0, timeout: defaultTimeout, visible: visible == "1", epoch: epoch ?? nil)
        if let text = since ?? nil {
            guard let value = Int(text), value >= 0 else {
                return .failure(Problem(status: .badRequest, detail: "since must be a sequence number (0 or more)."))
            }
            parameters.since = value
        }
        if let text = timeout ?? nil {
            guard let value = Int(text), (0...maxTimeout).contains(value) else {
                return .failure(Problem(status: .badRequest, detail: "timeout must be a whole number of seconds from 0 to \(maxTimeout)."))
            }
            parameters.timeout = value
        }
        if let text = visible ?? nil, text != "0", text != "1" {
            return .failure(Problem(status: .badRequest, detail: "visible must be 0 or 1."))
        }
        return .success(parameters)
    }

    enum Decision {
        case answer(HTTPResponse)
        /// The client needs the whole state again.
        case reset(epoch: String)
    }

    /// Decides a poll; must run on the feed's executor.
    func decide(_ request: HTTPRequest) -> Decision {
        let parameters: Parameters
        switch Self.parameters(of: request) {
        case .success(let parsed): parameters = parsed
        case .failure(let problem): return .answer(problem.response)
        }
        return feed.assumeIsolated { feed in
            switch feed.poll(since: parameters.since, epoch: parameters.epoch, timeout: .seconds(parameters.timeout),
                             visible: parameters.visible) {
            case .now(let response): return .answer(response)
            case .held(let held): return .answer(.held(held))
            case .reset: return .reset(epoch: feed.epoch)
            }
        }
    }

    /// The loop thread's path: every poll but a reset (nil: the route answers it).
    func answerOnLoop(_ request: HTTPRequest) -> HTTPResponse? {
        if case .answer(let response) = decide(request) { return response }
        return nil
    }
}

struct ResetBody: Encodable, Sendable {
    var epoch: String
    var seq: Int
    var reset: Bool
    var state: StateSnapshot
}
