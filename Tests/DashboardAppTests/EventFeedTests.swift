import Foundation
import Synchronization
@testable import HTTPCore
import Testing
import TestSupport
@testable import DashboardApp

@Suite("Event feed")
struct EventFeedTests {
    static let loop = try! EventLoop(name: "feed-test")

    private func events(_ response: HTTPResponse) throws -> (seq: Int, types: [String]) {
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let events = body["events"] as? [[String: Any]] ?? []
        return (body["seq"] as? Int ?? -1, events.compactMap { $0["type"] as? String })
    }

    @Test func eventsAfterSinceComeAtOnce() async throws {
        let feed = EventFeed(epoch: "E", loop: Self.loop)
        await feed.publish("a", ["x": 1])
        await feed.publish("b", ["x": 2])
        guard case .now(let response) = await feed.poll(since: 1, epoch: "E", timeout: .seconds(1), visible: false) else {
            Issue.record("expected an answer now")
            return
        }
        #expect(try events(response) == (2, ["b"]))
    }

    @Test(arguments: [("other", 0), ("E", 99)])
    func aForeignEpochOrASeqFromTheFutureResets(_ epoch: String, _ since: Int) async {
        let feed = EventFeed(epoch: "E", loop: Self.loop)
        await feed.publish("a", ["x": 1])
        guard case .reset = await feed.poll(since: since, epoch: epoch, timeout: .seconds(1), visible: false) else {
            Issue.record("expected a reset")
            return
        }
    }

    @Test func aSinceThatFellOutOfTheBufferResets() async {
        let feed = EventFeed(epoch: "E", loop: Self.loop, maxEvents: 3)
        for index in 1...10 { await feed.publish("e", ["i": index]) }
        guard case .reset = await feed.poll(since: 2, epoch: "E", timeout: .seconds(1), visible: false) else {
            Issue.record("events 3...7 are gone: reset")
            return
        }
        guard case .now = await feed.poll(since: 7, epoch: "E", timeout: .seconds(1), visible: false) else {
            Issue.record("8...10 are still there")
            return
        }
    }

    @Test func aParkedPollWakesOnPublishAndGoneClientsAreSweptInThatPass() async throws {
        // A clock that stands still: on a starved machine the polls' 30 s would otherwise run out
        // before the publish, and the test would see a timeout's empty answer.
        let feed = EventFeed(epoch: "E", loop: Self.loop, clock: ManualClock())
        guard case .held(let live) = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: true),
              case .held(let gone) = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: false) else {
            Issue.record("expected parked polls")
            return
        }
        #expect(await feed.statistics().parkedPolls == 2)
        let goneTask = Task { await gone.value() }
        goneTask.cancel()
        #expect(await goneTask.value == nil)
        await feed.publish("connection", ["state": "live"])
        let answer = try #require(await live.value())
        #expect(try events(answer) == (1, ["connection"]))
        #expect(await feed.statistics().parkedPolls == 0)
        #expect(await feed.statistics().wakeSeconds.count == 1)
    }

    @Test func aPublishWithNoParkedPollIsNoWakePass() async {
        let feed = EventFeed(epoch: "E", loop: Self.loop)
        await feed.publish("connection", ["state": "live"])
        #expect(await feed.statistics().wakeSeconds.count == 0)
    }

    @Test func aVisibleTabIsReportedAtOnceAndGoneOnlyAfterAWholeSweepIntervalWithoutAVisiblePoll() async throws {
        let clock = ManualClock()
        let feed = EventFeed(epoch: "E", loop: Self.loop, clock: clock)
        let reports = Mutex<[Bool]>([])
        let (heard, sink) = AsyncStream.makeStream(of: Void.self)
        await feed.onVisibilityChanged { visible in
            reports.withLock { $0.append(visible) }
            sink.yield()
        }
        var heardIterator = heard.makeAsyncIterator()
        func sweep() async {
            await clock.waitForSleepers()
            clock.advance(by: .milliseconds(250))
            await clock.waitForSleepers()
        }

        _ = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: false)
        _ = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: true)
        await heardIterator.next()
        #expect(reports.withLock { $0 } == [true], "a visible poll parking is reported at once")
        _ = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: true)

        // Message after message: each publish answers the polls, a sweep comes before the tab
        // has polled again, and then it does.
        for round in 1...8 {
            await feed.publish("x", ["round": round])
            await sweep()
            _ = await feed.poll(since: round, epoch: "E", timeout: .seconds(30), visible: true)
        }
        #expect(reports.withLock { $0 } == [true], "a tab between an answer and its next poll is not gone")

        // Answered, and no visible poll comes back: gone after a whole interval without one.
        await feed.publish("x", ["round": 9])
        _ = await feed.poll(since: 9, epoch: "E", timeout: .seconds(30), visible: false)
        await sweep()
        await sweep()
        await heardIterator.next()
        #expect(reports.withLock { $0 } == [true, false])
        _ = await feed.poll(since: 9, epoch: "E", timeout: .seconds(30), visible: true)
        await heardIterator.next()
        #expect(reports.withLock { $0 } == [true, false, true], "and visible again when it polls")
    }

    @Test func aClosedTabIsReportedGoneAlthoughNoPollIsLeftToSweep() async throws {
        let clock = ManualClock()
        let feed = EventFeed(epoch: "E", loop: Self.loop, clock: clock)
        let (reports, sink) = AsyncStream.makeStream(of: Bool.self)
        await feed.onVisibilityChanged { sink.yield($0) }
        var iterator = reports.makeAsyncIterator()
        guard case .held(let held) = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: true) else {
            Issue.record("expected a parked poll")
            return
        }
        #expect(await iterator.next() == true)
        let waiting = Task { await held.value() }
        waiting.cancel()
        #expect(await waiting.value == nil)
        for _ in 0..<10_000 where await feed.statistics().parkedPolls > 0 {
            await Task.yield()
        }
        #expect(await feed.statistics().parkedPolls == 0, "the closed tab's poll is dropped")
        for _ in 0..<2 {
            await clock.waitForSleepers()
            clock.advance(by: .milliseconds(250))
        }
        #expect(await iterator.next() == false)
    }

    // MARK: In virtual time

    @Test func aParkedPollIsAnsweredEmptyWhenItsTimeoutPassesAndNotBefore() async throws {
        let clock = ManualClock()
        let feed = EventFeed(epoch: "E", loop: Self.loop, clock: clock)
        guard case .held(let held) = await feed.poll(since: 0, epoch: "E", timeout: .seconds(25), visible: false) else {
            Issue.record("expected a parked poll")
            return
        }
        // The sweeper wakes every 250 ms; once it sleeps again, its pass over the polls is done.
        for _ in 0..<99 {
            await clock.waitForSleepers()
            clock.advance(by: .milliseconds(250))
        }
        await clock.waitForSleepers()
        #expect(await feed.statistics().timeouts == 0, "24.75 s: still held")
        #expect(await feed.statistics().parkedPolls == 1)
        clock.advance(by: .milliseconds(250))
        let answer = try #require(await held.value())
        #expect(try events(answer) == (0, []), "at 25 s: answered with nothing new")
        #expect(await feed.statistics().timeouts == 1)
        #expect(await feed.statistics().parkedPolls == 0)
    }

    @Test func eventsOlderThanTheBufferAgeAreDroppedAndTheirPollGetsAReset() async throws {
        let clock = ManualClock()
        let feed = EventFeed(epoch: "E", loop: Self.loop, maxAge: .seconds(600), clock: clock)
        await feed.publish("a", ["x": 1])
        clock.advance(by: .seconds(599))
        guard case .now(let response) = await feed.poll(since: 0, epoch: "E", timeout: .seconds(1), visible: false) else {
            Issue.record("expected the event at 599 s")
            return
        }
        #expect(try events(response) == (1, ["a"]))
        clock.advance(by: .seconds(2))
        guard case .reset = await feed.poll(since: 0, epoch: "E", timeout: .seconds(1), visible: false) else {
            Issue.record("expected a reset once the event is older than 600 s")
            return
        }
    }

    @Test func everySharedAnswerTakesTheFinishingStepOnce() async throws {
        let finished = Counter()
        let feed = EventFeed(epoch: "E", loop: Self.loop, finish: { response in
            finished.increment()
            response.headers.set("X-Finished", "yes")
        })
        let polls = await (0..<3).asyncMap { _ in await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: false) }
        await feed.publish("a", ["x": 1])
        for outcome in polls {
            guard case .held(let held) = outcome else { Issue.record("expected parked polls"); return }
            let answer = try #require(await held.value())
            #expect(answer.headers["X-Finished"] == "yes")
            #expect(answer.encoded != nil, "written as the same bytes to every poll")
        }
        #expect(finished.value == 1, "three polls waiting on the same seq share one answer")
    }

    /// A connection that closes abandons its held poll on the loop thread, the feed's own
    /// executor: the poll is dropped there and then, with no task in between.
    @Test func aPollAbandonedOnTheLoopIsDroppedAtOnce() async throws {
        let feed = EventFeed(epoch: "E", loop: Self.loop)
        guard case .held(let gone) = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: false),
              case .held = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: false) else {
            Issue.record("expected parked polls")
            return
        }
        let left = try await Self.loop.submit {
            gone.abandon()
            return feed.assumeIsolated { $0.statistics() }
        }
        #expect(left.parkedPolls == 1 && left.abandoned == 1, "dropped before the loop ran anything else")
    }

    /// A connection reads the request its client pipelined behind a poll as soon as that poll's
    /// answer is written, which is inside the wake pass: a poll parked then waits for the next publish.
    @Test func aPollParkedWhileAWakePassWritesWaitsForTheNextPublish() async throws {
        let feed = EventFeed(epoch: "E", loop: Self.loop)
        guard case .held(let first) = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: false) else {
            Issue.record("expected a parked poll")
            return
        }
        let pipelined = Mutex<HeldResponse?>(nil)
        first.attach { _ in
            // Called inline by the wake pass, on the loop thread, as a connection's writer is.
            if case .held(let next) = feed.assumeIsolated({ $0.poll(since: 1, epoch: "E", timeout: .seconds(30), visible: false) }) {
                pipelined.withLock { $0 = next }
            }
        }
        await feed.publish("a", ["x": 1])
        let next = try #require(pipelined.withLock { $0 })
        try #require(await feed.statistics().parkedPolls == 1, "the pass does not drop the poll parked during it")
        await feed.publish("b", ["x": 2])
        let answer = try #require(await next.value())
        #expect(try events(answer) == (2, ["b"]))
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

private extension Range where Bound == Int {
    func asyncMap<T>(_ transform: (Int) async -> T) async -> [T] {
        var results: [T] = []
        for index in self { results.append(await transform(index)) }
        return results
    }
}
