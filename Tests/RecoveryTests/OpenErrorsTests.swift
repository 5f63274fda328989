import Foundation
import Testing
@testable import Recovery

/// `OpenErrors` as a value: which errors are open and what an attempt's result does to them, with
/// the time passed in (no presenter, clock or task).
@Suite("Open errors")
struct OpenErrorsTests {
    let noon = Date(timeIntervalSince1970: 43_200)

    @Test func aRepeatingCauseUpdatesTheOpenErrorAndAnUnchangedOneIsNotPresentedAgain() {
        var errors = OpenErrors()
        let (first, opened) = errors.raise(sampleError(debug: "500"))
        #expect(opened == [.present(first)])
        let (same, unchanged) = errors.raise(sampleError(debug: "500"))
        #expect(same.id == first.id && unchanged.isEmpty)
        let (updated, changed) = errors.raise(sampleError(debug: "502"))
        #expect(updated.id == first.id && updated.debug == "502" && changed == [.present(updated)])
        #expect(errors.all.count == 1 && errors.history.count == 1)
    }

    @Test func closingAnErrorClosesTheErrorsThatCameFromIt() {
        var errors = OpenErrors()
        let (space, _) = errors.raise(sampleError(.outOfSpace))
        var declinedError = sampleError(.purchaseDeclined)
        declinedError.origin = space.causeKey
        let (declined, _) = errors.raise(declinedError)
        let (other, _) = errors.raise(sampleError(.upstreamError))
        #expect(errors.resolve(causeKey: space.causeKey, by: .situation, at: noon) == [.dismiss(space, by: .situation), .dismiss(declined, by: .situation)])
        #expect(errors.all == [other])
        #expect(errors.history.first?.resolvedAt == noon)
        #expect(errors.resolve(id: space.id, by: .situation, at: noon).isEmpty, "closed once")
    }

    @Test func aFailedAttemptOnTheSameCauseNotesWhyOnTheError() {
        var errors = OpenErrors()
        let (shown, _) = errors.raise(sampleError())
        let settled = errors.settle(.failed(shown.failing(because: "still 500")), of: .tryAgain, on: shown, at: noon)
        #expect(settled.status == .failed && settled.reason == "still 500")
        #expect(settled.shown?.lastFailedAttempt == FailedAttempt(optionID: .tryAgain, optionTitle: "Try again", at: noon, reason: "still 500"))
        #expect(settled.changes == [.present(settled.shown!)])
    }

    @Test func eachFailedTryOfAnOptionCountsSoTheSecondNeverReadsAsTheFirst() {
        var errors = OpenErrors()
        let (shown, _) = errors.raise(sampleError())
        let first = errors.settle(.failed(shown.failing(because: "still 500")), of: .tryAgain, on: shown, at: noon)
        let later = noon.addingTimeInterval(5)
        let second = errors.settle(.failed(shown.failing(because: "still 500")), of: .tryAgain, on: first.shown!, at: later)
        #expect(first.shown?.lastFailedAttempt?.tries == 1)
        #expect(second.shown?.lastFailedAttempt == FailedAttempt(optionID: .tryAgain, optionTitle: "Try again", at: later, reason: "still 500", tries: 2))
        #expect(second.changes == [.present(second.shown!)], "the page hears of the second failure: it reads differently")
        // Another option's failure starts its own count.
        let signIn = RecoveryOption(id: .signIn, title: "Sign in")
        let third = errors.settle(.failed(shown.failing(because: "wrong password")), of: signIn, on: second.shown!, at: later)
        #expect(third.shown?.lastFailedAttempt?.tries == 1)
    }

    @Test func aClosedErrorSaysWhatClosedIt() {
        var errors = OpenErrors()
        let (byItself, _) = errors.raise(sampleError())
        #expect(errors.resolve(id: byItself.id, by: .situation, at: noon) == [.dismiss(byItself, by: .situation)])
        let (tried, _) = errors.raise(sampleError())
        let settled = errors.settle(.recovered(summary: nil), of: .tryAgain, on: tried, at: noon)
        #expect(settled.changes == [.dismiss(tried, by: .attempt(.tryAgain))], "an option someone chose closed it")
    }

    @Test func anAnswerNeverReopensACauseItsOwnerClosedWhileTheAttemptRan() {
        var errors = OpenErrors()
        let (shown, _) = errors.raise(sampleError())
        _ = errors.resolve(id: shown.id, by: .situation, at: noon)
        let settled = errors.settle(.failed(shown.failing(because: "late")), of: .tryAgain, on: shown, at: noon)
        #expect(settled.shown == nil && settled.changes.isEmpty && errors.all.isEmpty)
        #expect(settled.reason == "late", "the record still says why")
    }

    @Test func anErrorOfTheAttemptsOwnMakingOpensOnlyWhileTheOneItCameFromIsOpen() {
        var errors = OpenErrors()
        let (space, _) = errors.raise(sampleError(.outOfSpace))
        var declined = sampleError(.purchaseDeclined)
        declined.origin = space.causeKey
        let settled = errors.settle(.failed(declined), of: .tryAgain, on: space, at: noon)
        #expect(settled.shown?.kind == .purchaseDeclined && settled.shown?.lastFailedAttempt == nil)
        #expect(errors.all.map(\.kind) == [.outOfSpace, .purchaseDeclined])

        var closedFirst = OpenErrors()
        let (gone, _) = closedFirst.raise(sampleError(.outOfSpace))
        _ = closedFirst.resolve(id: gone.id, by: .situation, at: noon)
        #expect(closedFirst.settle(.failed(declined), of: .tryAgain, on: gone, at: noon).changes.isEmpty)
    }

    @Test func recoveredClosesAndSetAsideKeepsTheErrorInAnotherFormIfStillOpen() {
        var errors = OpenErrors()
        let (shown, _) = errors.raise(sampleError())
        var banner = shown
        banner.presentation = .toast
        let kept = errors.settle(.setAside(kept: banner, summary: "later"), of: .stopSyncing, on: shown, at: noon)
        #expect(kept.status == .dismissed && kept.shown?.presentation == .toast && kept.summary == "later")
        let recovered = errors.settle(.recovered, of: .tryAgain, on: shown, at: noon)
        #expect(recovered.status == .recovered && recovered.changes == [.dismiss(kept.shown!, by: .attempt(.tryAgain))] && errors.all.isEmpty)
    }

    @Test func theRecordKeepsTheLastErrorsWithTheirAttempts() {
        var errors = OpenErrors(historyLimit: 2)
        let (first, _) = errors.raise(sampleError(cause: "1"))
        _ = errors.raise(sampleError(cause: "2"))
        let (third, _) = errors.raise(sampleError(cause: "3"))
        errors.record(AttemptRecord(optionID: .tryAgain, optionTitle: "Try again", status: .failed, at: noon), on: third.id)
        errors.record(AttemptRecord(optionID: .tryAgain, optionTitle: "Try again", status: .failed, at: noon), on: first.id)
        #expect(errors.history.map(\.errorID).count == 2)
        #expect(!errors.history.contains { $0.errorID == first.id }, "the oldest went")
        #expect(errors.history.last?.attempts.count == 1)
    }
}
