import Foundation
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Debian's nginx with a fresh self-signed certificate on a loopback port, terminating TLS in
/// front of a homeserver: what a real one on the internet looks like to the dashboard.
///
/// The dashboard checks certificates against the system's store, the one file FoundationNetworking
/// reads on Linux (`/etc/ssl/certs/ca-certificates.crt`). A test does not change the machine's
/// store: it starts the dashboard in a mount namespace of its own where that file is the
/// system's bundle plus this certificate (`trustingCommand`), which needs root and `unshare`.
final class TLSTerminator: Sendable {
    let port: Int
    let folder: URL
    private let upstreamPort: Int
    private let nginx = Mutex<ChildProcess?>(nil)

    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    /// Whether nginx, openssl and a private mount namespace are at hand, and if not, why.
    static let problem: String? = {
        for tool in ["/usr/sbin/nginx", "/usr/bin/openssl", "/usr/bin/unshare"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (.ci/run installs nginx-light and openssl)"
        }
        guard FileManager.default.fileExists(atPath: systemBundle) else { return "no \(systemBundle) (Debian's ca-certificates)" }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-m", "true"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "cannot run unshare" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "unshare -m needs root: the test trusts its certificate in a private mount namespace"
    }()

    static var mustRun: Bool { problem == nil || ProcessInfo.processInfo.environment["CI"] != nil }

    /// `https://127.0.0.1:PORT` proxying to `http://127.0.0.1:upstreamPort`.
    init(proxyingTo upstreamPort: Int) async throws {
        if let problem = Self.problem { throw SynapseError.notInstalled(problem) }
        self.upstreamPort = upstreamPort
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try SynapseServer.freeLoopbackPort()
        let openssl = try await ChildProcess(path: "/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", folder.appendingPathComponent("key.pem").path, "-out", folder.appendingPathComponent("cert.pem").path,
        ]).waitForExit()
        guard openssl.status == 0 else { throw SynapseError.notInstalled("openssl failed: \(openssl.stderr)") }
        let bundle = try Data(contentsOf: URL(fileURLWithPath: Self.systemBundle)) + Data(contentsOf: folder.appendingPathComponent("cert.pem"))
        try bundle.write(to: folder.appendingPathComponent("bundle.crt"))
        let path = folder.path
        try """
            # One process, no workers: SIGKILL then ends all of it (a master replaces a killed
            # worker, and a worker outlives a killed master, serving on).
            master_process off;
            daemon off;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log;
            events { worker_connections 256; }
            http {
              access_log off;
              client_body_temp_path \(path)/body; proxy_temp_path \(path)/proxy; fastcgi_temp_path \(path)/fastcgi;
              uwsgi_temp_path \(path)/uwsgi; scgi_temp_path \(path)/scgi;
              server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(path)/cert.pem;
                ssl_certificate_key \(path)/key.pem;
                location / { proxy_pass http://127.0.0.1:\(upstreamPort); proxy_read_timeout 120s; proxy_buffering off; }
              }
            }
            """.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        try await start()
    }

    /// Starts nginx and waits until the port takes connections.
    func start() async throws {
        let process = try ChildProcess(path: "/usr/sbin/nginx", ["-c", folder.appendingPathComponent("nginx.conf").path])
        nginx.withLock { $0 = process }
        for _ in 0..<200 {
            if Self.accepts(port) { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw SynapseError.notReady(within: .seconds(5), logTail: (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")
    }

    /// SIGKILL: every connection through it is cut where it stands.
    func kill() async {
        guard let process = nginx.withLock({ $0 }) else { return }
        process.signal(SIGKILL)
        _ = await process.waitForExit()
    }

    /// The dashboard binary with `arguments`, in a mount namespace where the system's bundle also
    /// trusts this terminator's certificate.
    func trustingCommand(_ arguments: [String]) -> (path: String, arguments: [String]) {
        let dashboard = ChildProcess.binaryPath("dashboard")
        let quoted = ([dashboard] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let bundle = folder.appendingPathComponent("bundle.crt").path
        return ("/usr/bin/unshare", ["-m", "sh", "-c", "mount --bind '\(bundle)' \(Self.systemBundle) && exec \(quoted)"])
    }

    private static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    deinit {
        if let process = nginx.withLock({ $0 }), process.isRunning { process.signal(SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
    }
}
