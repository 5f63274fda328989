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

/// "Fill storage" for demos and tests: makes the next messages not fit, whatever the quota is now
/// (bought space included), by publishing messages of about 16 KB until they add up to more than
/// the free space: storage fills, as it would for a person, and the quota stays what it is (a
/// purchase never seems to vanish). Beyond `maximumPublished` messages it refuses and says why.
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
    static let filler = (0..<200).map { "Sample text \($0 + 1) of 200, filling storage for the demo. " + String(repeating: "·", count: 20) }
        .joined(separator: "\n")

    func fill() async -> Result<Filled, Refusal> {
        let usage = await usage()
        guard let quota = usage.quotaBytes else {
            return .failure(Refusal(detail: "There is no storage quota, so storage cannot be filled."))
        }
        let free = max(0, quota - usage.usedBytes)
        let count = Int(free / Int64(Self.filler.utf8.count)) + 2
        guard count <= maximumPublished else {
            return .failure(Refusal(detail: "\(free / 1_000_000) MB are free; filling them would take \(count) messages. "
                                    + "Start the dashboard with a smaller --quota to try storage running out."))
        }
        await simulator.publish(account: "primary", count: count, text: Self.filler)
        return .success(Filled(published: count))
    }
}
