import Store
import Testing
@testable import Engine

@Suite("Delivery rules (first load)")
struct DeliveryRulesTests {
    @Test func aFirstSyncIsHistoryAndWhatComesAfterIsLive() {
        var rules = DeliveryRules()
        #expect(rules.serverNewest(40, for: .primary, newestStored: nil, reconnecting: true) == .history(40))
        #expect(rules.thresholds(for: .primary).delivery(of: 1) == .silent)
        #expect(rules.thresholds(for: .primary).delivery(of: 40) == .silent)
        #expect(rules.thresholds(for: .primary).delivery(of: 41) == .live)
        #expect(rules.thresholds(for: .linked).delivery(of: 1) == .live, "each stream has its own history")
    }

    @Test func whatArrivedWhileAwayIsOneSummaryOnlyAfterAnInterruption() {
        var rules = DeliveryRules()
        #expect(rules.serverNewest(12, for: .primary, newestStored: 5, reconnecting: true) == .missed(7))
        #expect(rules.thresholds(for: .primary).delivery(of: 6) == .caughtUp)
        #expect(rules.thresholds(for: .primary).delivery(of: 12) == .caughtUp)
        #expect(rules.thresholds(for: .primary).delivery(of: 13) == .live)
        // A token renewed mid-cycle is no interruption: the summary stays as it was.
        #expect(rules.serverNewest(20, for: .primary, newestStored: 12, reconnecting: false) == .missed(8))
        #expect(rules.thresholds(for: .primary).delivery(of: 15) == .live)
        // Back with nothing missed: nothing is a summary any more.
        #expect(rules.serverNewest(20, for: .primary, newestStored: 20, reconnecting: true) == .missed(0))
        #expect(rules.thresholds(for: .primary).delivery(of: 10) == .live)
    }

    @Test func aStreamStartedAgainIsHistoryAgain() {
        var rules = DeliveryRules()
        _ = rules.serverNewest(10, for: .linked, newestStored: nil, reconnecting: true)
        rules.forget(.linked)
        #expect(rules.thresholds(for: .linked).delivery(of: 3) == .live)
        #expect(rules.serverNewest(4, for: .linked, newestStored: nil, reconnecting: false) == .history(4))
        #expect(rules.thresholds(for: .linked).delivery(of: 3) == .silent)
    }
}
