import Engine
import Foundation
import HTTPCore
import JSONText
import Upstream

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
    /// `at`: when it was published, as time since the feed began (`elapsed`).
    private var buffer: [(seq: Int, at: Duration, json: [UInt8])] = []
    /// Keyed by the held response's identity: the dictionary keeps the response alive, so no
    /// other response can take its identifier while it is parked.
    private var parked: [ObjectIdentifier: ParkedPoll] = [:]
    /// The polls a wake pass is answering, swapped with `parked` (both keep their capacity).
    private var waking: [ObjectIdentifier: ParkedPoll] = [:]
    /// What every parked poll's response calls when its client goes away: one closure for the
    /// feed's life rather than one (and a weak reference's box) per poll.
    private var abandonmentHandler: (@Sendable (HeldResponse) -> Void)?
    private var visibilityReports: AsyncStream<Bool>.Continuation?
    private var reportedVisible = false
    /// Parked polls from visible tabs, kept as polls park and leave (not counted on every change).
    private var visibleParked = 0
    /// Whether a visible poll parked since the last sweep. A tab is gone only when none did for a
    /// whole sweep interval: between an answer and its next poll a tab has none parked, and telling
    /// the engine of that on every answer cost a wake-up of the engine per message (perf, N = 1).
    private var visibleParkedSinceSweep = false
    private var counters = FeedCounters()

    private struct ParkedPoll {
        var since: Int
        var visible: Bool
        var held: HeldResponse
        var deadline: Duration
    }

    /// One task expires every parked poll whose timeout passed (one timer, not one per poll).
    private var sweeper: Task<Void, Never>?
    /// Delivers the visibility reports to their observer; ended by `releaseAll()`.
    private var visibilityDelivery: Task<Void, Never>?
    private static let sweepInterval = Duration.milliseconds(250)

    private let loop: EventLoop
    /// Time since the feed began, on the injected clock (tests run timeouts in virtual time).
    private let elapsed: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    /// The finishing step every answer takes (the app's security headers), applied once to each
    /// shared answer before its head is encoded for every poll it goes to (the core writes
    /// precomposed answers as they are).
    private let finish: @Sendable (inout HTTPResponse) -> Void

    /// The feed runs on the HTTP server's loop, the thread that reads and writes the polls' sockets.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        loop.asUnownedSerialExecutor()
    }

    public init(epoch: String, loop: EventLoop, maxEvents: Int = 1000, maxAge: Duration = .seconds(600),
                clock: some Clock<Duration> = ContinuousClock(), finish: @escaping @Sendable (inout HTTPResponse) -> Void = { _ in }) {
        self.loop = loop
        let start = clock.now
        self.elapsed = { start.duration(to: clock.now) }
        self.sleep = { try await clock.sleep(for: $0) }
        self.finish = finish
        self.epoch = epoch
        self.maxEvents = maxEvents
        self.maxAge = maxAge
    }

    /// Told, in order, whenever it changes whether any tab is visible (the engine's lifecycle): at
    /// once when a visible tab's poll parks, and when no visible poll has parked for a whole sweep
    /// interval (a quarter of a second), which a tab between an answer and its next poll never is.
    /// One task delivers the reports; a slow observer gets the latest state, not a backlog.
    public func onVisibilityChanged(_ observer: @escaping @Sendable (Bool) async -> Void) {
        visibilityReports?.finish()
        visibilityDelivery?.cancel()
        let (reports, continuation) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(1))
        visibilityReports = continuation
        visibilityDelivery = Task {
            for await visible in reports {
                await observer(visible)
            }
        }
    }

    public var currentSeq: Int { seq }

    /// A poll answered with a reset, counted by whoever answers it: the loop hands a reset to the
    /// poll's route, which asks `poll` again before it answers.
    func countReset() {
        counters.polls += 1
        counters.resets += 1
    }

    /// Runs `body` on the feed's executor, the loop thread (for callers that are elsewhere).
    func onItsExecutor<T: Sendable>(_ body: @Sendable (isolated EventFeed) -> T) -> T {
        body(self)
    }

    public func statistics() -> FeedCounters {
        var snapshot = counters
        snapshot.parkedPolls = parked.count
        snapshot.bufferedEvents = buffer.count
        return snapshot
    }

    /// Appends an event and wakes every parked poll.
    @discardableResult
    public func publish<Data: Encodable>(_ type: String, _ data: Data) -> Int {
        publish(type, json: Self.json(data))
    }

    /// An event's data as the feed writes it: keys sorted, slashes as they are, dates as the
    /// protocol spells them.
    nonisolated static func json<Data: Encodable>(_ data: Data) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.string(date))
        }
        return (try? encoder.encode(data)).map(Array.init) ?? Array("null".utf8)
    }

    /// Appends an event whose data is JSON already, and wakes every parked poll.
    @discardableResult
    public func publish(_ type: String, json data: [UInt8]) -> Int {
        seq += 1
        var json = JSONWriter(capacity: 48 + type.utf8.count + data.count)
        json.raw(#"{"seq":"#)
        json.number(seq)
        json.raw(#","type":"#)
        json.string(type)
        json.raw(#","data":"#)
        json.raw(bytes: data)
        json.raw("}")
        buffer.append((seq, elapsed(), json.bytes))
        trim()
        counters.published += 1
        wakeAll()
        return seq
    }

    private func trim() {
        let now = elapsed()
        while let first = buffer.first, buffer.count > maxEvents || now - first.at > maxAge {
            buffer.removeFirst()
        }
    }

    /// One pass over the parked polls: answer the live ones, drop the ones whose client left.
    /// Polls waiting since the same seq (usually all of them) share one answer.
    private func wakeAll() {
        let started = ContinuousClock.now  // the real cost of the fan-out, for /metrics
        var answered = 0
        var answers: [Int: HTTPResponse] = [:]
        // A request the client pipelined behind its poll is read as the answer is written, inside
        // this pass: a poll it parks goes into the emptied `parked` and waits for the next publish.
        swap(&parked, &waking)
        visibleParked = 0
        for (_, poll) in waking {
            let response: HTTPResponse
            if let shared = answers[poll.since] {
                response = shared
            } else {
                response = answer(after: poll.since)
                answers[poll.since] = response
            }
            // False for a poll whose client left before this pass (nobody to answer).
            if poll.held.complete(with: response) { answered += 1 }
        }
        waking.removeAll(keepingCapacity: true)
        counters.pollsWoken += answered
        if answered > 0 {
            // Answers to held polls are written inline on this thread, so this is the whole fan-out.
            let took = ContinuousClock.now - started
            counters.wakeSeconds.observe(took.inSeconds)
        }
    }

    /// The outcome of `GET /api/poll`: an answer now, or a poll to hold.
    public enum PollOutcome: Sendable {
        case now(HTTPResponse)
        case held(HeldResponse)
        /// The client needs the whole state again (not counted here: see `countReset`).
        case reset
    }

    /// Whether a poll with these parameters gets a reset (which needs the async snapshot).
    private func needsReset(since: Int, epoch clientEpoch: String?) -> Bool {
        trim()
        let oldest = buffer.first?.seq ?? (seq + 1)
        let foreignEpoch = clientEpoch.map { $0 != epoch } ?? false
        return foreignEpoch || since > seq || (since < oldest - 1 && since < seq)
    }

    /// Answers at once when there is something after `since`; parks the poll otherwise.
    public func poll(since: Int, epoch clientEpoch: String?, timeout: Duration, visible: Bool) -> PollOutcome {
        // No epoch at all is a client that does not know one yet; another epoch is another launch.
        if needsReset(since: since, epoch: clientEpoch) { return .reset }
        counters.polls += 1
        if since < seq {
            return .now(answer(after: since))
        }
        let held = HeldResponse(onAbandoned: onAbandoned())
        parked[ObjectIdentifier(held)] = ParkedPoll(since: since, visible: visible, held: held, deadline: elapsed() + timeout)
        startSweeper()
        if visible {
            visibleParked += 1
            visibleParkedSinceSweep = true
            if !reportedVisible {
                reportedVisible = true
                visibilityReports?.yield(true)
            }
        }
        return .held(held)
    }

    private func onAbandoned() -> @Sendable (HeldResponse) -> Void {
        if let abandonmentHandler { return abandonmentHandler }
        let loop = self.loop
        let handler: @Sendable (HeldResponse) -> Void = { [weak self] held in
            // A connection that closes tells so on the loop thread, this feed's own executor:
            // dropping the poll there costs no task (ten thousand tabs closing at once, a restart).
            guard let self else { return }
            if loop.inEventLoop {
                self.assumeIsolated { $0.abandoned(held) }
            } else {
                Task { await self.abandoned(held) }
            }
        }
        abandonmentHandler = handler
        return handler
    }

    private func startSweeper() {
        guard sweeper == nil else { return }
        let sleep = self.sleep
        sweeper = Task { [weak self] in
            while !Task.isCancelled {
                try? await sleep(Self.sweepInterval)
                guard let self, await self.expireDue() else { return }
            }
        }
    }

    /// Answers the polls whose timeout has passed and tells whether the visible tabs are gone;
    /// returns false (ending the sweeper) when no poll is left and no tab is thought visible.
    private func expireDue() -> Bool {
        let now = elapsed()
        for (id, poll) in parked where poll.deadline <= now {
            _ = unpark(id)
            counters.timeouts += 1
            poll.held.complete(with: answer(after: poll.since))
        }
        if reportedVisible && visibleParked == 0 && !visibleParkedSinceSweep {
            reportedVisible = false
            visibilityReports?.yield(false)
        }
        visibleParkedSinceSweep = false
        if parked.isEmpty && !reportedVisible {
            sweeper = nil
            return false
        }
        return true
    }

    private func abandoned(_ held: HeldResponse) {
        // `held` is alive here, so no other response can have its identifier.
        guard unpark(ObjectIdentifier(held)) != nil else { return }
        counters.abandoned += 1
    }

    private func unpark(_ id: ObjectIdentifier) -> ParkedPoll? {
        guard let poll = parked.removeValue(forKey: id) else { return nil }
        if poll.visible { visibleParked -= 1 }
        return poll
    }

    /// Ends every parked poll with what it has, and the feed's own tasks (for shutdown).
    public func releaseAll() {
        for (_, poll) in parked {
            poll.held.complete(with: answer(after: poll.since))
        }
        parked.removeAll()
        visibleParked = 0
        sweeper?.cancel()
        sweeper = nil
        visibilityReports?.finish()
        visibilityReports = nil
        visibilityDelivery?.cancel()
        visibilityDelivery = nil
    }

    private func answer(after since: Int) -> HTTPResponse {
        var body = Array(#"{"epoch":""#.utf8) + Array(epoch.utf8) + Array(#"","seq":"#.utf8) + Array(String(seq).utf8)
        body += Array(#","events":["#.utf8)
        // Seqs in the buffer are consecutive, so the first one after `since` is found by arithmetic.
        let start = max(0, since + 1 - (buffer.first?.seq ?? since + 1))
        for index in start..<buffer.count {
            if index > start { body.append(UInt8(ascii: ",")) }
            body += buffer[index].json
        }
        body += Array("]}".utf8)
        var response = HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: body)
        finish(&response)
        return response.precomposed()
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
    /// How long a publish took to answer every parked poll (passes that answered at least one).
    public var wakeSeconds = Histogram(bounds: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5])
}
