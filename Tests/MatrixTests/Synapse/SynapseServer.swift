import Foundation
import HTTPCore
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real Synapse homeserver for one test: its own temporary folder (configuration, SQLite
/// database, media, signing key, log), a free loopback port, and a child process that can be
/// killed, restarted on the same port and data, and stopped.
///
/// Python is `LP_SYNAPSE_PYTHON` when set, else the package's venv `.build/synapse-venv/bin/python`
/// (which `.ci/run` makes). `availability` says whether it is there; `Trait.requiresSynapse`
/// turns that into a skip with the reason, except under CI, where a missing Synapse fails.
///
/// No Synapse outlives the test run: `stop()` ends it, `deinit` kills it as a last resort, and
/// the launcher makes Synapse exit by itself when the test process is gone (even after a crash).
final class SynapseServer: Sendable {
    /// Whether Synapse can be started here, and if not, why.
    struct Availability: Sendable {
        /// The Python that runs Synapse.
        var python: String
        /// Why Synapse cannot be started; nil when it can.
        var problem: String?

        var isAvailable: Bool { problem == nil }
        /// The plain-language reason a test is skipped (or, under CI, fails).
        var reason: String { problem ?? "matrix-synapse is installed (Python \(python))" }
    }

    /// A Synapse rate limit: `perSecond` requests a second on average, bursts of `burstCount`.
    struct RateLimit: Sendable {
        var perSecond: Double
        var burstCount: Int

        /// High enough that tests sending thousands of messages, logging in and creating rooms
        /// by the dozen never meet it.
        static let unlimited = RateLimit(perSecond: 100_000, burstCount: 1_000_000)
    }

    static let availability: Availability = checkAvailability()

    /// True when a test that needs Synapse must run: Synapse is there, or this is CI (where a
    /// missing Synapse is a failure, not a reason to skip).
    static var mustRun: Bool {
        availability.isAvailable || ProcessInfo.processInfo.environment["CI"] != nil
    }

    let port: Int
    let serverName: String
    /// `http://127.0.0.1:PORT`, no trailing slash.
    let baseURL: URL
    /// The temporary folder with everything this server writes; removed by `stop()` and `deinit`.
    let folder: URL
    /// The secret `registerUser` proves itself with (`registration_shared_secret`).
    let registrationSecret: String
    /// The version of this server's signing key, unique to it: `GET /_matrix/key/v2/server`
    /// names it, which tells this server apart from another that answers on the same port.
    private let keyVersion: String
    private let python: String

    /// The running process, the task that awaits its exit, and that exit once it happened
    /// (readable without waiting). Nil while stopped.
    private struct Running: Sendable {
        var process: ChildProcess
        var exit: Task<ChildProcess.Exit, Never>
        var exited: ExitRecord
    }

    private final class ExitRecord: Sendable {
        let exit = Mutex<ChildProcess.Exit?>(nil)
    }

    private let running = Mutex<Running?>(nil)

    private var configPath: String { folder.appendingPathComponent("homeserver.yaml").path }
    private var launcherPath: String { folder.appendingPathComponent("launch_synapse.py").path }
    /// Synapse's own log (WARNING and above).
    var logPath: String { folder.appendingPathComponent("homeserver.log").path }

    private init(python: String, port: Int, serverName: String, folder: URL, registrationSecret: String) {
        self.python = python
        self.port = port
        self.serverName = serverName
        self.folder = folder
        self.registrationSecret = registrationSecret
        keyVersion = "t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    deinit {
        if let running = running.withLock({ $0 }) {
            running.process.signal(SIGKILL)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: Starting

    /// Starts a fresh homeserver and returns once its client API answers.
    ///
    /// The free port is only free when it is chosen: another server started at the same time
    /// (another suite's Synapse, a browser test's) can take it before this one binds. Then this
    /// one starts again on another port, up to `portAttempts` times.
    /// - Parameters:
    ///   - rcMessage: the message rate limit; a low one provokes 429 `M_LIMIT_EXCEEDED`.
    ///     Every other rate limit is `RateLimit.unlimited`.
    ///   - rcLogin: limits password sign-ins per address and per account the same way.
    ///   - choosePort: gives the port of each attempt; a test of the harness hands it a taken one.
    static func start(serverName: String = "localhost", rcMessage: RateLimit = .unlimited, rcLogin: RateLimit = .unlimited,
                      readyWithin limit: Duration = .seconds(60), portAttempts: Int = 3,
                      choosePort: () throws -> Int = freeLoopbackPort) async throws -> SynapseServer {
        let availability = Self.availability
        if let problem = availability.problem { throw SynapseError.notInstalled(problem) }
        var attempt = 1
        while true {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("synapse-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let server = SynapseServer(python: availability.python, port: try choosePort(), serverName: serverName,
                                       folder: folder, registrationSecret: UUID().uuidString)
            try server.writeFiles(rcMessage: rcMessage, rcLogin: rcLogin)
            do {
                try await server.launch(readyWithin: limit)
                return server
            } catch SynapseError.portTaken where attempt < portAttempts {
                await server.stop()
                attempt += 1
            }
        }
    }

    /// Writes `homeserver.yaml`, its log configuration, a signing key and the launcher.
    ///
    /// The signing key is written here rather than by `--generate-keys` (which loads all of
    /// Synapse, about 1.4 s): an ed25519 key is any 32 random bytes, in Synapse's key file as
    /// `ed25519 VERSION UNPADDED-BASE64`.
    private func writeFiles(rcMessage: RateLimit, rcLogin: RateLimit) throws {
        let path = folder.path
        var seed = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in seed.indices { seed[index] = generator.next() }
        let key = Data(seed).base64EncodedString().replacingOccurrences(of: "=", with: "")
        try write("ed25519 \(keyVersion) \(key)\n", to: "signing.key")
        try write(Self.logConfig(logFile: logPath), to: "log.yaml")
        try write(Self.launcher, to: "launch_synapse.py")
        try write(Self.homeserverConfig(serverName: serverName, port: port, folder: path, registrationSecret: registrationSecret,
                                        rcMessage: rcMessage, rcLogin: rcLogin), to: "homeserver.yaml")
    }

    private func write(_ text: String, to name: String) throws {
        try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// Starts the process and waits until it answers on its port as itself (`answer()`).
    /// Throws `SynapseError.portTaken` when another server answers there, or when this one
    /// exits because the address is in use.
    private func launch(readyWithin limit: Duration) async throws {
        let process = try ChildProcess(path: python, [launcherPath, "-c", configPath])
        let exited = ExitRecord()
        let exit = Task {
            let exit = await process.waitForExit(limit: .seconds(24 * 3600))
            exited.exit.withLock { $0 = exit }
            return exit
        }
        running.withLock { $0 = Running(process: process, exit: exit, exited: exited) }
        let started = ContinuousClock.now
        while ContinuousClock.now - started < limit {
            switch await answer() {
            case .itself:
                return
            case .anotherServer:
                await terminate(signal: SIGKILL)
                throw SynapseError.portTaken(port)
            case .nothing:
                break
            }
            if let early = exited.exit.withLock({ $0 }) {
                running.withLock { $0 = nil }
                let output = String((early.stdout + early.stderr).suffix(4000))
                let log = logTail()
                if (output + log).contains("Address already in use") { throw SynapseError.portTaken(port) }
                throw SynapseError.exitedBeforeReady(status: early.status, output: output, logTail: log)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await terminate(signal: SIGKILL)
        throw SynapseError.notReady(within: limit, logTail: logTail())
    }

    /// Who answers on this server's port.
    private enum Answer {
        /// No one, or not yet with 200.
        case nothing
        /// This server: its key endpoint names this server's signing key.
        case itself
        /// A server with another signing key.
        case anotherServer
    }

    /// Asks `GET /_matrix/key/v2/server`, which answers once the listener is up (as the client
    /// API does) and names the server's signing key.
    private func answer() async -> Answer {
        let request = HTTPClientRequest(method: "GET", target: "/_matrix/key/v2/server")
        guard let response = try? await MatrixTestClient.http.send(request, host: "127.0.0.1", port: port, timeout: .seconds(5)),
              response.status == 200 else { return .nothing }
        return String(decoding: response.body, as: UTF8.self).contains("\"ed25519:\(keyVersion)\"") ? .itself : .anotherServer
    }

    // MARK: Stopping and restarting

    /// Kills Synapse with SIGKILL (no shutdown of any kind) and waits for it to be gone.
    /// The data folder stays, for `restart()`.
    func kill() async {
        await terminate(signal: SIGKILL)
    }

    /// Starts Synapse again on the same port with the same database (stopping it first with
    /// SIGTERM if it is still running) and waits until it answers. Throws
    /// `SynapseError.portTaken` when another server took the port in the meantime.
    func restart(readyWithin limit: Duration = .seconds(60)) async throws {
        await terminate(signal: SIGTERM)
        try await launch(readyWithin: limit)
    }

    /// Stops Synapse with SIGTERM (SIGKILL if it has not exited within `grace`), waits for it to
    /// be gone, and removes the temporary folder. The server cannot be restarted after this.
    func stop(grace: Duration = .seconds(15)) async {
        await terminate(signal: SIGTERM, grace: grace)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Sends `signal` and waits for the exit, sending SIGKILL after `grace`. Nothing when stopped.
    @discardableResult
    private func terminate(signal: Int32, grace: Duration = .seconds(15)) async -> ChildProcess.Exit? {
        guard let current = running.withLock({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return nil }
        current.process.signal(signal)
        let process = current.process
        let backstop = Task {
            try await Task.sleep(for: grace)
            process.signal(SIGKILL)
        }
        let exit = await current.exit.value
        backstop.cancel()
        return exit
    }

    /// True while the Synapse process runs (as far as this object knows).
    var isRunning: Bool { running.withLock { $0 != nil } }

    // MARK: Users

    /// Registers a user with the shared secret (`register_new_matrix_user`), whatever
    /// `enable_registration` says, and returns the full user id, e.g. `@alice:localhost`.
    func registerUser(_ localpart: String, password: String, admin: Bool = false) async throws -> String {
        let arguments = ["-m", "synapse._scripts.register_new_matrix_user", "-u", localpart, "-p", password,
                         admin ? "--admin" : "--no-admin", "-k", registrationSecret, baseURL.absoluteString]
        let result = try await runToCompletion(python, arguments, in: folder)
        guard result.status == 0, result.output.contains("Success") else {
            throw SynapseError.registrationFailed(user: localpart, status: result.status, output: result.output)
        }
        return "@\(localpart):\(serverName)"
    }

    // MARK: Diagnostics

    /// The last lines of Synapse's log, for error messages.
    func logTail(lines: Int = 40) -> String {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return "(no log at \(logPath))" }
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    // MARK: Files

    /// Runs Synapse's homeserver module, after two things Synapse cannot do for itself here:
    /// - it unblocks every signal: a child inherits the signal mask of the thread that spawned it,
    ///   and the threads Swift's concurrency runs on block nearly all of them, SIGTERM included
    ///   (Synapse would never see `stop()`'s SIGTERM);
    /// - it starts a thread that ends the process once its parent (the test process) is gone, so
    ///   a crashed or killed test run leaves no Synapse behind.
    private static let launcher = """
        import os
        import runpy
        import signal
        import threading
        import time

        signal.pthread_sigmask(signal.SIG_SETMASK, set())

        parent = os.getppid()


        def exit_when_orphaned():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)


        threading.Thread(target=exit_when_orphaned, name="exit-when-orphaned", daemon=True).start()
        runpy.run_module("synapse.app.homeserver", run_name="__main__", alter_sys=True)

        """

    /// Python logging configuration: WARNING and above, to one file.
    private static func logConfig(logFile: String) -> String {
        """
        version: 1
        formatters:
          precise:
            format: '%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(request)s - %(message)s'
        handlers:
          file:
            class: logging.FileHandler
            formatter: precise
            filename: "\(logFile)"
            encoding: utf8
        root:
          level: WARNING
          handlers: [file]
        disable_existing_loggers: false

        """
    }

    /// A complete `homeserver.yaml`: one plain HTTP listener on loopback with the client API
    /// and the key endpoint (which `answer()` tells this server apart by),
    /// SQLite, no registration but by shared secret, no federation key servers, and every rate
    /// limit out of the way except `rc_message` and `rc_login` when a test sets them.
    private static func homeserverConfig(serverName: String, port: Int, folder: String, registrationSecret: String,
                                         rcMessage: RateLimit, rcLogin: RateLimit) -> String {
        func limit(_ rate: RateLimit) -> String { "{per_second: \(rate.perSecond), burst_count: \(rate.burstCount)}" }
        let open = limit(.unlimited)
        return """
            server_name: "\(serverName)"
            public_baseurl: "http://127.0.0.1:\(port)/"
            listeners:
              - port: \(port)
                bind_addresses: ["127.0.0.1"]
                type: http
                tls: false
                x_forwarded: false
                resources:
                  - names: [client, keys]
                    compress: false
            database:
              name: sqlite3
              args:
                database: "\(folder)/homeserver.db"
            log_config: "\(folder)/log.yaml"
            media_store_path: "\(folder)/media_store"
            signing_key_path: "\(folder)/signing.key"
            registration_shared_secret: "\(registrationSecret)"
            enable_registration: false
            report_stats: false
            macaroon_secret_key: "\(UUID().uuidString)"
            form_secret: "\(UUID().uuidString)"
            trusted_key_servers: []
            caches:
              # Synapse keeps the answer to a sync for 2 minutes and gives it again to the same
              # request (for clients that retry); a test that syncs twice wants what is there now.
              sync_response_cache_duration: 0
            suppress_key_server_warning: true
            rc_message: \(limit(rcMessage))
            rc_registration: \(open)
            rc_registration_token_validity: \(open)
            rc_login:
              address: \(limit(rcLogin))
              account: \(limit(rcLogin))
              failed_attempts: \(open)
            rc_joins:
              local: \(open)
              remote: \(open)
            rc_joins_per_room: \(open)
            rc_invites:
              per_room: \(open)
              per_user: \(open)
              per_issuer: \(open)
            rc_third_party_invite: \(open)
            rc_3pid_validation: \(open)
            rc_admin_redaction: \(open)
            rc_room_creation: \(open)
            rc_key_requests: \(open)
            rc_media_create: \(open)
            rc_presence:
              per_user: \(open)
            rc_delayed_event_mgmt: \(open)
            rc_reports: \(open)
            rc_user_directory: \(open)
            rc_profile: \(open)

            """
    }

    // MARK: Environment

    /// The package root, four levels above this file (`Tests/MatrixTests/Synapse/SynapseServer.swift`).
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static let installHint = "run .ci/run, or make the venv: python3 -m venv .build/synapse-venv && "
        + ".build/synapse-venv/bin/pip install matrix-synapse (or set LP_SYNAPSE_PYTHON to a Python that has it)"

    /// Looks for the Python once: it must exist and import `synapse` (about 0.3 s).
    private static func checkAvailability() -> Availability {
        let configured = ProcessInfo.processInfo.environment["LP_SYNAPSE_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
        let python = configured ?? packageRoot.appendingPathComponent(".build/synapse-venv/bin/python").path
        let source = configured == nil ? "the venv's Python" : "LP_SYNAPSE_PYTHON"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            return Availability(python: python, problem: "matrix-synapse is not installed: \(source) \(python) does not exist; \(installHint)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", "import synapse"]
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return Availability(python: python, problem: "matrix-synapse is not installed: \(source) \(python) cannot run (\(error)); \(installHint)")
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let lastLine = output.split(separator: "\n").last.map(String.init) ?? "exit status \(process.terminationStatus)"
            return Availability(python: python, problem: "matrix-synapse is not installed: \(source) \(python) cannot import synapse (\(lastLine)); \(installHint)")
        }
        return Availability(python: python, problem: nil)
    }

    /// A port no one listens on now: bind 127.0.0.1:0, read the port the kernel chose, close.
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SynapseError.noFreePort(errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw SynapseError.noFreePort(errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why a Synapse could not be started or used.
enum SynapseError: Error, CustomStringConvertible {
    /// No Python with matrix-synapse; the reason says where it was looked for and how to install it.
    case notInstalled(String)
    case noFreePort(Int32)
    /// The process ended before its client API answered.
    case exitedBeforeReady(status: Int32, output: String, logTail: String)
    /// The client API did not answer 200 within the limit (the process was killed).
    case notReady(within: Duration, logTail: String)
    /// Another server took the port between its choice and this server's start.
    case portTaken(Int)
    case registrationFailed(user: String, status: Int32, output: String)

    var description: String {
        switch self {
        case .notInstalled(let reason):
            reason
        case .noFreePort(let error):
            "no free loopback port: \(String(cString: strerror(error)))"
        case .exitedBeforeReady(let status, let output, let logTail):
            "Synapse exited with status \(status) before it answered /_matrix/key/v2/server\n"
                + "output:\n\(output)\nlog tail:\n\(logTail)"
        case .notReady(let limit, let logTail):
            "Synapse did not answer /_matrix/key/v2/server with 200 within \(limit)\nlog tail:\n\(logTail)"
        case .portTaken(let port):
            "another server took port \(port) before Synapse could listen on it"
        case .registrationFailed(let user, let status, let output):
            "registering \(user) failed (status \(status)): \(output)"
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// For a test or suite that needs a real Synapse: it runs when Synapse is installed, is
    /// skipped with the reason when it is not, and under CI (`CI` set) runs anyway, so that
    /// `SynapseServer.start()` fails with the reason instead of the test quietly skipping.
    static var requiresSynapse: Self {
        .enabled(if: SynapseServer.mustRun, Comment(rawValue: SynapseServer.availability.reason))
    }
}
