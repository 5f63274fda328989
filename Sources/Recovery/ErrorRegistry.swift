import Foundation

/// The one place open errors live, with their attempters and the attempts made on them.
///
/// Which errors are open is decided by cause, and only by their owners: whoever raises a cause
/// (the engine, through `raise` and `resolve`) opens and closes it. What raising, resolving and an
/// attempt's result do to the open errors is `OpenErrors`'s to decide (a value); this actor keeps
/// it, tells the presenter what changed, and runs the attempts:
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

    private var errors: OpenErrors
    private var running: [String: Running] = [:]
    private var answers: [String: (answer: AttemptAnswer, at: ContinuousClock.Instant)] = [:]
    private let presenter: any ErrorPresenter
    /// Runs the options of every error opened here.
    private let attempter: any RecoveryAttempter
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    public let minimumAttemptDuration: Duration
    public let attemptDeadline: Duration
    public let replayWindow: Duration
    public var historyLimit: Int { errors.historyLimit }

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
        self.errors = OpenErrors(historyLimit: 20)
    }

    /// Opens `error`, or updates the open error with the same cause (`OpenErrors.raise`).
    /// Returns the error as open.
    @discardableResult
    public func raise(_ error: UserFacingError) async -> UserFacingError {
        let (shown, changes) = errors.raise(error)
        await perform(changes)
        return shown
    }

    /// Closes the error with this cause, if open (and the errors that came from it); by default
    /// because the situation changed by itself.
    public func resolve(causeKey: String, by resolution: Resolution = .situation) async {
        let id = errors.error(causeKey: causeKey)?.id
        await perform(errors.resolve(causeKey: causeKey, by: credited(resolution, closing: id), at: now()))
    }

    /// Closes this error, if open, and the errors that came from it.
    public func resolve(id: String, by resolution: Resolution = .situation) async {
        await perform(errors.resolve(id: id, by: credited(resolution, closing: id), at: now()))
    }

    /// A situation that changes while an attempt on the error runs is that attempt's doing (Try
    /// again asked the engine for the very reconnect that closes it): the page then names the
    /// option someone chose instead of saying the problem went by itself.
    private func credited(_ resolution: Resolution, closing id: String?) -> Resolution {
        guard resolution == .situation, let id, let attempt = running[id]?.attempt else { return resolution }
        return .attempt(attempt.optionID)
    }

    /// Open errors, oldest first.
    public func openErrors() -> [UserFacingError] {
        errors.all
    }

    public func error(id: String) -> UserFacingError? {
        errors[id: id]
    }

    /// The attempts running now, by error id.
    public func runningAttempts() -> [String: RunningAttempt] {
        running.mapValues(\.attempt)
    }

    /// The last `historyLimit` errors, open or resolved, newest first, with their attempts.
    public func recentProblems() -> [ProblemRecord] {
        errors.history.reversed()
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
        guard let shown = errors[id: errorID] else { throw .unknownError }
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
        let settled = errors.settle(result, of: option, on: shown, at: now())
        let answer = AttemptAnswer(attemptID: attemptID, errorID: errorID, optionID: option.id, postedOption: postedOption,
                                   status: settled.status, error: settled.shown, summary: settled.summary)
        errors.record(AttemptRecord(optionID: option.id, optionTitle: option.title, status: answer.status, at: now(), reason: settled.reason,
                                    summary: answer.summary), on: errorID)
        await perform(settled.changes)
        let joiners = running.removeValue(forKey: errorID)?.joiners ?? []
        answers[idempotencyKey] = (answer, ContinuousClock.now)
        await presenter.attemptChanged(AttemptProgress(errorID: errorID, errorKind: shown.kind, attemptID: attemptID, optionID: option.id,
                                                       optionTitle: option.title, status: answer.status, reason: settled.reason, summary: answer.summary))
        joiners.forEach { $0.resume(returning: answer) }
        return answer
    }

    /// Tells the presenter what changed, in order.
    private func perform(_ changes: [OpenErrors.Change]) async {
        for change in changes {
            switch change {
            case .present(let error): await presenter.present(error)
            case .dismiss(let error, let resolution): await presenter.dismiss(error, by: resolution)
            }
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
            let current = errors[id: error.id] ?? error
            return .failed(current.failing(because: "There was no outcome within \(seconds) seconds. Syncing goes on trying by itself."))
        }
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
