import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization

/// `UpstreamAPI` over HTTP with URLSession.
///
/// Why URLSession and not a client on our own HTTP core: it brings connection reuse, chunked and
/// close-delimited bodies, redirects and DNS that any `--upstream` server may need, at no code
/// cost. Its one hazard here, a deadlock when its async API is cancelled through Task
/// cancellation (swift-corelibs-foundation #5412), is avoided by bridging the callback API
/// ourselves: see `perform(_:)`.
public final class HTTPUpstreamClient: UpstreamAPI {
    public let baseURL: URL
    public var location: String { baseURL.absoluteString }
    private let session: URLSession
    private let decoder = JSONDecoder()
    private let log = Logger("upstream")

    /// - Parameter holdSeconds: how long the server holds a poll; the client waits 10 s longer.
    public init(baseURL: URL, holdSeconds: Int = 25) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = TimeInterval(holdSeconds + 10)
        configuration.timeoutIntervalForResource = TimeInterval(holdSeconds + 10)
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        configuration.httpMaximumConnectionsPerHost = 4
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func createSession() async throws(UpstreamError) -> UpstreamSession {
        try await call("POST", "/v1/session", body: Data("{}".utf8))
    }

    public func lastMessageInfo(token: String) async throws(UpstreamError) -> LastMessageInfo {
        try await call("GET", "/v1/last-message-info", token: token)
    }

    public func messages(token: String, after cursors: StreamCursors, holdSeconds: Int) async throws(UpstreamError) -> MessagesAnswer {
        var query = "primaryAfter=\(cursors.primaryAfter)&timeout=\(holdSeconds)"
        if let linked = cursors.linkedAfter { query += "&linkedAfter=\(linked)" }
        return try await call("GET", "/v1/messages?" + query, token: token, timeout: TimeInterval(holdSeconds + 10))
    }

    public func purchaseStorage(token: String, bytes: Int64, idempotencyKey: String) async throws(UpstreamError) -> Int64 {
        struct Answer: Decodable { var storageQuotaBytes: Int64 }
        let answer: Answer = try await call("POST", "/v1/storage/purchase", token: token, body: Data("{\"bytes\":\(bytes)}".utf8),
                                            headers: ["Idempotency-Key": idempotencyKey])
        return answer.storageQuotaBytes
    }

    // MARK: Plumbing

    private func call<Answer: Decodable>(_ method: String, _ pathAndQuery: String, token: String? = nil, body: Data? = nil,
                                         headers: [String: String] = [:], timeout: TimeInterval = 10) async throws(UpstreamError) -> Answer {
        guard let url = URL(string: pathAndQuery, relativeTo: baseURL) else {
            throw .badResponse("cannot build a URL from \(pathAndQuery)")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }

        let started = Date()
        log.trace("-> \(method) \(pathAndQuery)")
        let status: Int, data: Data
        do {
            (status, data) = try await perform(request)
        } catch {
            log.debug("<- \(method) \(url.path) failed after \(Int(Date().timeIntervalSince(started) * 1000)) ms: \(error)")
            throw error
        }
        log.trace("<- \(method) \(url.path) \(status) after \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        switch status {
        case 200..<300:
            do {
                return try decoder.decode(Answer.self, from: data)
            } catch {
                throw .badResponse("\(method) \(url.path): \(Self.describe(error)); body starts \(Self.preview(data))")
            }
        case 401: throw .unauthorized
        case 402: throw .paymentDeclined
        case 409: throw .anotherPoller
        case 500...599: throw .serverError(status: status)
        default: throw .badResponse("\(method) \(url.path): unexpected status \(status)")
        }
    }

    /// The callback API bridged into async; cancellation reaches URLSession from another queue so
    /// it can never re-enter the task's own continuation while that is being set up.
    private func perform(_ request: URLRequest) async throws(UpstreamError) -> (Int, Data) {
        let holder = DataTaskHolder()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Int, Data), any Error>) in
                    let task = session.dataTask(with: request) { data, response, error in
                        if let error {
                            continuation.resume(throwing: error)
                        } else if let response = response as? HTTPURLResponse {
                            continuation.resume(returning: (response.statusCode, data ?? Data()))
                        } else {
                            continuation.resume(throwing: UpstreamError.badResponse("no HTTP response"))
                        }
                    }
                    holder.start(task)
                }
            } onCancel: {
                DispatchQueue.global().async { holder.cancel() }
            }
        } catch let error as UpstreamError {
            throw error
        } catch let error as URLError {
            switch error.code {
            case .cancelled: throw .cancelled
            case .timedOut: throw .timedOut
            case .cannotParseResponse, .cannotDecodeContentData, .cannotDecodeRawData:
                throw .badResponse(error.localizedDescription)
            default:
                // Including .badServerResponse, which is how a connection cut before any answer
                // ("Empty reply from server") surfaces.
                throw .unreachable("\(error.code.rawValue): \(error.localizedDescription)")
            }
        } catch {
            throw .unreachable("\(error)")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "not JSON (\(context.debugDescription))"
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context): "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.valueNotFound(_, let context): "null at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(error)"
        }
    }

    private static func preview(_ data: Data) -> String {
        String(decoding: data.prefix(60), as: UTF8.self).debugDescription
    }
}

/// Holds the data task so a cancellation that races its creation still cancels it.
private final class DataTaskHolder: @unchecked Sendable {
    // Guarded by `lock`; URLSessionDataTask is thread-safe for resume and cancel.
    private let lock = Mutex<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

    func start(_ task: URLSessionDataTask) {
        let cancelled = lock.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        task.resume()
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock { state -> URLSessionDataTask? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
