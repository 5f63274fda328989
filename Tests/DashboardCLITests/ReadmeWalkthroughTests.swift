import Foundation
import Testing
import TestSupport

/// The curl walkthrough (the DocC article CurlWalkthrough.md the README links to), taken from the article itself and run as written against the real
/// binary, so the docs cannot drift from the product: every `<!-- walkthrough -->` block in
/// order, in one shell, each line ending in `# -> TEXT` checked to print something containing TEXT.
@Suite("README walkthrough")
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

    /// One bash script: `swift run dashboard` becomes the built binary on a free port; a line
    /// with `# -> TEXT` fails the script when its output lacks TEXT.
    static func script(_ blocks: [[String]], binary: String) -> String {
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
            var line = line.replacingOccurrences(of: "swift run dashboard", with: "'\(binary)' --port 0")
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

    @Test func theCurlWalkthroughRunsAsWritten() async throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let blocks = Self.blocks(of: text)
        #expect(blocks.count == 2, "the walkthrough blocks are there")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("walkthrough-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let scriptURL = folder.appendingPathComponent("walkthrough.sh")
        try Self.script(blocks, binary: ChildProcess.binaryPath("dashboard")).write(to: scriptURL, atomically: true, encoding: .utf8)

        // -k: bash may have been started with SIGTERM ignored (an ignored signal is inherited), and
        // a walkthrough stuck in an `until` loop then ran on for ever instead of failing with its output.
        let (status, printed) = try await runToCompletion("/usr/bin/timeout", ["-k", "10", "120", "/bin/bash", "-x", scriptURL.path], in: folder)
        #expect(status == 0, "\(printed)")
        #expect(printed.contains("\nWALKTHROUGH-DONE\n"), "\(printed)")
    }
}
