import Foundation

/// The open problems: at most one per kind, and of the connection's problems only the latest
/// (only it is true now). Each change returns the events that tell the page.
struct ProblemBoard: Sendable, Equatable {
    private var open: [EngineProblem.Kind: EngineProblem] = [:]

    /// The open problems, in the order of their kinds.
    var problems: [EngineProblem] { EngineProblem.Kind.allCases.compactMap { open[$0] } }

    func isOpen(_ kind: EngineProblem.Kind) -> Bool { open[kind] != nil }

    /// Opens `problem` (or updates it); a connection problem ends the other connection problems.
    /// It is told every time, unchanged or not: which errors are open is the error registry's to
    /// decide (it ignores a repeat of an open error), so an error closed there (an attempt that
    /// worked, a person who stopped syncing) is shown again when its cause comes back.
    mutating func raise(_ problem: EngineProblem) -> [EngineEvent] {
        var events: [EngineEvent] = []
        if problem.kind.isConnectionProblem {
            for kind in EngineProblem.Kind.allCases where kind.isConnectionProblem && kind != problem.kind {
                events += clear(kind)
            }
        }
        open[problem.kind] = problem
        events.append(.problemRaised(problem))
        return events
    }

    mutating func clear(_ kind: EngineProblem.Kind) -> [EngineEvent] {
        open.removeValue(forKey: kind) == nil ? [] : [.problemCleared(kind)]
    }
}

/// The connection's status as the page sees it. Every change is announced, except that when only
/// `lastSuccessAt` moved (every answered poll moves it) it is announced at most every
/// `successAnnouncementInterval`: often enough to say "Updated N s ago" truthfully, without waking
/// every tab for each batch.
struct StatusBoard: Sendable, Equatable {
    private(set) var status: ConnectionStatus
    private var announcedSuccessAt: Date?

    static let successAnnouncementInterval: TimeInterval = 10

    init(_ status: ConnectionStatus) {
        self.status = status
    }

    /// Applies `change`; returns the status to announce, or nil when there is nothing to say.
    /// `successIsNews`: a moved `lastSuccessAt` is said now (a poll sent again without an answer
    /// before it, after a token renewal: the page measures its silence from there).
    mutating func change(successIsNews: Bool = false, _ change: (inout ConnectionStatus) -> Void) -> ConnectionStatus? {
        var next = status
        change(&next)
        guard next != status else { return nil }
        var previousIgnoringSuccess = status
        previousIgnoringSuccess.lastSuccessAt = next.lastSuccessAt
        status = next
        let successNews = next.lastSuccessAt.map { success in
            successIsNews || (announcedSuccessAt.map { success.timeIntervalSince($0) >= Self.successAnnouncementInterval } ?? true)
        } ?? false
        guard previousIgnoringSuccess != next || successNews else { return nil }
        announcedSuccessAt = next.lastSuccessAt
        return next
    }

    /// The page heard of a success another way (an answer with messages reaches every tab as a
    /// `messages` event): a success-only announcement now would wake every tab a second time for
    /// the same answer, and in a fan-out make every poll answer twice.
    mutating func successShown(at date: Date) {
        announcedSuccessAt = max(announcedSuccessAt ?? date, date)
    }
}

/// The seeds' loud guard against a second long poll: the engine's single freshness tag makes one
/// impossible, and this counts and refuses one anyway, so a mistake in a later change shows in
/// `/metrics` and the log instead of as two polls racing for the same cursor.
struct SinglePollGuard: Sendable, Equatable {
    /// The cycle whose poll is in flight.
    private(set) var inFlight: UUID?
    /// Polls refused because another was in flight.
    private(set) var refused = 0

    /// A poll of cycle `tag` is about to start: true when none is in flight (it now is), false
    /// (counted) when one is.
    mutating func begin(_ tag: UUID) -> Bool {
        guard inFlight == nil else {
            refused += 1
            return false
        }
        inFlight = tag
        return true
    }

    /// The poll of cycle `tag` ended; another cycle's end frees nothing.
    mutating func end(_ tag: UUID) {
        if inFlight == tag { inFlight = nil }
    }

    /// The cycle was stopped: its poll is cancelled and its result dropped, so its slot is free
    /// even before the cancelled call returns.
    mutating func cycleStopped() {
        inFlight = nil
    }
}
