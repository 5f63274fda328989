import Foundation

/// The one place open errors live, with their attempters and the attempts made on them.
///
/// - A repeating cause (same `causeKey`) updates the open error instead of stacking copies.
/// - An attempt lasts at least `minimumAttemptDuration` on the injected clock, so a retry that
///   fails at once shows progress instead of a flash.
/// - One attempt per error at a time; an `Idempotency-Key` seen before returns the first answer
///   (for `replayWindow`) and runs nothing; the same key with another option is refused.
public actor ErrorRegistry {
    /// The answer to an attempt, kept for replays.
    public struct AttemptAnswer: Sendable, Equatable {
        public var attemptID: String
        public var errorID: String
        public var optionID: String
        public var result: AttemptResult
    }

    public enum AttemptRefusal: Error, Sendable, Equatable {
        case unknownError
        case unknownOption
        /// The key was used before for another option (or error).
        case keyReusedForAnotherOption
        case attemptRunning
    }

    private struct Entry {
        var error: UserFacingError
        var attempter: any RecoveryAttempter
    }

    private var open: [String: Entry] = [:]
    private var order: [String] = []
    private var running: Set<String> = []
    private var answers: [String: (answer: AttemptAnswer, at: ContinuousClock.Instant)] = [:]
    private let presenter: any ErrorPresenter
    private let clock: any Clock<Duration>
    public let minimumAttemptDuration: Duration
    public let replayWindow: Duration

    public init(presenter: any ErrorPresenter, clock: any Clock<Duration> = ContinuousClock(),
                minimumAttemptDuration: Duration = .milliseconds(400), replayWindow: Duration = .seconds(24 * 3600)) {
        self.presenter = presenter
        self.clock = clock
        self.minimumAttemptDuration = minimumAttemptDuration
        self.replayWindow = replayWindow
    }

    /// Opens `error`, or updates the open error with the same cause (keeping its id). Returns the error as open.
    @discardableResult
    public func raise(_ error: UserFacingError, attempter: any RecoveryAttempter) async -> UserFacingError {
        var error = error
        if let existingID = order.first(where: { open[$0]?.error.causeKey == error.causeKey }), let existing = open[existingID] {
            error.id = existing.error.id
            error.createdAt = existing.error.createdAt
            if existing.error == error { return error }
        } else {
            order.append(error.id)
        }
        open[error.id] = Entry(error: error, attempter: attempter)
        await presenter.present(error)
        return error
    }

    /// Closes the error with this cause, if open.
    public func resolve(causeKey: String) async {
        guard let id = order.first(where: { open[$0]?.error.causeKey == causeKey }) else { return }
        await resolve(id: id)
    }

    public func resolve(id: String) async {
        guard let entry = open.removeValue(forKey: id) else { return }
        order.removeAll { $0 == id }
        await presenter.dismiss(entry.error)
    }

    /// Open errors, oldest first.
    public func openErrors() -> [UserFacingError] {
        order.compactMap { open[$0]?.error }
    }

    public func error(id: String) -> UserFacingError? {
        open[id]?.error
    }

    /// Runs `optionID` on error `errorID`. See the type's documentation for the rules.
    public func attempt(errorID: String, optionID: String, idempotencyKey: String) async throws(AttemptRefusal) -> AttemptAnswer {
        forgetOldAnswers()
        if let previous = answers[idempotencyKey]?.answer {
            guard previous.optionID == optionID, previous.errorID == errorID else { throw .keyReusedForAnotherOption }
            return previous
        }
        guard let entry = open[errorID] else { throw .unknownError }
        guard let option = entry.error.option(optionID) else { throw .unknownOption }
        guard !running.contains(errorID) else { throw .attemptRunning }
        running.insert(errorID)
        defer { running.remove(errorID) }

        // The minimum runs alongside the attempt, so a slow attempt is not made slower.
        let clock = self.clock, minimum = minimumAttemptDuration
        async let floor: Void = { _ = try? await clock.sleep(for: minimum) }()
        var result = await entry.attempter.attempt(option, for: entry.error)
        await floor
        switch result {
        case .recovered:
            await resolve(id: errorID)
        case .failed(let next):
            // The same cause updates this error; another cause (a declined purchase) opens beside it,
            // handled by the same attempter.
            result = .failed(await raise(next, attempter: entry.attempter))
        }
        let answer = AttemptAnswer(attemptID: "a" + UserFacingError.makeID().dropFirst(), errorID: errorID, optionID: optionID,
                                   result: result)
        answers[idempotencyKey] = (answer, ContinuousClock.now)
        return answer
    }

    private func forgetOldAnswers() {
        let now = ContinuousClock.now
        answers = answers.filter { now - $0.value.at < replayWindow }
    }
}
