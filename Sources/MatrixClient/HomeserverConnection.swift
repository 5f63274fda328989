import CShims
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

/// One run of the helper: its stdin written, its stdout read to the end and the child reaped
/// (`waitpid`) on a thread of its own (the blocking calls stay off the concurrency pool), the
/// result handed back once it exited. `kill()` (cancellation) and the deadline end it with SIGKILL.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`: under load, a `Process` whose
/// child had exited could be left unreaped (a zombie) with `waitUntilExit` never returning, which
/// left a sync held forever. Here the thread that reads the output reaps the child itself, and the
/// pipes are close-on-exec, so no other helper started meanwhile holds them open.
private final class ChildExchange: @unchecked Sendable {
    private let helper: String
    private let input: Data
    private let deadline: Duration
    private let lock = NSLock()
    /// The running child, 0 before it started and after it was reaped (so a late kill hits nothing).
    private var pid: pid_t = 0
    private var killed = false
    private var expired = false

    init(helper: String, input: Data, deadline: Duration) {
        self.helper = helper
        self.input = input
        self.deadline = deadline
    }

    var timedOut: Bool { lock.withLock { expired } }

    struct SpawnError: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    func run() async throws -> Data {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard cshims_pipe_cloexec(&toChild) == 0 else { throw SpawnError(call: "pipe2", code: errno) }
        guard cshims_pipe_cloexec(&fromChild) == 0 else {
            close(toChild[0]); close(toChild[1])
            throw SpawnError(call: "pipe2", code: errno)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(helper), nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&child, helper, &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw SpawnError(call: "posix_spawn \(helper)", code: spawned)
        }
        let killNow = lock.withLock { () -> Bool in
            pid = child
            return killed
        }
        if killNow { Glibc.kill(child, SIGKILL) }
        let seconds = Double(deadline.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self else { return }
            let running = self.lock.withLock { () -> pid_t in
                if self.pid != 0 { self.expired = true }
                return self.pid
            }
            if running != 0 { Glibc.kill(running, SIGKILL) }
        }
        let (writeEnd, readEnd, input, spawnedChild) = (toChild[1], fromChild[0], self.input, child)
        return await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                input.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(writeEnd, bytes.baseAddress! + offset, bytes.count - offset)
                        if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { break }
                    }
                }
                close(writeEnd)
                var output = Data()
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let count = read(readEnd, &buffer, buffer.count)
                    if count > 0 { output.append(contentsOf: buffer[..<count]) } else if count < 0 && errno == EINTR { continue } else { break }
                }
                close(readEnd)
                var status: Int32 = 0
                while waitpid(spawnedChild, &status, 0) < 0 && errno == EINTR {}
                self.lock.withLock { self.pid = 0 }
                continuation.resume(returning: output)
            }
            thread.start()
        }
    }

    func kill() {
        let running = lock.withLock { () -> pid_t in
            killed = true
            return pid
        }
        if running != 0 { Glibc.kill(running, SIGKILL) }
    }
}
