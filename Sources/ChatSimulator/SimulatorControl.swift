import Foundation
import HTTPCore

/// The simulator's control calls as values: `/sim/{action}` on its own port, and what the dashboard
/// offers the page as `/api/simulator/{action}`. Both parse a call into a `SimulatorCommand` and
/// hand it to `ChatSimulator.perform(_:)`; only the way each port words a refusal differs.
public enum SimulatorAction: String, Sendable, CaseIterable {
    case messages
    case auto
    case faults
    case linked
    case quota
    case expireToken = "expire-token"
    case sent
    /// What the accounts wrote into chats (`POST /v1/messages`), newest last.
    case written
    case stats

    /// The one method each takes.
    public var method: String {
        switch self {
        case .sent, .written, .stats: "GET"
        case .messages, .auto, .faults, .linked, .quota, .expireToken: "POST"
        }
    }
}

/// What a control call asks the simulator to do.
public enum SimulatorCommand: Sendable, Equatable {
    case publish(account: String, count: Int, text: String?)
    case setAutoRate(perSecond: Double)
    case setFaults(FaultSettings)
    case setLinked(Bool)
    case setQuota(bytes: Int64)
    case expireTokens
    case sent
    case written
    case stats

    /// The command `action` with `body` asks for, or why the body is no such call.
    public static func parse(_ action: SimulatorAction, body: [UInt8]) -> Result<SimulatorCommand, SimulatorRefusal> {
        switch action {
        case .messages:
            guard let body = PublishBody(json: body), (1...100_000).contains(body.count) else {
                return .failure(.badRequest("body must be {\"account\": \"primary\"|\"linked\", \"count\": 1...100000, \"text\"?: s}"))
            }
            return .success(.publish(account: body.account, count: body.count, text: body.text))
        case .auto:
            struct Body: Decodable { var perSecond: Double }
            guard let body = decode(Body.self, body), body.perSecond >= 0, body.perSecond <= 100_000 else {
                return .failure(.badRequest("body must be {\"perSecond\": 0...100000}"))
            }
            return .success(.setAutoRate(perSecond: body.perSecond))
        case .faults:
            struct Body: Decodable { var mode: FaultMode; var rate: Double?; var delayMs: Int? }
            guard let body = decode(Body.self, body), (0...1).contains(body.rate ?? 1), (0...60_000).contains(body.delayMs ?? 0) else {
                let modes = FaultMode.allCases.map(\.rawValue).joined(separator: "|")
                return .failure(.badRequest("body must be {\"mode\": \"\(modes)\", \"rate\"?: 0...1, \"delayMs\"?: 0...60000}"))
            }
            return .success(.setFaults(FaultSettings(mode: body.mode, rate: body.rate ?? 1, delay: body.delayMs.map { .milliseconds($0) })))
        case .linked:
            struct Body: Decodable { var linked: Bool }
            guard let body = decode(Body.self, body) else { return .failure(.badRequest("body must be {\"linked\": true|false}")) }
            return .success(.setLinked(body.linked))
        case .quota:
            struct Body: Decodable { var bytes: Int64 }
            guard let body = decode(Body.self, body), body.bytes >= 0 else {
                return .failure(.badRequest("body must be {\"bytes\": n} with n >= 0"))
            }
            return .success(.setQuota(bytes: body.bytes))
        case .expireToken: return .success(.expireTokens)
        case .sent: return .success(.sent)
        case .written: return .success(.written)
        case .stats: return .success(.stats)
        }
    }

    private static func decode<Value: Decodable>(_ type: Value.Type, _ body: [UInt8]) -> Value? {
        try? JSONDecoder().decode(type, from: Data(body.isEmpty ? Array("{}".utf8) : body))
    }
}

/// A control call the simulator will not carry out, and why (in lower case, as its own port says it).
public struct SimulatorRefusal: Error, Sendable, Equatable {
    public var status: HTTPStatus
    public var reason: String

    static func badRequest(_ reason: String) -> SimulatorRefusal { SimulatorRefusal(status: .badRequest, reason: reason) }
}

extension ChatSimulator {
    /// Carries out `command`; its answer as JSON, or why not.
    public func perform(_ command: SimulatorCommand) -> Result<HTTPResponse, SimulatorRefusal> {
        switch command {
        case .publish(let account, let count, let text):
            guard let ids = publish(account: account, count: count, text: text) else {
                return .failure(SimulatorRefusal(status: .conflict, reason: account == "linked" ? "no linked account is attached" : "unknown account"))
            }
            return .success(HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: PublishBody.answer(ids)))
        case .setAutoRate(let perSecond):
            setAutoRate(perSecond)
            return .success(Self.json(["perSecond": perSecond]))
        case .setFaults(let settings):
            setFaults(settings)
            return .success(Self.json(FaultsBody(mode: faults.mode, rate: faults.rate, delayMs: faults.delay.map(Self.milliseconds))))
        case .setLinked(let linked):
            setLinked(linked)
            return .success(Self.json(["linkedUserId": linkedUserId]))
        case .setQuota(let bytes):
            setQuota(bytes)
            return .success(Self.json(["storageQuotaBytes": quota]))
        case .expireTokens:
            expireTokens()
            return .success(Self.json(["expired": true]))
        case .sent:
            return .success(Self.json(sent()))
        case .written:
            return .success(Self.json(WrittenBody(messages: written())))
        case .stats:
            return .success(Self.json(stats()))
        }
    }

    /// `/sim/{action}` on the simulator's own port: refusals as `{"error": "..."}`.
    func control(_ request: HTTPRequest) -> HTTPResponse {
        guard let action = SimulatorAction(rawValue: String(request.path.dropFirst("/sim/".count))), action.method == request.method else {
            return Self.error(.notFound, "no such control call")
        }
        switch SimulatorCommand.parse(action, body: request.body).flatMap(perform) {
        case .success(let answer): return answer
        case .failure(let refusal): return Self.error(refusal.status, refusal.reason)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
