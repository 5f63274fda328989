import Engine
import Foundation
import Recovery
import Store
import Testing
import Upstream
@testable import DashboardApp

/// The words of the errors: sizes written as the page writes them, figures that agree with the
/// storage card, buttons named for what they do.
@Suite("Error catalog")
struct ErrorCatalogTests {
    @Test(arguments: [
        (Int64(0), "0 B"), (999, "999 B"), (1000, "1.0 KB"), (1250, "1.3 KB"), (1249, "1.2 KB"), (9_949, "9.9 KB"), (9_950, "10.0 KB"),
        (10_000, "10 KB"), (10_499, "10 KB"), (10_500, "11 KB"), (999_499, "999 KB"), (1_000_000, "1.0 MB"), (1_250_000, "1.3 MB"),
        (10_000_000, "10 MB"), (10_002_000, "10 MB"), (12_500_000, "13 MB"),
    ])
    func sizesAreWrittenAsThePageWritesThem(bytes: Int64, words: String) {
        // view.js formatBytes rounds halves up with the same integer arithmetic; the browser test
        // compares the two on a real page.
        #expect(ErrorCatalog.sizeInWords(bytes) == words)
    }

    @Test func anUnsentMessageSaysWhyInPlainWordsAndDeleteAsksFirstOnlyForALongText() {
        func entry(_ text: String, _ refusal: SendRefusal) -> OutboxEntry {
            OutboxEntry(id: 7, account: .primary, chatId: 3, text: text, state: .failed, createdAt: "", upstreamKey: "k", attempts: 1, failure: refusal)
        }
        let short = ErrorCatalog.sendFailed(entry("hi", SendRefusal(.tooLarge, detail: "event too large")), at: Date())
        #expect(short.kind == .sendFailed && short.presentation == .view)
        #expect(short.detail == "The chat server refused it as too large. It said: \u{201C}event too large\u{201D}.")
        #expect(short.options.map(\.title) == ["Try again", "Delete"])
        #expect(short.option(.discard)?.confirmation == nil, "a short text goes at once")
        #expect(short.causeKey == UnsentMessage.causeKey(of: 7))
        #expect(short.facts == .send(UnsentMessage(outboxId: 7, account: "primary", chatId: 3)))
        let long = ErrorCatalog.sendFailed(entry(String(repeating: "word ", count: 60), SendRefusal(.forbidden)), at: Date())
        #expect(long.detail == "The chat server does not let this account write in this chat.")
        #expect(long.option(.discard)?.confirmation?.contains("300 characters") == true)
        let gone = ErrorCatalog.sendFailed(entry("x", SendRefusal(.chatGone)), at: Date())
        #expect(gone.detail == "The chat is no longer there for this account.")
    }

    @Test func outOfSpaceSaysWhatDoesNotFitInTheFiguresOfTheStorageCard() {
        let problem = EngineProblem(kind: .outOfSpace, debug: "quota reached", usage: StorageUsage(usedBytes: 15_000, quotaBytes: 20_000),
                                    neededBytes: 6_000)
        let error = ErrorCatalog.outOfSpace(problem, at: Date(), freeSpacePlan: nil)
        #expect(error.detail == "New messages (6.0 KB) don't fit into the 5.0 KB left of your 20 KB.")
        #expect(error.options.map(\.title) == ["Not now", "Buy more space"], "Cancel only hides the view here")
        #expect(error.option(.buySpace)?.confirmation?.contains("10 MB") == true, "the question says how much is bought")
    }

    @Test func anUpstreamThatSellsNothingOffersCancelAndFreeSpaceOnly() {
        let problem = EngineProblem(kind: .outOfSpace, debug: "quota reached", usage: StorageUsage(usedBytes: 15_000, quotaBytes: 20_000),
                                    neededBytes: 6_000)
        let plan = FreeSpacePlan(messageCount: 40, bytes: 8_000, oldestSentAt: "2026-11-01T00:00:00.000Z", newestSentAt: "2026-11-02T00:00:00.000Z")
        let error = ErrorCatalog.error(for: problem, at: Date(), freeSpacePlan: plan, canBuySpace: false)
        #expect(error.options.map(\.id) == [.notNow, .freeSpace])
        #expect(!error.suggestion.lowercased().contains("buy"), "no word of buying where nothing can be bought")
    }

    @Test func aRefusedSessionOfAnUpstreamThatSignsInAsksForThePassword() {
        let problem = EngineProblem(kind: .tokenRefused, debug: "401 unauthorized")
        let error = ErrorCatalog.error(for: problem, at: Date(), signsIn: true)
        #expect(error.options.map(\.id) == [.signIn, .stopSyncing])
        #expect(error.option(.signIn)?.input == "password")
        #expect(error.suggestion.contains("not stored"))
        #expect(ErrorCatalog.error(for: problem, at: Date()).options.map(\.id) == [.tryAgain, .stopSyncing], "this project's protocol has no password")
    }

    /// The contract's `cancel` names an error's backing-out option, so no error may have two;
    /// and each kind's error is of that kind.
    @Test(arguments: EngineProblem.Kind.allCases)
    func everyErrorHasAtMostOneWayToBackOutAndItsOwnKind(kind: EngineProblem.Kind) {
        let problem = EngineProblem(kind: kind, debug: "", usage: StorageUsage(usedBytes: 15_000, quotaBytes: 20_000), neededBytes: 6_000)
        let plan = FreeSpacePlan(messageCount: 4, bytes: 8_000, oldestSentAt: "2026-11-01T00:00:00.000Z", newestSentAt: "2026-11-02T00:00:00.000Z")
        for signsIn in [false, true] {
            let error = ErrorCatalog.error(for: problem, at: Date(), freeSpacePlan: plan, signsIn: signsIn)
            #expect(error.options.filter { $0.role == .cancel }.count <= 1, "\(kind): \(error.options.map(\.id))")
            #expect(error.kind == ErrorCatalog.kind(of: kind))
            #expect(Set(error.options.map(\.id)).count == error.options.count, "no option twice")
        }
        let declined = ErrorCatalog.purchaseDeclined(PurchaseAttempt(key: "k", neededBytes: 1), bytes: 10_000_000, debug: "", at: Date())
        #expect(declined.options.filter { $0.role == .cancel }.map(\.id) == [.dismiss])
    }
}
