import Foundation
import Testing
import TestSupport

/// The page's pure modules (the tabs' rules, retry progress, ...) under Node's own test runner:
/// `node --test Tests/Page/`, no packages. Skipped with a note where Node is missing and `CI` is not set.
@Suite("Page modules (node --test)")
struct PageModuleTests {
    static var node: String? {
        ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
            .map { "\($0)/node" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test(.enabled(if: node != nil || BrowserTests.required, "needs Node.js 20 or later (.ci/run installs it)"))
    func thePagesRulesHoldAsPlainFunctions() async throws {
        let node = try #require(Self.node, "node is not on the PATH")
        let (status, text) = try await runToCompletion(node, ["--test", "Tests/Page/"], in: BrowserTests.repositoryRoot)
        print(text)
        #expect(status == 0, "node --test failed:\n\(text)")
        #expect(text.contains("# fail 0"))
    }
}
