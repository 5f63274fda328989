import Foundation
import HTTPCore
import JSONText
import Logging
import Upstream

/// `UpstreamAPI` over HTTP/1.1 with the project's own client (`HTTPCore.HTTPClient`).
///
/// Why not URLSession: on this platform its callback API trips an assertion inside
/// FoundationNetworking (`_NativeProtocol.transferCompleted`) when a server cuts a connection
/// mid-response, which the simulator's `drop` and `offline` faults do on purpose, and its async
/// API can deadlock on cancellation (swift-corelibs-foundation #5412). A crash is not a
/// recoverable error. Our client runs on an epoll loop of the process's own, closes the socket on
/// Task cancellation, and turns every failure into a typed error. It speaks plain `http://`.
///
/// Sends (`POST /v1/messages`) may go on a loop of their own, on connections of their own: a
/// message on its way out then never waits while the loop reads a sync batch, nor a batch while
/// a send's answer is read.
public final class ChatServerUpstream: UpstreamAPI, MessageSending {
    public let baseURL: URL
    public var location: String { baseURL.absoluteString }
    private let client: HTTPClient
    /// The client `send` uses: its own loop's, or `client`.
    private let sendClient: HTTPClient
    private let host: String
    private let port: Int
    private let basePath: String
    private let holdSeconds: Int
    private let log = Logger("upstream")

    /// - Parameters:
    ///   - loop: where the sync's requests (and every other but sends) are made and read.
    ///   - sendLoop: where sends are, if not on `loop`.
    ///   - holdSeconds: how long the server holds a poll; the client waits 10 s longer.
    public init(baseURL: URL, loop: EventLoop, sendLoop: EventLoop? = nil, holdSeconds: Int = 25) {
        self.baseURL = baseURL
        self.client = HTTPClient(loop: loop)
        self.sendClient = sendLoop.map { HTTPClient(loop: $0) } ?? client
        self.host = baseURL.host ?? "127.0.0.1"
        self.port = baseURL.port ?? 80
        let path = baseURL.path
        self.basePath = path.hasSuffix("/") ? String(path.dropLast()) : path
        self.holdSeconds = holdSeconds
    }

    public func createSession() async throws(UpstreamError) -> UpstreamSession {
        try await call("POST", "/v1/session", body: Array("{}".utf8))
    }

    public func lastMessageInfo(token: String) async throws(UpstreamError) -> LastMessageInfo? {
        let info: LastMessageInfo = try await call("GET", "/v1/last-message-info", token: token)
        return info
    }

    /// A cursor of this protocol as the id it is (nil: from the beginning, 0); nil if it is not one.
    private static func id(_ cursor: String?) -> Int64? {
        guard let cursor else { return 0 }
        return Int64(cursor).flatMap { $0 >= 0 ? $0 : nil }
    }

    public func messages(token: String, after cursors: StreamCursors, wait: PollWait) async throws(UpstreamError) -> MessagesAnswer {
        let holdSeconds = wait.seconds
        // This protocol's cursors are message ids; anything else was not given by it.
        guard let primary = Self.id(cursors.primary), let linked = Self.id(cursors.linked) else {
            throw .badResponse("a cursor that is not a message id of this protocol")
        }
        var query = "primaryAfter=\(primary)&timeout=\(holdSeconds)"
        if cursors.includesLinked { query += "&linkedAfter=\(linked)" }
        return try await call("GET", "/v1/messages?" + query, token: token, timeout: .seconds(holdSeconds + 10),
                              decode: MessagesAnswer.init(json:))
    }

    public func purchaseStorage(token: String, bytes: Int64, idempotencyKey: String) async throws(UpstreamError) -> Int64 {
        struct Answer: Decodable { var storageQuotaBytes: Int64 }
        let answer: Answer = try await call("POST", "/v1/storage/purchase", token: token, body: Array("{\"bytes\":\(bytes)}".utf8),
                                            headers: ["Idempotency-Key": idempotencyKey])
        return answer.storageQuotaBytes
    }

    /// `POST /v1/messages` (CONTRACT section 11): the answer's id, and the message as the
    /// protocol's poll will bring it back (its own sender, the key it went under).
    public func send(_ message: OutgoingMessage, token: String, deadline: Duration) async throws(UpstreamError) -> UpstreamMessage {
        guard message.action == .message else {
            throw .refused(SendRefusal(.forbidden, detail: "this chat server takes messages, not reactions"))
        }
        var body = JSONWriter(capacity: 64 + message.text.utf8.count)
        body.raw(#"{"userId":"#); body.number(message.userId)
        body.raw(#","chatId":"#); body.number(message.chatId)
        body.raw(#","text":"#); body.string(message.text)
        body.raw("}")
        let answer = try await call("POST", "/v1/messages", token: token, body: body.bytes, headers: ["Idempotency-Key": message.key],
                                    timeout: deadline, refusals: true, on: sendClient, decode: SentAnswer.init(json:))
        return UpstreamMessage(id: answer.id, chatId: message.chatId, sender: UpstreamMessage.ownSender, text: message.text,
                               sentAt: message.writtenAt, sendKey: message.key)
    }

    // MARK: Plumbing

    /// `refusals`: 403, 404 and 413 say the call will never succeed as it is (a send's refusals).
    private func call<Answer: Decodable>(_ method: String, _ pathAndQuery: String, token: String? = nil, body: [UInt8] = [],
                                         headers: HTTPHeaders = [:], timeout: Duration = .seconds(10),
                                         refusals: Bool = false) async throws(UpstreamError) -> Answer {
        try await call(method, pathAndQuery, token: token, body: body, headers: headers, timeout: timeout, refusals: refusals) { bytes in
            try JSONDecoder().decode(Answer.self, from: Data(bytes))
        }
    }

    private func call<Answer>(_ method: String, _ pathAndQuery: String, token: String? = nil, body: [UInt8] = [],
                              headers: HTTPHeaders = [:], timeout: Duration = .seconds(10), refusals: Bool = false,
                              on client: HTTPClient? = nil, decode: ([UInt8]) throws -> Answer) async throws(UpstreamError) -> Answer {
        var request = HTTPClientRequest(method: method, target: basePath + pathAndQuery, headers: headers, body: body)
        request.headers.add("Accept", "application/json")
        if let token { request.headers.add("Authorization", "Bearer \(token)") }
        if !body.isEmpty { request.headers.add("Content-Type", "application/json") }
        let started = ContinuousClock.now
        log.trace("-> \(method) \(pathAndQuery)")
        let response: HTTPClientResponse
        do {
            response = try await (client ?? self.client).send(request, host: host, port: port, timeout: timeout)
        } catch {
            log.debug("<- \(method) \(pathAndQuery) failed after \(ContinuousClock.now - started): \(error)")
            switch error {
            case .cancelled: throw .cancelled
            case .timedOut: throw .timedOut
            case .malformedResponse(let detail): throw .badResponse(detail)
            case .tooLarge(let limit): throw .badResponse("an answer over \(limit) bytes")
            case .resolution(let detail), .connect(let detail), .connectionLost(let detail): throw .unreachable(detail)
            }
        }
        log.trace("<- \(method) \(pathAndQuery) \(response.status) after \(ContinuousClock.now - started)")
        switch response.status {
        case 200..<300:
            do {
                return try decode(response.body)
            } catch {
                throw .badResponse("\(method) \(pathAndQuery): \(Self.describe(error)); body starts \(Self.preview(response.body))")
            }
        case 401: throw .unauthorized
        case 402: throw .paymentDeclined
        case 409: throw .anotherPoller
        case 403 where refusals: throw .refused(SendRefusal(.forbidden, detail: Self.said(response.body)))
        case 404 where refusals: throw .refused(SendRefusal(.chatGone, detail: Self.said(response.body)))
        case 413 where refusals: throw .refused(SendRefusal(.tooLarge, detail: Self.said(response.body)))
        case 500...599: throw .serverError(status: response.status)
        default: throw .badResponse("\(method) \(pathAndQuery): unexpected status \(response.status)")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "not JSON (\(context.debugDescription))"
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context): "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.valueNotFound(_, let context): "null at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case let error as JSONReadError: "not the JSON expected (\(error))"
        default: "\(error)"
        }
    }

    /// The server's own words in an error answer (`{"error": "..."}`), or nothing.
    private static func said(_ body: [UInt8]) -> String {
        struct ErrorBody: Decodable { var error: String }
        return (try? JSONDecoder().decode(ErrorBody.self, from: Data(body.prefix(4096))))?.error ?? ""
    }

    private static func preview(_ body: [UInt8]) -> String {
        String(decoding: body.prefix(60), as: UTF8.self).debugDescription
    }
}
