import HTTPCore
import Upstream

/// The simulator's HTTP face: applies the drawn fault around each upstream call and holds polls
/// outside the actor, so a held poll never blocks anything else.
public struct SimulatorResponder: HTTPResponder {
    public let simulator: ChatSimulator

    public init(simulator: ChatSimulator) {
        self.simulator = simulator
    }

    public func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        let path = request.path
        if path.hasPrefix("/sim/") {
            return await simulator.control(request)
        }
        guard path.hasPrefix("/v1/") else {
            if path == "/" || path == "/healthz" {
                return .text("chat simulator: see /v1/* and /sim/*\n")
            }
            return ChatSimulator.error(.notFound, "no such path")
        }
        let isPurchase = path == "/v1/storage/purchase"
        let isSend = path == "/v1/messages" && request.method == "POST"
        let fault = await simulator.drawFault(isPurchase: isPurchase, isSend: isSend, path: path)
        switch fault {
        case .offline:
            return simulator.wireFaults.dropConnection(of: context)
        case .error500:
            return ChatSimulator.error(.internalServerError, "injected server error")
        case .decline:
            return await simulator.declinedPurchase(request)
        case .refuseSend:
            return await simulator.refusedSend(request)
        case .unauthorized:
            return ChatSimulator.error(.unauthorized, "injected: token refused")
        case .conflict:
            return ChatSimulator.error(.conflict, "injected: another poller took over")
        case .slow:
            try? await Task.sleep(for: await simulator.slowDelay)
        case .none, .malformed, .drop:
            break
        }
        var response: HTTPResponse
        // A spoiled answer comes at once, as from a captive portal or a broken proxy.
        let spoils = fault == .malformed || fault == .drop
        switch await simulator.upstream(request, connection: context.connectionID, mayHold: !spoils) {
        case .respond(let answer):
            response = answer
        case .hold(let held):
            guard let answer = await held.value() else {
                return simulator.wireFaults.dropConnection(of: context)  // the client went away; nobody reads this
            }
            response = answer
        }
        // A poll held until the network went offline is cut already.
        guard simulator.wireFaults.pendingCut(on: context.connectionID) == nil else { return response }
        switch fault {
        case .malformed:
            if await simulator.useMalformedPage() {
                response.headers.set("Content-Type", "text/html")
                response.body = Array("<html><body><h1>Sign in to the Wi-Fi</h1></body></html>".utf8)
            } else {
                response.body = Array(response.body.prefix(max(1, response.body.count / 2)))
                if response.body.count < 3 { response.body = Array("{\"messages\": [tru".utf8) }
            }
        case .drop:
            simulator.wireFaults.cutNextAnswer(on: context.connectionID, .after(bytes: await simulator.truncationPoint(for: response)))
        default:
            break
        }
        return response
    }
}
