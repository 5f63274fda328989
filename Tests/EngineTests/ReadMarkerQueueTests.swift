import Engine
import Testing

/// The markers the queue sends, in order, and a gate that holds each send until the test opens it.
private actor MarkerLog {
    private(set) var sent: [String] = []
    private var arrivals: [CheckedContinuation<Void, Never>] = []
    private var gates: [CheckedContinuation<Void, Never>] = []

    func send(_ place: ReadPlace, _ event: String, gated: Bool) async {
        sent.append("\(place.chatId)\(place.thread.map { "/" + $0 } ?? ""):\(event)")
        arrivals.forEach { $0.resume() }
        arrivals = []
        if gated { await withCheckedContinuation { gates.append($0) } }
    }

    /// Returns once `count` markers have been sent (or begun to be).
    func waitForSent(_ count: Int) async {
        while sent.count < count { await withCheckedContinuation { arrivals.append($0) } }
    }

    func openGate() {
        if !gates.isEmpty { gates.removeFirst().resume() }
    }
}

@Suite struct ReadMarkerQueueTests {
    @Test func markersGoOutInTheOrderTheChatsWereReadWithEachChatsNewest() async {
        let log = MarkerLog()
        let queue = ReadMarkerQueue { place, event in await log.send(place, event, gated: false) }
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$a")
        await queue.markRead(ReadPlace(chatId: 2), eventId: "$b")
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$c")
        let running = Task { await queue.run() }
        await log.waitForSent(2)
        #expect(await log.sent == ["1:$c", "2:$b"])
        #expect(await queue.waiting == 0)
        running.cancel()
        await running.value
    }

    @Test func aChatReadAgainWhileItsMarkerIsOnTheWayIsSentAgainAfterIt() async {
        let log = MarkerLog()
        let queue = ReadMarkerQueue { place, event in await log.send(place, event, gated: true) }
        let running = Task { await queue.run() }
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$a")
        await log.waitForSent(1)
        // While "$a" is on its way: two newer reads of chat 1 become one marker, sent after it.
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$b")
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$c")
        #expect(await queue.waiting == 1)
        await log.openGate()
        await log.waitForSent(2)
        await log.openGate()
        #expect(await log.sent == ["1:$a", "1:$c"])
        running.cancel()
        await running.value
    }

    @Test func aThreadIsAPlaceApartFromItsChatsMainTimeline() async {
        let log = MarkerLog()
        let queue = ReadMarkerQueue { place, event in await log.send(place, event, gated: false) }
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$a")
        await queue.markRead(ReadPlace(chatId: 1, thread: "$root"), eventId: "$r1")
        await queue.markRead(ReadPlace(chatId: 1, thread: "$root"), eventId: "$r2")
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$b")
        #expect(await queue.waiting == 2)
        let running = Task { await queue.run() }
        await log.waitForSent(2)
        // The main timeline's newest and the thread's newest, each in the order first read.
        #expect(await log.sent == ["1:$b", "1/$root:$r2"])
        running.cancel()
        await running.value
    }

    @Test func cancellingTheRunEndsItWithMarkersStillWaiting() async {
        let queue = ReadMarkerQueue { _, _ in }
        let running = Task { await queue.run() }
        running.cancel()
        await running.value
        await queue.markRead(ReadPlace(chatId: 1), eventId: "$a")
        #expect(await queue.waiting == 1)
    }
}
