@testable import DashboardApp
import HTTPCore
import Testing

/// `GET /api/poll`'s query, read in one pass: the first parameter of each name counts, a value that
/// cannot be read is a 400, and what is not given takes its default.
@Suite("Poll parameters")
struct PollParametersTests {
    private func parameters(_ query: String) -> Result<PollRoutes.Parameters, Problem> {
        PollRoutes.parameters(of: HTTPRequest(method: "GET", target: "/api/poll?\(query)"))
    }

    @Test func allFourAreRead() throws {
        let read = try parameters("since=12&timeout=3&visible=1&epoch=ab%20c").get()
        #expect(read.since == 12)
        #expect(read.timeout == 3)
        #expect(read.visible)
        #expect(read.epoch == "ab c")
    }

    @Test func absentOnesTakeTheirDefaults() throws {
        let read = try parameters("other=1").get()
        #expect(read.since == 0)
        #expect(read.timeout == PollRoutes.defaultTimeout)
        #expect(!read.visible)
        #expect(read.epoch == nil)
    }

    @Test func theFirstOfANameCounts() throws {
        let read = try parameters("since=5&since=7&visible=0&visible=1&%74imeout=9&timeout=1").get()
        #expect(read.since == 5)
        #expect(!read.visible)
        #expect(read.timeout == 9)
    }

    @Test(arguments: ["since=-1", "since=x", "timeout=61", "timeout=", "visible=2", "visible="])
    func unreadableValuesAreRefused(_ query: String) {
        guard case .failure(let problem) = parameters(query) else {
            Issue.record("\(query) was accepted")
            return
        }
        #expect(problem.status == 400)
    }

    /// A value that is not valid percent-encoding counts as absent, as `queryValue` has it.
    @Test func aBadEncodingIsAbsent() throws {
        let read = try parameters("since=%zz&since=4").get()
        #expect(read.since == 0)
    }
}
