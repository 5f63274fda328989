import Store
import Testing
import Upstream
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

    @Test func anEmptyStreamSeenOnceIsNoLongerNewSoWhatArrivesInAnOutageIsASummary() {
        var rules = DeliveryRules()
        #expect(rules.serverNewest(0, for: .primary, newestStored: nil, reconnecting: true) == .history(0))
        #expect(rules.serverNewest(4, for: .primary, newestStored: nil, reconnecting: true) == .missed(4))
        #expect(rules.thresholds(for: .primary).delivery(of: 4) == .caughtUp)
        // History not stored yet when the cursor sync comes again: it stays history, the rest is not.
        _ = rules.serverNewest(30, for: .linked, newestStored: nil, reconnecting: true)
        #expect(rules.serverNewest(33, for: .linked, newestStored: nil, reconnecting: false) == .missed(3))
        #expect(rules.thresholds(for: .linked).delivery(of: 30) == .silent)
        #expect(rules.thresholds(for: .linked).delivery(of: 31) == .live)
    }

    @Test func aStreamStartedAgainIsHistoryAgain() {
        var rules = DeliveryRules()
        _ = rules.serverNewest(10, for: .linked, newestStored: nil, reconnecting: true)
        rules.forget(.linked)
        #expect(rules.thresholds(for: .linked).delivery(of: 3) == .live)
        #expect(rules.serverNewest(4, for: .linked, newestStored: nil, reconnecting: false) == .history(4))
        #expect(rules.thresholds(for: .linked).delivery(of: 3) == .silent)
    }

    @Test func anUpstreamBehindTheLocalCopyIsSaidAndNothingIsNoted() {
        var rules = DeliveryRules()
        let outcome = rules.cursorSync(LastMessageInfo(primaryLastId: 30, linkedLastId: 9),
                                       stored: [.primary: .init(synced: true, newestID: 25), .linked: .init(synced: true, newestID: 12)],
                                       reconnecting: true)
        #expect(outcome == .behind([.linked], debug: "linked: the server's newest id is 9, the newest stored 12"))
        #expect(rules == DeliveryRules(), "a paused sync notes no positions")
    }

    @Test func aCursorSyncNotesHistoryOfANewStreamAndWhatWasMissedOnAnother() {
        var rules = DeliveryRules()
        let outcome = rules.cursorSync(LastMessageInfo(primaryLastId: 30, linkedLastId: 9),
                                       stored: [.primary: .init(synced: true, newestID: 25), .linked: .init(synced: false, newestID: nil)],
                                       reconnecting: true)
        #expect(outcome == .noted(["5 primary message(s) arrived while syncing was interrupted",
                                   "first sync of the linked account: 9 message(s) of history, delivered without notifications"]))
        #expect(rules.thresholds(for: .linked).delivery(of: 9) == .silent)
        #expect(rules.thresholds(for: .primary).delivery(of: 30) == .caughtUp)
        #expect(rules.thresholds(for: .primary).delivery(of: 31) == .live)
    }

    @Test func freshMessagesAreGroupedHistoryFirstThenTheSummaryThenLive() {
        var rules = DeliveryRules()
        _ = rules.serverNewest(2, for: .primary, newestStored: nil, reconnecting: true)
        _ = rules.serverNewest(4, for: .primary, newestStored: 2, reconnecting: true)
        let fresh = [5, 1, 3, 2, 4].map { StoredMessage(account: .primary, id: $0, chatId: 1, sender: "a", text: "t", sentAt: "s", receivedAt: "r") }
        let groups = rules.grouped(fresh, of: .primary)
        #expect(groups.map(\.delivery) == [.silent, .caughtUp, .live])
        #expect(groups.map { $0.messages.map(\.id) } == [[1, 2], [3, 4], [5]], "each group keeps batch order")
    }

    @Test func aMessageWrittenHereIsNeverNewsWhicheverWayItCame() {
        var rules = DeliveryRules()
        _ = rules.serverNewest(2, for: .primary, newestStored: nil, reconnecting: true)
        var fresh = [3, 4].map { StoredMessage(account: .primary, id: $0, chatId: 1, sender: "a", text: "t", sentAt: "s", receivedAt: "r") }
        fresh[1].outboxId = 7
        let byIDs = rules.grouped(fresh, of: .primary)
        #expect(byIDs.map(\.delivery) == [.silent, .live])
        #expect(byIDs.map { $0.messages.map(\.id) } == [[4], [3]])
        let declaredLive = rules.grouped(fresh, of: .primary, declared: .live)
        #expect(declaredLive.map(\.delivery) == [.silent, .live], "a homeserver's live /sync echo of one's own send")
        #expect(declaredLive.map { $0.messages.map(\.id) } == [[4], [3]])
    }

    @Test func onlyWhatArrivesLiveIsUnread() {
        var rules = DeliveryRules()
        _ = rules.serverNewest(2, for: .primary, newestStored: nil, reconnecting: true)
        _ = rules.serverNewest(4, for: .primary, newestStored: 2, reconnecting: true)
        #expect(rules.unreadCounting(for: .primary) == .above(4), "history and the summary are not news")
        #expect(rules.unreadCounting(for: .linked) == .above(0), "a stream with no history yet: everything is live")
        _ = rules.serverNewest(9, for: .linked, newestStored: nil, reconnecting: true)
        #expect(rules.unreadCounting(for: .linked) == .above(9), "a first sync: all history")
        #expect(rules.unreadCounting(for: .primary, declared: .live) == .all)
        #expect(rules.unreadCounting(for: .primary, declared: .missed) == UnreadCounting.none)
        #expect(rules.unreadCounting(for: .primary, declared: .history) == UnreadCounting.none)
    }
}
