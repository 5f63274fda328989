import Foundation
import Testing
import TestSupport

/// Nothing tracked in the repository sends a reader (or a benchmark) to a file outside it: what a
/// person clones is all there is. (That `--help` and the docs name the same flags is
/// `DashboardCLITests.theHelpAndTheCommandLineArticleListTheSameFlags`.)
@Suite("Docs stay inside the repository")
struct DocsStayInsideTheRepositoryTests {
    static let root = BrowserTests.repositoryRoot
    /// What a person who cloned the repository does not have: folders beside it, and the machine
    /// it was written on.
    static let outsidePaths = ["../shared", "shared/bench", "/work/", "CONTRACT.md", "../../.."]

    @Test func nothingTrackedNamesAPathOutsideTheRepository() async throws {
        let (status, listing) = try await runToCompletion("/usr/bin/git", ["-C", Self.root.path, "ls-files"])
        #expect(status == 0, "\(listing)")
        let files = listing.split(separator: "\n").map(String.init).filter { !$0.hasSuffix(".png") && !$0.hasSuffix(".svg") }
        #expect(files.count > 100, "the tracked files were listed")
        var offenders: [String] = []
        for file in files {
            guard let text = try? String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8) else { continue }
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if let path = Self.outsidePaths.first(where: { line.contains($0) }) { offenders.append("\(file):\(number + 1): \(path)") }
            }
        }
        // This file names them only as what to look for.
        offenders.removeAll { $0.hasPrefix("Tests/DashboardCLITests/DocsStayInsideTheRepositoryTests.swift:") }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }
}
