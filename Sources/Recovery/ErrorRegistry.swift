import Foundation

/// The one place open errors live, with their attempters and the attempts made on them.
///
/// Which errors are open is decided here, by cause, and only by their owners: whoever raises a
/// cause (the engine, through `raise` and `resolve`) opens and closes it. An attempt's answer
/// updates an error whose cause is still open, and opens an error of its own making only while
/// the error it came from is open (`UserFacingError.origin`); it never reopens a cause that was
/// closed while the attempt ran. Closing an error closes those that came from it.
///
/// - A repeating cause (same `causeKey`) updates the open error instead of stacking copies.
/// - An attempt lasts at least `minimumAttemptDuration` on the injected clock, so a retry that
///   fails at once shows progress instead of a flash, and at most `attemptDeadline`: an attempter
///   that has no outcome by then is cancelled and the attempt answers `failed` with that reason.
/// - One attempt per error at a time. An `Idempotency-Key` is one click: the same key while its
///   attempt runs joins it and gets its answer, the same key afterwards returns the first answer
///   (for `replayWindow`) and runs nothing, and the same key with another option is refused.
/// - An attempt that fails records why on the error (`lastFailedAttempt`), and the last
///   `historyLimit` errors with their attempts stay readable after they are resolved.
public actor ErrorRegistry {
    /// The answer to an attempt, kept for replays.
    public struct AttemptAnswer: Sendable, Equatable {
        public var attemptID: String
        public var errorID: String
        public var optionID: OptionID
        /// The id the attempt was asked with (an option's own, or the contract's `cancel`), so a
        /// replay of the same click is known as one.
        public var postedOption: String
        /// `recovered`, `failed` or `dismissed` (never `running`).
        public var status: AttemptStatus
        /// The error as it is open now, when the attempt left one open: the same one with the note of
        /// this attempt, or the error it led to (a declined purchase). Nil when it closed, also when
        /// its owner closed it while the attempt ran.
        public var error: UserFacingError?
        /// What the option did, in words, when it recovered or set the error aside.
        public var summary: String?
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
        public var optionID: OptionID
        /// The id it was asked with.
        public var postedOption: String
    }


    private struct Running {
        var attempt: RunningAttempt
        var idempotencyKey: String
        /// Requests that came again with the same key while it runs (a network retry of the click).
        var joiners: [CheckedContinuation<AttemptAnswer, Never>] = []
    }

    private var open: [String: UserFacingError] = [:]
    private var order: [String] = []
    private var running: [String: Running] = [:]
    private var answers: [String: (answer: AttemptAnswer, at: ContinuousClock.Instant)] = [:]
    private var history: [ProblemRecord] = []
    private let presenter: any ErrorPresenter
    /// Runs the options of every error opened here.
    private let attempter: any RecoveryAttempter
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    public let minimumAttemptDuration: Duration
    public let attemptDeadline: Duration
    public let replayWindow: Duration
    public let historyLimit = 20

    public init(presenter: any ErrorPresenter, attempter: any RecoveryAttempter, clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Date = { Date() },
                minimumAttemptDuration: Duration = .milliseconds(400), attemptDeadline: Duration = .seconds(30),
                replayWindow: Duration = .seconds(24 * 3600)) {
        self.presenter = presenter
        self.attempter = attempter
        self.clock = clock
        self.now = now
        self.minimumAttemptDuration = minimumAttemptDuration
        self.attemptDeadline = attemptDeadline
        self.replayWindow = replayWindow
    }

    /// Opens `error`, or updates the open error with the same cause (keeping its id, its creation
    /// time, its origin and, unless `error` brings its own, the note of its last failed attempt).
    /// Returns the error as open.
    @discardableResult
    public func raise(_ error: UserFacingError) async -> UserFacingError {
        var error = error
        if let existing = openError(causeKey: error.causeKey) {
            error.id = existing.id
            error.createdAt = existing.createdAt
            error.origin = error.origin ?? existing.origin
            if error.lastFailedAttempt == nil { error.lastFailedAttempt = existing.lastFailedAttempt }
            if existing == error { return error }
            updateRecord(error.id) { $0.title = error.title }
        } else {
            order.append(error.id)
            history.append(ProblemRecord(errorID: error.id, kind: error.kind, title: error.title, raisedAt: error.createdAt))
            if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
        }
        open[error.id] = error
        await presenter.present(error)
        return error
    }

    /// Closes the error with this cause, if open (and the errors that came from it).
    public func resolve(causeKey: String) async {
        guard let error = openError(causeKey: causeKey) else { return }
        await resolve(id: error.id)
    }

    /// Closes this error, if open, and the errors that came from it.
    public func resolve(id: String) async {
        guard let closed = open.removeValue(forKey: id) else { return }
        order.removeAll { $0 == id }
        let at = now()
        updateRecord(id) { $0.resolvedAt = at }
        await presenter.dismiss(closed)
        for child in order.compactMap({ open[$0] }) where child.origin == closed.causeKey {
            await resolve(id: child.id)
        }
    }

    /// Open errors, oldest first.
    public func openErrors() -> [UserFacingError] {
        order.compactMap { open[$0] }
    }

    public func error(id: String) -> UserFacingError? {
        open[id]
    }

    /// The attempts running now, by error id.
    public func runningAttempts() -> [String: RunningAttempt] {
        running.mapValues(\.attempt)
    }

    /// The last `historyLimit` errors, open or resolved, newest first, with their attempts.
    public func recentProblems() -> [ProblemRecord] {
        history.reversed()
    }

    /// Runs the option posted as `postedOption` (one of the error's option ids, or the contract's
    /// `cancel`: `UserFacingError.option(posted:)`) on error `errorID` with `input`. See the
    /// type's documentation for the rules.
    public func attempt(errorID: String, postedOption: String, idempotencyKey: String,
                        input: AttemptInput = AttemptInput()) async throws(AttemptRefusal) -> AttemptAnswer {
        forgetOldAnswers()
        if let previous = answers[idempotencyKey]?.answer {
            guard previous.postedOption == postedOption, previous.errorID == errorID else { throw .keyReusedForAnotherOption }
            return previous
        }
        if let (runningErrorID, attempt) = running.first(where: { $0.value.idempotencyKey == idempotencyKey }) {
            guard runningErrorID == errorID, attempt.attempt.postedOption == postedOption else { throw .keyReusedForAnotherOption }
            return await withCheckedContinuation { running[errorID]?.joiners.append($0) }
        }
        guard let shown = open[errorID] else { throw .unknownError }
        guard let option = shown.option(posted: postedOption) else { throw .unknownOption }
        guard running[errorID] == nil else { throw .attemptRunning }
        let attemptID = "a" + UserFacingError.makeID().dropFirst()
        running[errorID] = Running(attempt: RunningAttempt(attemptID: attemptID, optionID: option.id, postedOption: postedOption),
                                   idempotencyKey: idempotencyKey)
        await presenter.attemptChanged(AttemptProgress(errorID: errorID, errorKind: shown.kind, attemptID: attemptID, optionID: option.id,
                                                       optionTitle: option.title, status: .running))

        // The minimum runs alongside the attempt, so a slow attempt is not made slower.
        let clock = self.clock, minimum = minimumAttemptDuration
        async let floor: Void = { _ = try? await clock.sleep(for: minimum) }()
        let result = await outcome(of: option, for: shown, input: input, before: attemptDeadline)
        await floor
        let (answer, reason) = await settle(result, of: option, posted: postedOption, on: shown, attemptID: attemptID)

        let joiners = running.removeValue(forKey: errorID)?.joiners ?? []
        answers[idempotencyKey] = (answer, ContinuousClock.now)
        let at = now()
        updateRecord(errorID) {
            $0.attempts.append(AttemptRecord(optionID: option.id, optionTitle: option.title, status: answer.status, at: at, reason: reason,
                                             summary: answer.summary))
        }
        await presenter.attemptChanged(AttemptProgress(errorID: errorID, errorKind: shown.kind, attemptID: attemptID, optionID: option.id,
                                                       optionTitle: option.title, status: answer.status, reason: reason, summary: answer.summary))
        joiners.forEach { $0.resume(returning: answer) }
        return answer
    }

    /// What an attempter's result means for the open errors, and the answer it makes; with the
    /// reason it did not help, for the record.
    private func settle(_ result: AttemptResult, of option: RecoveryOption, posted: String, on attempted: UserFacingError,
                        attemptID: String) async -> (AttemptAnswer, reason: String?) {
        let errorID = attempted.id
        func answer(_ status: AttemptStatus, _ error: UserFacingError?, _ summary: String? = nil) -> AttemptAnswer {
            AttemptAnswer(attemptID: attemptID, errorID: errorID, optionID: option.id, postedOption: posted, status: status, error: error,
                          summary: summary)
        }
        switch result {
        case .recovered(let summary):
            await resolve(id: errorID)
            return (answer(.recovered, nil, summary), nil)
        case .setAside(let kept?, let summary) where kept.causeKey == attempted.causeKey:
            // Kept in another form (a banner), if its owner has not closed it meanwhile.
            let shown = openError(causeKey: kept.causeKey) == nil ? nil : await raise(kept)
            return (answer(.dismissed, shown, summary), nil)
        case .setAside(_, let summary):
            await resolve(id: errorID)
            return (answer(.dismissed, nil, summary), nil)
        case .failed(var next):
            let reason = next.lastFailedAttempt?.reason ?? next.detail
            if next.causeKey == attempted.causeKey {
                next.lastFailedAttempt = FailedAttempt(optionID: option.id, optionTitle: option.title, at: now(), reason: reason)
            } else {
                // Another error now (a declined purchase): it says what happened itself; the
                // attempt's reason goes to the record.
                next.lastFailedAttempt = nil
            }
            let shown: UserFacingError?
            if openError(causeKey: next.causeKey) != nil {
                shown = await raise(next)
            } else if next.causeKey != attempted.causeKey, let origin = next.origin, openError(causeKey: origin) != nil {
                // An error of the attempt's own making, beside the one it came from.
                shown = await raise(next)
            } else {
                // Its owner closed it while the attempt ran (or never opened it): an answer opens nothing.
                shown = nil
            }
            return (answer(.failed, shown), reason)
        }
    }

    /// Runs the option, or gives up after `deadline`: the attempter is then cancelled and the
    /// error as it stands now comes back with the reason. The attempt runs in a task of its own, so
    /// a page that goes away mid-attempt does not cancel what the person asked for (its answer is
    /// kept for the retry of that click).
    private func outcome(of option: RecoveryOption, for error: UserFacingError, input: AttemptInput, before deadline: Duration) async -> AttemptResult {
        enum Race: Sendable { case finished(AttemptResult), deadline }
        let clock = self.clock, attempter = self.attempter
        let race = await Task {
            await withTaskGroup(of: Race.self) { group in
                group.addTask { .finished(await attempter.attempt(option, for: error, input: input)) }
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
            let current = open[error.id] ?? error
            return .failed(current.failing(because: "There was no outcome within \(seconds) seconds. Syncing goes on trying by itself."))
        }
    }

    private func openError(causeKey: String) -> UserFacingError? {
        order.lazy.compactMap { self.open[$0] }.first { $0.causeKey == causeKey }
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
    public var kind: ProblemKind
    public var title: String
    public var raisedAt: Date
    public var resolvedAt: Date?
    public var attempts: [AttemptRecord] = []
}

/// One attempt made on an error and how it ended.
public struct AttemptRecord: Sendable, Equatable {
    public var optionID: OptionID
    public var optionTitle: String
    /// `recovered`, `failed` or `dismissed`.
    public var status: AttemptStatus
    public var at: Date
    /// Why it did not help, when it did not.
    public var reason: String?
    /// What it did, when it worked or set the error aside and the attempter said.
    public var summary: String?
}
