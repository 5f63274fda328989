import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Recovery

/// Records what the registry shows and hides, as the seed's presenter mock does.
final class RecordingPresenter: ErrorPresenter {
    let log = Mutex<[String]>([])
    func present(_ error: UserFacingError) async { log.withLock { $0.append("present \(error.type) \(error.presentation.rawValue)") } }
    func dismiss(_ error: UserFacingError) async { log.withLock { $0.append("dismiss \(error.type)") } }
    var entries: [String] { log.withLock { $0 } }
}

/// An attempter whose answers the test scripts, counting how often each option ran.
final class ScriptedAttempter: RecoveryAttempter {
    let runs = Mutex<[String]>([])
    let answer: @Sendable (RecoveryOption, UserFacingError) async -> AttemptResult

    init(_ answer: @escaping @Sendable (RecoveryOption, UserFacingError) async -> AttemptResult) {
        self.answer = answer
    }

    func attempt(_ option: RecoveryOption, for error: UserFacingError) async -> AttemptResult {
        runs.withLock { $0.append(option.id) }
        return await answer(option, error)
    }

    var count: Int { runs.withLock { $0.count } }
}

func sampleError(_ type: String = "/problems/upstream-error", debug: String = "500") -> UserFacingError {
    UserFacingError(type: type, title: "T", detail: "D", suggestion: "S", presentation: .banner, options: [.tryAgain, .cancel],
                    debug: debug, createdAt: Date(timeIntervalSince1970: 0))
}

@Suite("Error registry")
struct ErrorRegistryTests {
    let clock = ManualClock()
    let presenter = RecordingPresenter()

    private func registry(_ minimum: Duration = .zero) -> ErrorRegistry {
        ErrorRegistry(presenter: presenter, clock: clock, minimumAttemptDuration: minimum)
    }

    @Test func aRepeatingCauseUpdatesTheOpenErrorInsteadOfStacking() async {
        let registry = registry()
        let attempter = ScriptedAttempter { _, _ in .recovered }
        let first = await registry.raise(sampleError(debug: "500"), attempter: attempter)
        let second = await registry.raise(sampleError(debug: "503"), attempter: attempter)
        #expect(second.id == first.id)
        #expect(await registry.openErrors().map(\.debug) == ["503"])
        #expect(presenter.entries == ["present /problems/upstream-error banner", "present /problems/upstream-error banner"])
        _ = await registry.raise(sampleError(debug: "503"), attempter: attempter)
        #expect(presenter.entries.count == 2, "an identical repeat is not shown again")
    }

    @Test func recoveredResolvesAndFailedShowsTheNewError() async throws {
        let registry = registry()
        let attempter = ScriptedAttempter { option, error in
            option.id == "cancel" ? .recovered : .failed({ var next = error; next.debug = "still 500"; return next }())
        }
        let error = await registry.raise(sampleError(), attempter: attempter)
        let failed = try await registry.attempt(errorID: error.id, optionID: "try-again", idempotencyKey: "k1")
        guard case .failed(let next) = failed.result else { Issue.record("expected failed"); return }
        #expect(next.id == error.id && next.debug == "still 500")
        _ = try await registry.attempt(errorID: error.id, optionID: "cancel", idempotencyKey: "k2")
        #expect(await registry.openErrors().isEmpty)
        #expect(presenter.entries.last == "dismiss /problems/upstream-error")
        await #expect(throws: ErrorRegistry.AttemptRefusal.unknownError) {
            _ = try await registry.attempt(errorID: error.id, optionID: "cancel", idempotencyKey: "k3")
        }
    }

    @Test func anAttemptLastsAtLeast400MillisecondsInVirtualTime() async throws {
        let registry = registry(.milliseconds(400))
        let attempter = ScriptedAttempter { _, _ in .recovered }
        let error = await registry.raise(sampleError(), attempter: attempter)
        let attempt = Task { try await registry.attempt(errorID: error.id, optionID: "try-again", idempotencyKey: "k") }
        await clock.waitForSleepers()
        #expect(attempter.count == 1, "the option ran at once")
        clock.advance(by: .milliseconds(399))
        #expect(await registry.openErrors().count == 1, "but the answer waits")
        clock.advance(by: .milliseconds(1))
        #expect(try await attempt.value.result == .recovered)
    }

    @Test func aReplayedKeyReturnsTheFirstAnswerAndRunsNothing() async throws {
        let registry = registry()
        let attempter = ScriptedAttempter { _, error in .failed(error) }
        let error = await registry.raise(sampleError(), attempter: attempter)
        let first = try await registry.attempt(errorID: error.id, optionID: "try-again", idempotencyKey: "same")
        let replay = try await registry.attempt(errorID: error.id, optionID: "try-again", idempotencyKey: "same")
        #expect(first == replay)
        #expect(attempter.count == 1)
        await #expect(throws: ErrorRegistry.AttemptRefusal.keyReusedForAnotherOption) {
            _ = try await registry.attempt(errorID: error.id, optionID: "cancel", idempotencyKey: "same")
        }
        await #expect(throws: ErrorRegistry.AttemptRefusal.unknownOption) {
            _ = try await registry.attempt(errorID: error.id, optionID: "buy-space", idempotencyKey: "other")
        }
    }

    @Test func aSecondAttemptWhileOneRunsIsRefused() async throws {
        let registry = registry()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let attempter = ScriptedAttempter { _, _ in
            for await _ in gate { break }
            return .recovered
        }
        let error = await registry.raise(sampleError(), attempter: attempter)
        let running = Task { try await registry.attempt(errorID: error.id, optionID: "try-again", idempotencyKey: "a") }
        while attempter.count == 0 { await Task.yield() }
        await #expect(throws: ErrorRegistry.AttemptRefusal.attemptRunning) {
            _ = try await registry.attempt(errorID: error.id, optionID: "cancel", idempotencyKey: "b")
        }
        open.yield()
        #expect(try await running.value.result == .recovered)
        #expect(attempter.count == 1, "a double click never runs an option twice")
    }
}
