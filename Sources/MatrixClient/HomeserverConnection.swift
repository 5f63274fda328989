import Foundation
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// How the transport's requests reach the homeserver: plain `http://` on the project's own client,
/// or `https://` through the `https-fetch` helper, one child process per request.
protocol HomeserverConnection: Sendable {
    func send(_ request: HTTPClientRequest, timeout: Duration) async throws(HTTPClientError) -> HTTPClientResponse
}

/// `http://HOST:PORT` on the project's HTTP client (on the dashboard's event loop).
struct PlainConnection: HomeserverConnection {
    let client: HTTPClient
    let host: String
    let port: Int

    func send(_ request: HTTPClientRequest, timeout: Duration) async throws(HTTPClientError) -> HTTPClientResponse {
        try await client.send(request, host: host, port: port, timeout: timeout)
    }
}

/// `https://` through Foundation's URLSession, contained in a child process per request
/// (`https-fetch`, see its source for the traps this keeps out of the dashboard). Cancelling the
/// calling task kills the child: URLSession itself never sees a cancellation. The certificate is
/// checked against the system's store (`/etc/ssl/certs/ca-certificates.crt`, the one file
/// FoundationNetworking reads on Linux).
struct ChildProcessTLSConnection: HomeserverConnection {
    /// `https://host:port` (no path: the request's target carries it).
    let origin: String
    /// The `https-fetch` executable.
    let helper: String

    func send(_ request: HTTPClientRequest, timeout: Duration) async throws(HTTPClientError) -> HTTPClientResponse {
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name] = value }
        let input: [String: Any] = ["method": request.method, "url": origin + request.target, "headers": headers,
                                    "body": Data(request.body).base64EncodedString(), "timeoutSeconds": Double(timeout.components.seconds)]
        guard let payload = try? JSONSerialization.data(withJSONObject: input) else { throw .malformedResponse("unwritable request") }
        let exchange = ChildExchange(helper: helper, input: payload, deadline: timeout + .seconds(5))
        let output: Data
        do {
            output = try await withTaskCancellationHandler {
                try await exchange.run()
            } onCancel: {
                exchange.kill()
            }
        } catch {
            throw Task.isCancelled ? .cancelled : .connect("https-fetch: \(error)")
        }
        if Task.isCancelled { throw .cancelled }
        guard let answer = try? JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw exchange.timedOut ? .timedOut : .connectionLost("https-fetch ended without an answer")
        }
        if let kind = answer["error"] as? String {
            let detail = answer["detail"] as? String ?? kind
            switch kind {
            case "timedOut": throw .timedOut
            case "badResponse": throw .malformedResponse(detail)
            default: throw .connect(detail)
            }
        }
        guard let status = answer["status"] as? Int, let body = (answer["body"] as? String).flatMap({ Data(base64Encoded: $0) }) else {
            throw .malformedResponse("https-fetch answered without a status")
        }
        let fields = (answer["headers"] as? [String: String] ?? [:]).map { (name: $0.key, value: $0.value) }
        return HTTPClientResponse(status: status, headers: HTTPHeaders(fields), body: Array(body))
    }
}

/// One run of the helper: its stdin written, its stdout read to the end on a thread of its own
/// (the blocking calls stay off the concurrency pool), the result handed back once it exited.
/// `kill()` (cancellation) and the deadline end it with SIGKILL.
private final class ChildExchange: @unchecked Sendable {
    private let process = Process()
    private let input: Data
    private let deadline: Duration
    private let lock = NSLock()
    private var killed = false
    private var expired = false

    init(helper: String, input: Data, deadline: Duration) {
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = []
        self.input = input
        self.deadline = deadline
    }

    var timedOut: Bool { lock.withLock { expired } }

    func run() async throws -> Data {
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        if lock.withLock({ killed }) { Glibc.kill(process.processIdentifier, SIGKILL) }
        let pid = process.processIdentifier
        let seconds = Double(deadline.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self, self.process.isRunning else { return }
            self.lock.withLock { self.expired = true }
            Glibc.kill(pid, SIGKILL)
        }
        return await withCheckedContinuation { continuation in
            let thread = Thread { [process, input] in
                try? stdin.fileHandleForWriting.write(contentsOf: input)
                try? stdin.fileHandleForWriting.close()
                let output = stdout.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: output)
            }
            thread.start()
        }
    }

    func kill() {
        let running = lock.withLock { () -> Bool in
            killed = true
            return process.processIdentifier != 0
        }
        if running { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
