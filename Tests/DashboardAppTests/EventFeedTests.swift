import Foundation
import HTTPCore
import Testing
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
        let feed = EventFeed(epoch: "E", loop: Self.loop)
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

    @Test func whetherAnyVisibleTabIsParkedIsReportedInOrderOnlyWhenItChanges() async throws {
        let feed = EventFeed(epoch: "E", loop: Self.loop)
        let (reports, sink) = AsyncStream.makeStream(of: Bool.self)
        await feed.onVisibilityChanged { sink.yield($0) }
        var iterator = reports.makeAsyncIterator()
        _ = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: true)
        #expect(await iterator.next() == true)
        _ = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: true)
        _ = await feed.poll(since: 0, epoch: "E", timeout: .seconds(30), visible: false)
        await feed.publish("x", ["y": 1])
        #expect(await iterator.next() == false, "a second visible poll is no change; the publish that answers both is")
        _ = await feed.poll(since: 1, epoch: "E", timeout: .seconds(30), visible: true)
        #expect(await iterator.next() == true)
    }
}
