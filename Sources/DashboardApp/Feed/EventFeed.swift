import Foundation
import HTTPCore

/// Every change as a numbered event in a bounded buffer, and the page's long-polls parked on it.
///
/// Events are encoded to JSON once, when published; a poll's answer is the concatenation of the
/// fragments after its `since`, so a publish to thousands of parked polls costs one encoding.
/// A publish wakes every parked poll in one pass, dropping in that same pass the polls whose
/// client has gone (the seeds' observer sweep).
public actor EventFeed {
    public let epoch: String
    private let maxEvents: Int
    private let maxAge: Duration
    private var seq = 0
    private var buffer: [(seq: Int, at: ContinuousClock.Instant, json: [UInt8])] = []
    private var parked: [UInt64: ParkedPoll] = [:]
    private var nextPollID: UInt64 = 1
    private var visibilityObserver: (@Sendable (Int) async -> Void)?
    private var lastVisibleCount = 0
    private var counters = FeedCounters()

    private struct ParkedPoll {
        var since: Int
        var visible: Bool
        var held: HeldResponse
        var timer: Task<Void, Never>
    }

    public init(epoch: String, maxEvents: Int = 1000, maxAge: Duration = .seconds(600)) {
        self.epoch = epoch
        self.maxEvents = maxEvents
        self.maxAge = maxAge
    }

    /// Told whenever the number of parked polls from visible tabs changes (the engine's lifecycle).
    public func onVisibleTabsChanged(_ observer: @escaping @Sendable (Int) async -> Void) {
        visibilityObserver = observer
    }

    public var currentSeq: Int { seq }

    public func statistics() -> FeedCounters {
        var snapshot = counters
        snapshot.parkedPolls = parked.count
        snapshot.bufferedEvents = buffer.count
        return snapshot
    }

    /// Appends an event and wakes every parked poll.
    @discardableResult
    public func publish<Data: Encodable>(_ type: String, _ data: Data) -> Int {
        seq += 1
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISOTime.string(date))
        }
        let dataJSON = (try? encoder.encode(data)).map(Array.init) ?? Array("null".utf8)
        var json = Array(#"{"seq":"#.utf8) + Array(String(seq).utf8) + Array(#","type":"#.utf8)
        json += Array("\"\(type)\"".utf8) + Array(#","data":"#.utf8) + dataJSON + [UInt8(ascii: "}")]
        buffer.append((seq, ContinuousClock.now, json))
        trim()
        counters.published += 1
        wakeAll()
        return seq
    }

    private func trim() {
        let now = ContinuousClock.now
        while let first = buffer.first, buffer.count > maxEvents || now - first.at > maxAge {
            buffer.removeFirst()
        }
    }

    /// One pass over the parked polls: answer the live ones, drop the ones whose client left.
    private func wakeAll() {
        var answered = 0
        parked = parked.filter { _, poll in
            if poll.held.isAbandoned {
                poll.timer.cancel()
                return false
            }
            poll.timer.cancel()
            poll.held.complete(with: answer(after: poll.since))
            answered += 1
            return false
        }
        counters.pollsWoken += answered
        reportVisibility()
    }

    /// The outcome of `GET /api/poll`: an answer now, or a poll to hold.
    public enum PollOutcome: Sendable {
        case now(HTTPResponse)
        case held(HeldResponse)
        /// The client needs the whole state again.
        case reset
    }

    /// Answers at once when there is something after `since`; parks the poll otherwise.
    public func poll(since: Int, epoch clientEpoch: String?, timeout: Duration, visible: Bool) -> PollOutcome {
        counters.polls += 1
        trim()
        let oldest = buffer.first?.seq ?? (seq + 1)
        if clientEpoch != epoch || since > seq || (since < oldest - 1 && since < seq) {
            counters.resets += 1
            return .reset
        }
        if since < seq {
            return .now(answer(after: since))
        }
        let id = nextPollID
        nextPollID += 1
        let held = HeldResponse(onAbandoned: { [weak self] in
            Task { await self?.abandoned(id) }
        })
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.expire(id)
        }
        parked[id] = ParkedPoll(since: since, visible: visible, held: held, timer: timer)
        reportVisibility()
        return .held(held)
    }

    /// An answer with no events, for a poll woken by shutdown or timeout.
    public func emptyAnswer() -> HTTPResponse {
        answer(after: seq)
    }

    private func expire(_ id: UInt64) {
        guard let poll = parked.removeValue(forKey: id) else { return }
        counters.timeouts += 1
        poll.held.complete(with: answer(after: poll.since))
        reportVisibility()
    }

    private func abandoned(_ id: UInt64) {
        guard let poll = parked.removeValue(forKey: id) else { return }
        poll.timer.cancel()
        counters.abandoned += 1
        reportVisibility()
    }

    /// Ends every parked poll with what it has (for shutdown).
    public func releaseAll() {
        for (_, poll) in parked {
            poll.timer.cancel()
            poll.held.complete(with: answer(after: poll.since))
        }
        parked.removeAll()
    }

    private func reportVisibility() {
        let visible = parked.values.filter(\.visible).count
        guard visible != lastVisibleCount else { return }
        lastVisibleCount = visible
        if let visibilityObserver {
            Task { await visibilityObserver(visible) }
        }
    }

    private func answer(after since: Int) -> HTTPResponse {
        var body = Array(#"{"epoch":""#.utf8) + Array(epoch.utf8) + Array(#"","seq":"#.utf8) + Array(String(seq).utf8)
        body += Array(#","events":["#.utf8)
        var first = true
        for event in buffer where event.seq > since {
            if !first { body.append(UInt8(ascii: ",")) }
            body += event.json
            first = false
        }
        body += Array("]}".utf8)
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: body)
    }
}

/// Counters for `/metrics`.
public struct FeedCounters: Sendable {
    public var polls = 0
    public var pollsWoken = 0
    public var timeouts = 0
    public var abandoned = 0
    public var resets = 0
    public var published = 0
    public var parkedPolls = 0
    public var bufferedEvents = 0
}

/// ISO-8601 with milliseconds, `2026-11-29T12:00:00.000Z`.
enum ISOTime {
    static func string(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
