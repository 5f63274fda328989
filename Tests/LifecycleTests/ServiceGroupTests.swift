import Synchronization
import Testing
import TestSupport
@testable import Lifecycle

/// What the services did, in order.
final class Journal: Sendable {
    private let lines = Mutex<[String]>([])
    func note(_ line: String) { lines.withLock { $0.append(line) } }
    var entries: [String] { lines.withLock { $0 } }
}

/// A service that notes it started, waits to be stopped, and notes it stopped.
func recorded(_ name: String, in journal: Journal) -> NamedService {
    NamedService(name) {
        journal.note("start \(name)")
        await untilCancelled()
        journal.note("stop \(name)")
    }
}

/// A wait that cancellation does not end: only `open()` does.
final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { waiter in
            let resumeNow = state.withLock { state in
                if state.isOpen { return true }
                state.waiters.append(waiter)
                return false
            }
            if resumeNow { waiter.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }
}

@Suite("Service group")
struct ServiceGroupTests {
    @Test func servicesStopInTheReverseOrderOfTheListWhenAsked() async {
        let journal = Journal()
        let group = ServiceGroup(["store", "engine", "server"].map { recorded($0, in: journal) })
        let (signal, send) = AsyncStream<String>.makeStream()
        async let ending = group.wait { for await name in signal { return name }; return "" }
        while journal.entries.count < 3 { await Task.yield() }
        send.yield("SIGTERM")
        #expect(await ending == .asked("SIGTERM"))
        #expect(await group.stop(within: .seconds(2)).isEmpty)
        #expect(journal.entries.suffix(3) == ["stop server", "stop engine", "stop store"])
    }

    @Test func aServiceThatEndsByItselfStopsTheOthersAndSaysWhy() async {
        struct Broken: Error, CustomStringConvertible { var description: String { "the port went away" } }
        let journal = Journal()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let failing = NamedService("server") {
            for await _ in gate { break }
            throw Broken()
        }
        let group = ServiceGroup([recorded("store", in: journal), failing, recorded("feed", in: journal)])
        async let ending = group.wait { await untilCancelled(); return "never asked" }
        while journal.entries.count < 2 { await Task.yield() }
        open.yield()
        #expect(await ending == .serviceEnded(name: "server", error: "the port went away"))
        await group.stop(within: .seconds(2))
        #expect(journal.entries.suffix(2) == ["stop feed", "stop store"])
    }

    @Test func aServiceThatDoesNotStopInTimeIsLeftAndTheOthersStillStop() async {
        let journal = Journal()
        let clock = ManualClock()
        let latch = Latch()
        let stubborn = NamedService("stubborn") {
            journal.note("start stubborn")
            await untilCancelled()
            await latch.wait()  // ignores the request to stop until the test lets it go
        }
        let group = ServiceGroup([recorded("store", in: journal), stubborn], clock: clock)
        while journal.entries.count < 2 { await Task.yield() }
        async let late = group.stop(within: .seconds(2))
        await clock.waitForSleepers(1)
        #expect(!journal.entries.contains("stop store"), "the store waits while the service after it may still use it")
        clock.advance(by: .seconds(2))
        #expect(await late == ["stubborn"])
        #expect(journal.entries.last == "stop store", "the budget spent, the store is stopped anyway")
        latch.open()
    }
}
