import Foundation

/// What closed an error.
public enum Resolution: Sendable, Equatable {
    /// An option someone chose, in one of the page's windows or through the API.
    case attempt(OptionID)
    /// Something someone did outside the error took away what it was about (the Delete of its message).
    case action
    /// The situation changed by itself: the connection came back, space was freed, the account went.
    case situation
}

/// The registry's rules as a plain value: which errors are open, in which order, what an
/// attempter's result does to them, and the record of recent ones. What changed for the page
/// comes out as `Change`s, in the order they happened; `ErrorRegistry` performs them (tells its
/// presenter) and runs the attempts. No clock, task or presenter in here: the time is an input.
public struct OpenErrors: Sendable, Equatable {
    /// What the page must hear of.
    public enum Change: Sendable, Equatable {
        case present(UserFacingError)
        /// Closed, and what closed it: the page says so, and gives no one credit that is not due.
        case dismiss(UserFacingError, by: Resolution)
    }

    /// What an attempt's result came to.
    public struct Settlement: Sendable, Equatable {
        /// `recovered`, `failed` or `dismissed`.
        public var status: AttemptStatus
        /// The error left open by the attempt (the same one with its note, or one it led to).
        public var shown: UserFacingError?
        public var summary: String?
        /// Why it did not help, for the record.
        public var reason: String?
        public var changes: [Change]
    }

    public let historyLimit: Int
    private var open: [String: UserFacingError] = [:]
    private var order: [String] = []
    private(set) public var history: [ProblemRecord] = []

    public init(historyLimit: Int = 20) {
        self.historyLimit = historyLimit
    }

    /// Open errors, oldest first.
    public var all: [UserFacingError] { order.compactMap { open[$0] } }

    public subscript(id id: String) -> UserFacingError? { open[id] }

    public func error(causeKey: String) -> UserFacingError? {
        order.lazy.compactMap { self.open[$0] }.first { $0.causeKey == causeKey }
    }

    /// Opens `error`, or updates the open error with the same cause (keeping its id, its creation
    /// time, its origin and, unless `error` brings its own, the note of its last failed attempt).
    /// Returns the error as open; nothing changes (and nothing is presented) when it is the same.
    public mutating func raise(_ error: UserFacingError) -> (UserFacingError, [Change]) {
        var error = error
        if let existing = self.error(causeKey: error.causeKey) {
            error.id = existing.id
            error.createdAt = existing.createdAt
            error.origin = error.origin ?? existing.origin
            if error.lastFailedAttempt == nil { error.lastFailedAttempt = existing.lastFailedAttempt }
            if existing == error { return (error, []) }
            let title = error.title
            updateRecord(error.id) { $0.title = title }
        } else {
            order.append(error.id)
            history.append(ProblemRecord(errorID: error.id, kind: error.kind, title: error.title, raisedAt: error.createdAt))
            if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
        }
        open[error.id] = error
        return (error, [.present(error)])
    }

    /// Closes this error, if open, and the errors that came from it (`UserFacingError.origin`),
    /// all for the same reason.
    public mutating func resolve(id: String, by resolution: Resolution, at time: Date) -> [Change] {
        guard let closed = open.removeValue(forKey: id) else { return [] }
        order.removeAll { $0 == id }
        updateRecord(id) { $0.resolvedAt = time }
        var changes: [Change] = [.dismiss(closed, by: resolution)]
        for child in all where child.origin == closed.causeKey {
            changes += resolve(id: child.id, by: resolution, at: time)
        }
        return changes
    }

    public mutating func resolve(causeKey: String, by resolution: Resolution, at time: Date) -> [Change] {
        guard let error = error(causeKey: causeKey) else { return [] }
        return resolve(id: error.id, by: resolution, at: time)
    }

    /// What `result` of `option`, tried on `attempted`, means for the open errors. An answer updates
    /// an error whose cause is still open, and opens one of its own making only while the error it
    /// came from is open; it never reopens a cause that was closed while the attempt ran.
    public mutating func settle(_ result: AttemptResult, of option: RecoveryOption, on attempted: UserFacingError, at time: Date) -> Settlement {
        switch result {
        case .recovered(let summary):
            return Settlement(status: .recovered, summary: summary, changes: resolve(id: attempted.id, by: .attempt(option.id), at: time))
        case .setAside(let kept?, let summary) where kept.causeKey == attempted.causeKey:
            // Kept in another form (a banner), if its owner has not closed it meanwhile.
            guard error(causeKey: kept.causeKey) != nil else { return Settlement(status: .dismissed, summary: summary, changes: []) }
            let (shown, changes) = raise(kept)
            return Settlement(status: .dismissed, shown: shown, summary: summary, changes: changes)
        case .setAside(_, let summary):
            return Settlement(status: .dismissed, summary: summary, changes: resolve(id: attempted.id, by: .attempt(option.id), at: time))
        case .failed(var next):
            let reason = next.lastFailedAttempt?.reason ?? next.detail
            if next.causeKey == attempted.causeKey {
                let before = open[attempted.id]?.lastFailedAttempt
                let tries = (before?.optionID == option.id ? before?.tries ?? 0 : 0) + 1
                next.lastFailedAttempt = FailedAttempt(optionID: option.id, optionTitle: option.title, at: time, reason: reason, tries: tries)
            } else {
                // Another error now (a declined purchase): it says what happened itself; the
                // attempt's reason goes to the record.
                next.lastFailedAttempt = nil
            }
            let stillOpen = error(causeKey: next.causeKey) != nil
            let ofItsOwnMaking = next.causeKey != attempted.causeKey && next.origin.map { error(causeKey: $0) != nil } == true
            guard stillOpen || ofItsOwnMaking else {
                // Its owner closed it while the attempt ran (or never opened it): an answer opens nothing.
                return Settlement(status: .failed, reason: reason, changes: [])
            }
            let (shown, changes) = raise(next)
            return Settlement(status: .failed, shown: shown, reason: reason, changes: changes)
        }
    }

    /// Notes an attempt in the record of its error.
    public mutating func record(_ attempt: AttemptRecord, on errorID: String) {
        updateRecord(errorID) { $0.attempts.append(attempt) }
    }

    private mutating func updateRecord(_ errorID: String, _ change: (inout ProblemRecord) -> Void) {
        guard let index = history.lastIndex(where: { $0.errorID == errorID }) else { return }
        change(&history[index])
    }
}
