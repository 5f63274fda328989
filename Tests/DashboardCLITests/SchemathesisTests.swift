import Foundation
import Testing
import TestSupport

/// schemathesis (PyPI) against the real binary and `Public/openapi.json`: every check, bounded
/// examples, with the access token and the CSRF header (`Tests/Schemathesis/run.sh`). `.ci/run`
/// installs it; where it is missing and `CI` is not set, the test is skipped with a note.
@Suite("OpenAPI conformance (schemathesis)")
struct SchemathesisTests {
    static let script = BrowserTests.repositoryRoot.appendingPathComponent("Tests/Schemathesis/run.sh").path

    static var installed: Bool {
        ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/schemathesis") } ?? false
    }

    @Test(.enabled(if: installed || BrowserTests.required, "needs schemathesis from PyPI (.ci/run installs it)"))
    func everyOperationConformsToTheDescription() async throws {
        let (status, text) = try await runToCompletion("/bin/bash", [Self.script, ChildProcess.binaryPath("dashboard")])
        print(text)
        #expect(status == 0, "schemathesis found failures:\n\(text)")
    }
}
