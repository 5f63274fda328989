import Testing
@testable import DashboardApp

@Suite("Constant-time comparison")
struct ConstantTimeEqualsTests {
    @Test func equalTextIsEqualWhateverHoldsIt() {
        let token = String(repeating: "a1", count: 32)
        let header = "Bearer " + token + " "
        let presented = header.dropFirst(7).dropLast()
        #expect(constantTimeEquals(presented, token))
        #expect(constantTimeEquals(token, presented))
        #expect(constantTimeEquals("", ""))
        #expect(constantTimeEquals("é", "é"))
    }

    @Test func anyDifferenceIsADifference() {
        let token = String(repeating: "a1", count: 32)
        #expect(!constantTimeEquals(token, String(token.dropLast()) + "2"), "the last byte")
        #expect(!constantTimeEquals(token, "b" + token.dropFirst()), "the first byte")
        #expect(!constantTimeEquals(token, token + "1"), "longer")
        #expect(!constantTimeEquals(token.dropLast(), token), "shorter")
        #expect(!constantTimeEquals("e\u{301}", "é"), "the same text in other bytes is not the same token")
    }
}
