import Foundation
import Testing
import TestSupport

/// The curl walkthrough (the DocC article CurlWalkthrough.md the README links to), taken from the article itself and run as written against the real
/// binary, so the docs cannot drift from the product: every `<!-- walkthrough -->` block in
/// order, in one shell, each line ending in `# -> TEXT` checked to print something containing TEXT.
@Suite("README walkthrough", .serialized)
struct ReadmeWalkthroughTests {
    static let readme = BrowserTests.repositoryRoot.appendingPathComponent("Sources/DashboardApp/DashboardApp.docc/CurlWalkthrough.md")

    /// The shell blocks marked `<!-- walkthrough -->`, in order.
    static func blocks(of text: String) -> [[String]] {
        var blocks: [[String]] = []
        var lines = text.components(separatedBy: "\n")[...]
        while let line = lines.popFirst() {
            guard line.trimmingCharacters(in: .whitespaces) == "<!-- walkthrough -->", lines.first?.hasPrefix("```") == true else { continue }
            lines.removeFirst()
            var block: [String] = []
            while let next = lines.popFirst(), !next.hasPrefix("```") { block.append(next) }
            blocks.append(block)
        }
        return blocks
    }

    /// One bash script: `swift run dashboard` becomes the built binary (with `--port` when
    /// `port` is given); a line with `# -> TEXT` fails the script when its output lacks TEXT.
    static func script(_ blocks: [[String]], binary: String, port: Int? = nil) -> String {
        // Whatever happens, nothing started in the background outlives the script.
        var script = "set -uo pipefail\ntrap 'kill $(jobs -p) 2> /dev/null' EXIT\n"
        var lines: [String] = []
        for line in blocks.joined() {
            // A command continued with a backslash is one line here, its `# -> ` at the end.
            if let last = lines.last, last.hasSuffix("\\") {
                lines[lines.count - 1] = String(last.dropLast()) + " " + line.trimmingCharacters(in: .whitespaces)
            } else {
                lines.append(line)
            }
        }
        for line in lines {
            var line = line.replacingOccurrences(of: "swift run dashboard", with: "'\(binary)'" + (port.map { " --port \($0)" } ?? ""))
            guard let marker = line.range(of: "# -> ") else {
                script += line + "\n"
                continue
            }
            let expected = String(line[marker.upperBound...]).trimmingCharacters(in: .whitespaces)
            line = String(line[..<marker.lowerBound])
            let quoted = "'" + expected.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
            let command = line.trimmingCharacters(in: .whitespaces)
            script += """
                out=$(\(command)); printf '%s\\n' "$out"; expected=\(quoted)
                if [[ "$out" != *"$expected"* ]]; then echo "README says: $expected; got: $out"; exit 1; fi

                """
        }
        return script + "echo WALKTHROUGH-DONE\n"
    }

    /// As written: on port 8080, unless something else on this machine has it.
    @Test func theCurlWalkthroughRunsAsWritten() async throws {
        let (status, printed) = try await runWalkthrough(port: ListeningSocket.isFree(port: 8080) ? nil : 0)
        #expect(status == 0, "\(printed)")
        #expect(printed.contains("\nWALKTHROUGH-DONE\n"), "\(printed)")
    }

    /// A port in use stops the walkthrough at its first check, with the dashboard's own reason,
    /// instead of waiting for ever for a line that will not come.
    @Test func aBusyPortStopsTheWalkthroughAtOnceWithTheReason() async throws {
        let busy = try ListeningSocket()
        defer { busy.close() }
        let (status, printed) = try await runWalkthrough(port: busy.port)
        #expect(status == 1, "\(printed)")
        #expect(printed.contains("cannot listen on 127.0.0.1:\(busy.port)"), "\(printed)")
        #expect(printed.contains("Address already in use"), "\(printed)")
        #expect(!printed.contains("WALKTHROUGH-DONE"), "\(printed)")
    }

    private func runWalkthrough(port: Int?) async throws -> (Int32, String) {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let blocks = Self.blocks(of: text)
        #expect(blocks.count == 2, "the walkthrough blocks are there")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("walkthrough-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let scriptURL = folder.appendingPathComponent("walkthrough.sh")
        try Self.script(blocks, binary: ChildProcess.binaryPath("dashboard"), port: port).write(to: scriptURL, atomically: true, encoding: .utf8)

        // -k: bash may have been started with SIGTERM ignored (an ignored signal is inherited), and
        // a walkthrough stuck in an `until` loop then ran on for ever instead of failing with its output.
        return try await runToCompletion("/usr/bin/timeout", ["-k", "10", "120", "/bin/bash", "-x", scriptURL.path], in: folder)
    }
}

/// A listening TCP socket on loopback, as another program holding a port would be.
private final class ListeningSocket {
    let port: Int
    private var fd: Int32

    /// Listens on a free port (`port` 0) or on `port`; throws when it is taken.
    init(port: Int = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            Glibc.close(fd)
            throw CocoaError(.fileWriteFileExists)
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    static func isFree(port: Int) -> Bool {
        guard let socket = try? ListeningSocket(port: port) else { return false }
        socket.close()
        return true
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
