import ChatSimulator
import Foundation
import HTTPCore

/// `/api/simulator/{action}`: the built-in simulator's control API for the page, behind the same
/// Host, token, CSRF and Origin checks as everything else, and answering like the rest of the API:
/// each action with its own method (405 with `Allow` otherwise), errors as problem+json. Absent
/// (404) with an external upstream.
struct SimulatorRoutes {
    let simulator: ChatSimulator?

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
    }

    private func forward(_ request: HTTPRequest, action: String, context: RequestContext) async throws -> HTTPResponse {
        guard let simulator else {
            return Problem(status: .notFound, detail: "The simulator is not built in: the dashboard syncs with --upstream.").response
        }
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
