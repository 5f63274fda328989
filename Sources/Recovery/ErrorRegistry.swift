import Foundation

/// The one place open errors live, with their attempters and the attempts made on them.
///
/// - A repeating cause (same `causeKey`) updates the open error instead of stacking copies.
/// - An attempt lasts at least `minimumAttemptDuration` on the injected clock, so a retry that
///   fails at once shows progress instead of a flash, and at most `attemptDeadline`: an attempter
///   that has no outcome by then is cancelled and the attempt answers `failed` with that reason.
/// - One attempt per error at a time; an `Idempotency-Key` seen before returns the first answer
///   (for `replayWindow`) and runs nothing; the same key with another option is refused.
/// - An attempt that fails records why on the error (`lastFailedAttempt`), and the last
///   `historyLimit` errors with their attempts stay readable after they are resolved.
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

    /// An attempt in progress: which option, under which id.
    public struct RunningAttempt: Sendable, Equatable {
        public var attemptID: String
        public var optionID: String
    }

    private struct Entry {
        var error: UserFacingError
        var attempter: any RecoveryAttempter
    }

    private var open: [String: Entry] = [:]
    private var order: [String] = []
    private var running: [String: RunningAttempt] = [:]
    private var answers: [String: (answer: AttemptAnswer, at: ContinuousClock.Instant)] = [:]
    private var history: [ProblemRecord] = []
    private let presenter: any ErrorPresenter
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    public let minimumAttemptDuration: Duration
    public let attemptDeadline: Duration
    public let replayWindow: Duration
    public let historyLimit = 20

    public init(presenter: any ErrorPresenter, clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Date = { Date() },
                minimumAttemptDuration: Duration = .milliseconds(400), attemptDeadline: Duration = .seconds(30),
                replayWindow: Duration = .seconds(24 * 3600)) {
        self.presenter = presenter
        self.clock = clock
        self.now = now
        self.minimumAttemptDuration = minimumAttemptDuration
        self.attemptDeadline = attemptDeadline
        self.replayWindow = replayWindow
    }

    /// Opens `error`, or updates the open error with the same cause (keeping its id, its creation
    /// time and, unless `error` brings its own, the note of its last failed attempt). Returns the error as open.
    @discardableResult
    public func raise(_ error: UserFacingError, attempter: any RecoveryAttempter) async -> UserFacingError {
        var error = error
        if let existingID = order.first(where: { open[$0]?.error.causeKey == error.causeKey }), let existing = open[existingID] {
            error.id = existing.error.id
            error.createdAt = existing.error.createdAt
            if error.lastFailedAttempt == nil { error.lastFailedAttempt = existing.error.lastFailedAttempt }
            if existing.error == error { return error }
            updateRecord(error.id) { $0.title = error.title }
        } else {
            order.append(error.id)
            history.append(ProblemRecord(errorID: error.id, type: error.type, title: error.title, raisedAt: error.createdAt))
            if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
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
        let at = now()
        updateRecord(id) { $0.resolvedAt = at }
        await presenter.dismiss(entry.error)
    }

    /// Open errors, oldest first.
    public func openErrors() -> [UserFacingError] {
        order.compactMap { open[$0]?.error }
    }

    public func error(id: String) -> UserFacingError? {
        open[id]?.error
    }

    /// The attempts running now, by error id.
    public func runningAttempts() -> [String: RunningAttempt] {
        running
    }

    /// The last `historyLimit` errors, open or resolved, newest first, with their attempts.
    public func recentProblems() -> [ProblemRecord] {
        history.reversed()
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
        guard running[errorID] == nil else { throw .attemptRunning }
        let attemptID = "a" + UserFacingError.makeID().dropFirst()
        running[errorID] = RunningAttempt(attemptID: attemptID, optionID: optionID)
        await presenter.attemptChanged(AttemptProgress(errorID: errorID, attemptID: attemptID, optionID: optionID, optionTitle: option.title,
                                                       status: .running))

        // The minimum runs alongside the attempt, so a slow attempt is not made slower.
        let clock = self.clock, minimum = minimumAttemptDuration
        async let floor: Void = { _ = try? await clock.sleep(for: minimum) }()
        var result = await outcome(of: option, for: entry, before: attemptDeadline)
        await floor
        var failureReason: String?
        switch result {
        case .recovered:
            await resolve(id: errorID)
        case .failed(var next):
            if option.role != .cancel && next.causeKey == entry.error.causeKey {
                next.lastFailedAttempt = FailedAttempt(optionID: option.id, optionTitle: option.title, at: now(),
                                                       reason: next.lastFailedAttempt?.reason ?? next.detail)
            } else if next.causeKey != entry.error.causeKey {
                // Another error now (a declined purchase): it says what happened itself; the
                // attempt's reason goes to the history.
                failureReason = next.lastFailedAttempt?.reason ?? next.detail
                next.lastFailedAttempt = nil
            }
            let resolvedMeanwhile = next.id == errorID && open[errorID] == nil && !order.contains { open[$0]?.error.causeKey == next.causeKey }
            // The same cause updates this error; another cause (a declined purchase) opens beside it,
            // handled by the same attempter. An error the engine resolved meanwhile stays resolved.
            result = .failed(resolvedMeanwhile ? next : await raise(next, attempter: entry.attempter))
        }
        running[errorID] = nil
        let answer = AttemptAnswer(attemptID: attemptID, errorID: errorID, optionID: optionID, result: result)
        answers[idempotencyKey] = (answer, ContinuousClock.now)
        let succeeded: Bool
        let summary: String?
        if case .recovered(let said) = result { (succeeded, summary) = (true, said) } else { (succeeded, summary) = (false, nil) }
        let reason: String? = if case .failed(let next) = result, option.role != .cancel { next.lastFailedAttempt?.reason ?? failureReason } else { nil }
        let at = now()
        updateRecord(errorID) {
            $0.attempts.append(AttemptRecord(optionID: option.id, optionTitle: option.title, recovered: succeeded, at: at, reason: reason,
                                             summary: summary))
        }
        await presenter.attemptChanged(AttemptProgress(errorID: errorID, attemptID: attemptID, optionID: optionID, optionTitle: option.title,
                                                       status: succeeded ? .recovered : .failed, reason: reason, summary: summary))
        return answer
    }

    /// Runs the option, or gives up after `deadline`: the attempter is then cancelled and the
    /// error as it stands now comes back with the reason. The attempt runs in a task of its own, so
    /// a page that goes away mid-attempt does not cancel what the person asked for (its answer is
    /// kept for the retry of that click).
    private func outcome(of option: RecoveryOption, for entry: Entry, before deadline: Duration) async -> AttemptResult {
        enum Race: Sendable { case finished(AttemptResult), deadline }
        let clock = self.clock, attempter = entry.attempter, error = entry.error
        let race = await Task {
            await withTaskGroup(of: Race.self) { group in
                group.addTask { .finished(await attempter.attempt(option, for: error)) }
                group.addTask {
                    try? await clock.sleep(for: deadline)
                    return .deadline
                }
                let first = await group.next() ?? .deadline
                group.cancelAll()
                return first
            }
        }.value
        switch race {
        case .finished(let result):
            return result
        case .deadline:
            let seconds = deadline.components.seconds
            let current = open[error.id]?.error ?? error
            return .failed(current.failing(because: "There was no outcome within \(seconds) seconds. Syncing goes on trying by itself."))
        }
    }

    private func updateRecord(_ errorID: String, _ change: (inout ProblemRecord) -> Void) {
        guard let index = history.lastIndex(where: { $0.errorID == errorID }) else { return }
        change(&history[index])
    }

    private func forgetOldAnswers() {
        let now = ContinuousClock.now
        answers = answers.filter { now - $0.value.at < replayWindow }
    }
}

/// An error as the "Recent problems" list remembers it, after it is resolved too.
public struct ProblemRecord: Sendable, Equatable {
    public var errorID: String
    public var type: String
    public var title: String
    public var raisedAt: Date
    public var resolvedAt: Date?
    public var attempts: [AttemptRecord] = []
}

/// One attempt made on an error and how it ended.
public struct AttemptRecord: Sendable, Equatable {
    public var optionID: String
    public var optionTitle: String
    public var recovered: Bool
    public var at: Date
    /// Why it did not help, when it did not.
    public var reason: String?
    /// What it did, when it worked and the attempter said.
    public var summary: String?
}
