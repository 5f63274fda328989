import ChatSimulator
import HTTPCore

/// `/api/simulator/{action}`: the built-in simulator's control API for the page, behind the same
/// Host, CSRF and Origin checks as everything else. Absent (404) with an external upstream.
struct SimulatorRoutes {
    let simulator: ChatSimulator?

    func register(in router: inout Router) {
        for method in ["GET", "POST"] {
            router.add(method, "/api/simulator/{action}") { request, parameters, context in
                guard let simulator else {
                    return Problem(status: .notFound, detail: "The simulator is not built in: the dashboard syncs with --upstream.").response
                }
                var forwarded = request
                forwarded.target = "/sim/" + (parameters["action"] ?? "") + (request.query.map { "?" + $0 } ?? "")
                return try await SimulatorResponder(simulator: simulator).respond(to: forwarded, context: context)
            }
        }
    }
}
