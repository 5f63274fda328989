import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Recovery

/// Records what the registry shows and hides, as the seed's presenter mock does.
final class RecordingPresenter: ErrorPresenter {
    let log = Mutex<[String]>([])
    let attempts = Mutex<[AttemptProgress.Status]>([])
    func present(_ error: UserFacingError) async { log.withLock { $0.append("present \(error.type) \(error.presentation.rawValue)") } }
    let resolutions = Mutex<[Resolution]>([])
    func dismiss(_ error: UserFacingError, by resolution: Resolution) async {
        log.withLock { $0.append("dismiss \(error.type)") }
        resolutions.withLock { $0.append(resolution) }
    }
    func attemptChanged(_ progress: AttemptProgress) async { attempts.withLock { $0.append(progress.status) } }
    var entries: [String] { log.withLock { $0 } }
    var attemptStatuses: [AttemptProgress.Status] { attempts.withLock { $0 } }
}

/// An attempter whose answers the test scripts, counting how often each option ran.
final class ScriptedAttempter: RecoveryAttempter {
    let runs = Mutex<[String]>([])
    let answer: @Sendable (RecoveryOption, UserFacingError) async -> AttemptResult

    init(_ answer: @escaping @Sendable (RecoveryOption, UserFacingError) async -> AttemptResult) {
        self.answer = answer
    }

    func attempt(_ option: RecoveryOption, for error: UserFacingError, input: AttemptInput) async -> AttemptResult {
        runs.withLock { $0.append(option.id.rawValue) }
        return await answer(option, error)
    }

    var count: Int { runs.withLock { $0.count } }
}

/// An error of `kind` whose options are Try again and Stop syncing (posted here as the contract's
/// `cancel`, which names an error's backing-out option); `cause` tells errors of one kind apart.
func sampleError(_ kind: ProblemKind = .upstreamError, cause: String? = nil, debug: String = "500") -> UserFacingError {
    UserFacingError(kind: kind, title: "T", detail: "D", suggestion: "S", presentation: .banner, options: [.tryAgain, .stopSyncing],
                    debug: debug, createdAt: Date(timeIntervalSince1970: 0), causeKey: cause)
}

/// An attempter whose attempts wait until the test yields on the returned continuation, then
/// answer with `answer`: the test acts while an attempt runs.
func heldAttempter(_ answer: @escaping @Sendable (UserFacingError) -> AttemptResult) -> (ScriptedAttempter, AsyncStream<Void>.Continuation) {
    let (gate, release) = AsyncStream<Void>.makeStream()
    let attempter = ScriptedAttempter { _, error in
        for await _ in gate { break }
        return answer(error)
    }
    return (attempter, release)
}

@Suite("Error registry")
struct ErrorRegistryTests {
    let clock = ManualClock()
    let presenter = RecordingPresenter()

    private func registry(_ attempter: any RecoveryAttempter, _ minimum: Duration = .zero) -> ErrorRegistry {
        ErrorRegistry(presenter: presenter, attempter: attempter, clock: clock, minimumAttemptDuration: minimum)
    }

    @Test func aRepeatingCauseUpdatesTheOpenErrorInsteadOfStacking() async {
        let attempter = ScriptedAttempter { _, _ in .recovered }
        let registry = registry(attempter)
        let first = await registry.raise(sampleError(debug: "500"))
        let second = await registry.raise(sampleError(debug: "503"))
        #expect(second.id == first.id)
        #expect(await registry.openErrors().map(\.debug) == ["503"])
        #expect(presenter.entries == ["present /problems/upstream-error banner", "present /problems/upstream-error banner"])
        _ = await registry.raise(sampleError(debug: "503"))
        #expect(presenter.entries.count == 2, "an identical repeat is not shown again")
    }

    @Test func recoveredResolvesAndFailedShowsTheNewError() async throws {
        let attempter = ScriptedAttempter { option, error in
            option.id == .stopSyncing ? .recovered : .failed({ var next = error; next.debug = "still 500"; return next }())
        }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let failed = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k1")
        #expect(failed.status == .failed)
        let next = try #require(failed.error)
        #expect(next.id == error.id && next.debug == "still 500")
        _ = try await registry.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "k2")
        #expect(await registry.openErrors().isEmpty)
        #expect(presenter.entries.last == "dismiss /problems/upstream-error")
        await #expect(throws: ErrorRegistry.AttemptRefusal.unknownError) {
            _ = try await registry.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "k3")
        }
    }

    @Test func anAttemptLastsAtLeast400MillisecondsInVirtualTime() async throws {
        let attempter = ScriptedAttempter { _, _ in .recovered }
        let registry = registry(attempter, .milliseconds(400))
        let error = await registry.raise(sampleError())
        let attempt = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k") }
        await clock.waitForSleepers(2)  // the floor and the deadline
        while attempter.count == 0 { await Task.yield() }
        #expect(attempter.count == 1, "the option ran at once")
        clock.advance(by: .milliseconds(399))
        #expect(await registry.openErrors().count == 1, "but the answer waits")
        clock.advance(by: .milliseconds(1))
        #expect(try await attempt.value.status == .recovered)
    }

    @Test func aReplayedKeyReturnsTheFirstAnswerAndRunsNothing() async throws {
        let attempter = ScriptedAttempter { _, error in .failed(error) }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let first = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "same")
        let replay = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "same")
        #expect(first == replay)
        #expect(attempter.count == 1)
        await #expect(throws: ErrorRegistry.AttemptRefusal.keyReusedForAnotherOption) {
            _ = try await registry.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "same")
        }
        await #expect(throws: ErrorRegistry.AttemptRefusal.unknownOption) {
            _ = try await registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: "other")
        }
    }

    @Test func aSecondAttemptWhileOneRunsIsRefused() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let attempter = ScriptedAttempter { _, _ in
            for await _ in gate { break }
            return .recovered
        }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let running = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "a") }
        while attempter.count == 0 { await Task.yield() }
        await #expect(throws: ErrorRegistry.AttemptRefusal.attemptRunning) {
            _ = try await registry.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "b")
        }
        open.yield()
        #expect(try await running.value.status == .recovered)
        #expect(attempter.count == 1, "a double click never runs an option twice")
    }

    @Test func aFailedAttemptSaysWhichOptionWhenAndWhyAndTheNextRepeatKeepsIt() async throws {
        let attempter = ScriptedAttempter { _, error in .failed(error.failing(because: "still 500")) }
        let registry = ErrorRegistry(presenter: presenter, attempter: attempter, clock: clock, now: { Date(timeIntervalSince1970: 1000) }, minimumAttemptDuration: .zero)
        let error = await registry.raise(sampleError())
        let answer = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k1")
        #expect(answer.status == .failed)
        let shown = try #require(answer.error)
        #expect(shown.lastFailedAttempt == FailedAttempt(optionID: .tryAgain, optionTitle: "Try again", at: Date(timeIntervalSince1970: 1000),
                                                         reason: "still 500"))
        // The engine raising the same cause again (without a note) keeps the note.
        _ = await registry.raise(sampleError(debug: "503"))
        #expect(await registry.error(id: error.id)?.lastFailedAttempt?.reason == "still 500")
        #expect(presenter.attemptStatuses == [.running, .failed], "other windows hear it start and end")
        // A second click with a new key runs again.
        _ = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k2")
        #expect(attempter.count == 2)
    }

    @Test func anAttemptWithoutAnOutcomeAnswersFailedAtTheDeadlineInVirtualTime() async throws {
        let cancelled = Mutex(false)
        let (never, keepOpen) = AsyncStream<Void>.makeStream()
        let attempter = ScriptedAttempter { _, _ in
            // Waits for ever, but notices cancellation, as the engine's waits do.
            for await _ in never {}
            cancelled.withLock { $0 = true }
            return .recovered
        }
        let registry = ErrorRegistry(presenter: presenter, attempter: attempter, clock: clock, minimumAttemptDuration: .zero, attemptDeadline: .seconds(30))
        let error = await registry.raise(sampleError())
        let attempt = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k") }
        await clock.waitForSleepers()  // the deadline
        clock.advance(by: .seconds(29))
        #expect(await registry.runningAttempts()[error.id]?.optionID == .tryAgain)
        clock.advance(by: .seconds(1))
        let answer = try await attempt.value
        #expect(answer.status == .failed)
        let shown = try #require(answer.error)
        #expect(shown.lastFailedAttempt?.reason.contains("30 seconds") == true)
        #expect(cancelled.withLock { $0 }, "the attempter was cancelled")
        #expect(await registry.runningAttempts().isEmpty, "other clicks are not refused any longer")
        keepOpen.finish()
    }

    @Test func aCallerThatGoesAwayDoesNotCancelTheAttempt() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let attempter = ScriptedAttempter { _, _ in
            for await _ in gate { return .recovered }
            return .failed(sampleError())
        }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let caller = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k") }
        while attempter.count == 0 { await Task.yield() }
        caller.cancel()
        open.yield()
        #expect(try await caller.value.status == .recovered)
        let replay = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k")
        #expect(replay.status == .recovered, "the retried click gets the answer")
    }

    @Test func recentProblemsKeepResolvedErrorsAndTheirAttemptsNewestFirst() async throws {
        let attempter = ScriptedAttempter { option, error in option.id == .stopSyncing ? .recovered : .failed(error.failing(because: "no")) }
        let registry = registry(attempter)
        let first = await registry.raise(sampleError(.upstreamError))
        _ = try await registry.attempt(errorID: first.id, postedOption: "try-again", idempotencyKey: "a")
        _ = try await registry.attempt(errorID: first.id, postedOption: "cancel", idempotencyKey: "b")
        var raised: [String] = []
        for index in 0..<25 {
            raised.append(await registry.raise(sampleError(cause: "kind-\(index)")).id)
        }
        let recent = await registry.recentProblems()
        #expect(recent.count == 20)
        #expect(recent.map(\.errorID) == Array(raised.suffix(20).reversed()), "newest first")
        #expect(!recent.contains { $0.errorID == first.id }, "the oldest fell out")

        let small = ErrorRegistry(presenter: presenter, attempter: attempter, clock: clock, minimumAttemptDuration: .zero)
        let error = await small.raise(sampleError())
        _ = try await small.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "a")
        _ = try await small.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "b")
        let record = try #require(await small.recentProblems().first)
        #expect(record.resolvedAt != nil)
        #expect(record.attempts.map(\.optionID) == [.tryAgain, .stopSyncing], "cancel names the backing-out option")
        #expect(record.attempts.map(\.status) == [.failed, .recovered])
        #expect(record.attempts.first?.reason == "no")
    }

    // MARK: One owner decides what is open

    @Test func anAnswerAfterTheFloorNeverReopensACauseItsOwnerClosedMeanwhile() async throws {
        // Try again's answer: a fresh error (new id) of the same cause, built before the floor is over.
        let attempter = ScriptedAttempter { _, error in
            var fresh = error.failing(because: "still refused")
            fresh.id = UserFacingError.makeID()
            return .failed(fresh)
        }
        let registry = registry(attempter, .milliseconds(400))
        let error = await registry.raise(sampleError())
        let attempt = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k") }
        await clock.waitForSleepers(2)
        while attempter.count == 0 { await Task.yield() }
        await registry.resolve(causeKey: error.causeKey)  // the engine reconnected meanwhile
        clock.advance(by: .milliseconds(400))
        let answer = try await attempt.value
        #expect(answer.status == .failed, "that try did fail")
        #expect(answer.error == nil, "but there is nothing open to show")
        #expect(await registry.openErrors().isEmpty, "closed stays closed")
        #expect(presenter.entries == ["present /problems/upstream-error banner", "dismiss /problems/upstream-error"])
    }

    @Test func aCauseClosedWhileAnAttemptRunsIsCreditedToThatOption() async throws {
        let (attempter, open) = heldAttempter { _ in .recovered }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let attempt = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k") }
        while attempter.count == 0 { await Task.yield() }
        await registry.resolve(causeKey: error.causeKey)  // the reconnect Try again asked for
        open.yield()
        _ = try await attempt.value
        #expect(presenter.resolutions.withLock { $0 } == [.attempt(.tryAgain)])

        let byItself = await registry.raise(sampleError())
        await registry.resolve(causeKey: byItself.causeKey)  // no attempt runs: the engine's own doing
        #expect(presenter.resolutions.withLock { $0 } == [.attempt(.tryAgain), .situation])
    }

    @Test func aCauseRaisedAgainByItsOwnerMeanwhileTakesTheAnswersNote() async throws {
        let (attempter, open) = heldAttempter { .failed($0.failing(because: "still 500")) }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let attempt = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "k") }
        while attempter.count == 0 { await Task.yield() }
        await registry.resolve(causeKey: error.causeKey)
        let again = await registry.raise(sampleError(debug: "503"))
        open.yield()
        let answer = try await attempt.value
        #expect(answer.error?.id == again.id, "the cause is open again: the answer updates that error")
        #expect(await registry.openErrors().map(\.id) == [again.id])
        #expect(await registry.error(id: again.id)?.lastFailedAttempt?.reason == "still 500")
    }

    @Test func anErrorAnAttemptMadeClosesWithTheErrorItCameFrom() async throws {
        let attempter = ScriptedAttempter { option, error in
            guard option.id == .tryAgain, error.kind == .outOfSpace else { return .recovered }
            var declined = sampleError(.purchaseDeclined)
            declined.origin = error.causeKey
            return .failed(declined)
        }
        let registry = registry(attempter)
        let full = await registry.raise(sampleError(.outOfSpace))
        let answer = try await registry.attempt(errorID: full.id, postedOption: "try-again", idempotencyKey: "buy")
        let declined = try #require(answer.error)
        #expect(declined.type == "/problems/purchase-declined")
        #expect(await registry.openErrors().map(\.type) == ["/problems/out-of-space", "/problems/purchase-declined"])
        await registry.resolve(causeKey: full.causeKey)  // another window freed space
        #expect(await registry.openErrors().isEmpty, "the declined purchase went with it: its Try again would buy space nobody needs")
        await #expect(throws: ErrorRegistry.AttemptRefusal.unknownError) {
            _ = try await registry.attempt(errorID: declined.id, postedOption: "try-again", idempotencyKey: "again")
        }
    }

    @Test func anErrorAnAttemptMakesIsNotOpenedWhenWhatItCameFromClosedMeanwhile() async throws {
        let (attempter, open) = heldAttempter { error in
            var declined = sampleError(.purchaseDeclined)
            declined.origin = error.causeKey
            return .failed(declined)
        }
        let registry = registry(attempter)
        let full = await registry.raise(sampleError(.outOfSpace))
        let attempt = Task { try await registry.attempt(errorID: full.id, postedOption: "try-again", idempotencyKey: "buy") }
        while attempter.count == 0 { await Task.yield() }
        await registry.resolve(causeKey: full.causeKey)
        open.yield()
        #expect(try await attempt.value.error == nil)
        #expect(await registry.openErrors().isEmpty)
    }

    // MARK: One click, one attempt

    @Test func theSameKeyWhileItsAttemptRunsJoinsItAndGetsItsAnswer() async throws {
        let (attempter, open) = heldAttempter { .failed($0.failing(because: "still 500")) }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let click = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "click") }
        while attempter.count == 0 { await Task.yield() }
        // The page's network retry of the same click, while the attempt still runs.
        let retry = Task { try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "click") }
        await #expect(throws: ErrorRegistry.AttemptRefusal.keyReusedForAnotherOption) {
            _ = try await registry.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "click")
        }
        await #expect(throws: ErrorRegistry.AttemptRefusal.attemptRunning, "another click is another attempt: refused while one runs") {
            _ = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "another click")
        }
        open.yield()
        let (first, second) = (try await click.value, try await retry.value)
        #expect(first == second, "the retry got the click's answer")
        #expect(first.status == .failed)
        #expect(attempter.count == 1, "and ran nothing")
    }

    // MARK: Setting aside is not failing

    @Test func anErrorSetAsideIsDismissedWithWhatWasDoneNotFailed() async throws {
        let attempter = ScriptedAttempter { option, error in
            if option.id == .stopSyncing { return .setAside(kept: nil, summary: "You stopped syncing.") }
            var banner = error
            banner.presentation = .toast
            return .setAside(kept: banner, summary: "Hidden for now.")
        }
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let hidden = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "a")
        #expect(hidden.status == .dismissed && hidden.summary == "Hidden for now.")
        #expect(await registry.error(id: error.id)?.presentation == .toast, "kept, in the quieter form")
        #expect(await registry.error(id: error.id)?.lastFailedAttempt == nil, "no failure noted")
        let stopped = try await registry.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "b")
        #expect(stopped.status == .dismissed && stopped.error == nil)
        #expect(await registry.openErrors().isEmpty)
        let record = try #require(await registry.recentProblems().first)
        #expect(record.attempts.map(\.status) == [.dismissed, .dismissed])
        #expect(record.attempts.map(\.summary) == ["Hidden for now.", "You stopped syncing."])
        #expect(record.attempts.allSatisfy { $0.reason == nil }, "neither \"did not help\"")
        #expect(presenter.attemptStatuses == [.running, .dismissed, .running, .dismissed])
    }

    // MARK: What the person gave

    @Test func theInputReachesTheAttempterOnlyWithAnAcceptedAttempt() async throws {
        final class InputAttempter: RecoveryAttempter {
            let received = Mutex<[AttemptInput]>([])
            func attempt(_ option: RecoveryOption, for error: UserFacingError, input: AttemptInput) async -> AttemptResult {
                received.withLock { $0.append(input) }
                return .failed(error.failing(because: "no"))
            }
        }
        let attempter = InputAttempter()
        let registry = registry(attempter)
        let error = await registry.raise(sampleError())
        let typed = AttemptInput(password: "hunter2")
        await #expect(throws: ErrorRegistry.AttemptRefusal.unknownError) {
            _ = try await registry.attempt(errorID: "e-gone", postedOption: "try-again", idempotencyKey: "a", input: typed)
        }
        await #expect(throws: ErrorRegistry.AttemptRefusal.unknownOption) {
            _ = try await registry.attempt(errorID: error.id, postedOption: "sign-in", idempotencyKey: "b", input: typed)
        }
        #expect(attempter.received.withLock { $0 }.isEmpty, "refused attempts never use what was typed")
        _ = try await registry.attempt(errorID: error.id, postedOption: "try-again", idempotencyKey: "c", input: typed)
        #expect(attempter.received.withLock { $0 } == [typed])
        #expect(!"\(typed)".contains("hunter2"), "never in a log line")
    }
}
