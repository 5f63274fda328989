import ChatSimulator
import Foundation
import HTTPCore
import Store

/// `/api/simulator/{action}`: the built-in simulator's control API for the page, behind the same
/// Host, token, CSRF and Origin checks as everything else, and answering like the rest of the API:
/// each action with its own method (405 with `Allow` otherwise), errors as problem+json. Absent
/// (404) with an external upstream.
///
/// One action is the dashboard's own: `fill` makes storage full from whatever it is now (see
/// ``StorageFiller``).
struct SimulatorRoutes {
    let simulator: ChatSimulator?
    let filler: StorageFiller?

    /// The simulator's control calls and the method each takes.
    static let actions: [(name: String, method: String)] = [
        ("messages", "POST"), ("auto", "POST"), ("faults", "POST"), ("linked", "POST"), ("quota", "POST"), ("expire-token", "POST"),
        ("sent", "GET"), ("stats", "GET"),
    ]

    func register(in router: inout Router) {
        for action in Self.actions {
            router.add(action.method, "/api/simulator/" + action.name) { request, _, context in
                try await forward(request, action: action.name, context: context)
            }
        }
        router.add("POST", "/api/simulator/fill") { _, _, _ in
            guard let filler else { return Self.noSimulator }
            switch await filler.fill() {
            case .success(let filled):
                return try JSONResponse.make(filled)
            case .failure(let refusal):
                return Problem(status: .conflict, detail: refusal.detail).response
            }
        }
    }

    private static var noSimulator: HTTPResponse {
        Problem(status: .notFound, detail: "The simulator is not built in: the dashboard syncs with --upstream.").response
    }

    private func forward(_ request: HTTPRequest, action: String, context: RequestContext) async throws -> HTTPResponse {
        guard let simulator else { return Self.noSimulator }
        var forwarded = request
        forwarded.target = "/sim/" + action + (request.query.map { "?" + $0 } ?? "")
        let answer = try await SimulatorResponder(simulator: simulator).respond(to: forwarded, context: context)
        guard answer.status.code >= 400 else { return answer }
        // The simulator speaks `{"error": "..."}` on its own port; here it answers as the API does.
        struct SimulatorError: Decodable { var error: String }
        let detail = (try? JSONDecoder().decode(SimulatorError.self, from: Data(answer.body)))?.error ?? "The simulator refused that."
        return Problem(status: answer.status, detail: detail.prefix(1).uppercased() + detail.dropFirst() + ".").response
    }
}

/// "Fill storage" for demos and tests: makes storage full as it fills for a person, whatever the
/// quota is now (bought space included), and leaves the quota as it is (a purchase never seems to
/// vanish). Messages of about 16 KB are published that fill what is free, the dashboard stores
/// them, and then a few more come that do not fit: storage is full of what was stored, so Free
/// space can make room (it removes the oldest) as well as Buy more space. Beyond
/// `maximumPublished` messages it refuses and says why.
struct StorageFiller: Sendable {
    struct Filled: Encodable, Sendable {
        var published: Int
    }

    struct Refusal: Error {
        var detail: String
    }

    let simulator: ChatSimulator
    let usage: @Sendable () async -> StorageUsage
    var maximumPublished = 2_000
    /// The messages that come once storage is filled, and do not fit.
    static let overflowing = 4
    /// How long the stored part may take to be stored before the overflowing part comes anyway.
    var storedWithin: Duration = .seconds(10)
    static let filler = (0..<200).map { "Sample text \($0 + 1) of 200, filling storage for the demo. " + String(repeating: "·", count: 20) }
        .joined(separator: "\n")

    func fill() async -> Result<Filled, Refusal> {
        let before = await usage()
        guard let quota = before.quotaBytes else {
            return .failure(Refusal(detail: "There is no storage quota, so storage cannot be filled."))
        }
        // What one stored message takes: its text and the store's own (a sender of a few letters, its
        // time, a row: 80 bytes at most), so that what is left after the fitting part is less than two.
        let size = Int64(Self.filler.utf8.count) + 80
        let free = max(0, quota - before.usedBytes)
        // What fits, less one message's room (so the overflow is what does not fit), then the overflow.
        let fitting = max(0, Int(free / size) - 1)
        guard fitting + Self.overflowing <= maximumPublished else {
            return .failure(Refusal(detail: "\(free / 1_000_000) MB are free; filling them would take \(fitting + Self.overflowing) messages. "
                                    + "Start the dashboard with a smaller --quota to try storage running out."))
        }
        if fitting > 0 {
            await simulator.publish(account: "primary", count: fitting, text: Self.filler)
            // The fitting part is stored as one batch first: published together with the overflow,
            // the whole would not fit and nothing would be stored.
            let stored = before.usedBytes + Int64(fitting) * size * 9 / 10
            let deadline = ContinuousClock.now + storedWithin
            while await usage().usedBytes < stored, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        await simulator.publish(account: "primary", count: Self.overflowing, text: Self.filler)
        return .success(Filled(published: fitting + Self.overflowing))
    }
}
