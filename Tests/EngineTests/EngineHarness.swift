import Engine
import Foundation
import Store
import TestSupport
import Upstream

/// An engine wired to fakes: virtual time, a scripted upstream, a memory store, a switchable network.
struct EngineHarness {
    let clock = ManualClock()
    let upstream: FakeUpstream
    let store: MessageStore
    /// The store as the engine sees it: the same store, with a gate a test can close.
    let gate: GatedStore
    let recorder = EventRecorder()
    let network = FakeNetwork()
    let engine: SyncEngine

    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// `online`: whether the network is up when the engine is made.
    init(options: EngineOptions = EngineOptions(alwaysOn: true), settings: FakeUpstream.Settings = FakeUpstream.Settings(),
         seed: UInt64 = 1, online: Bool = true) throws {
        upstream = FakeUpstream(settings)
        network.set(online: online)
        store = try MessageStore(location: .memory)
        gate = GatedStore(store)
        let clock = self.clock
        let recorder = self.recorder
        engine = SyncEngine(
            store: gate, upstream: upstream, options: options,
            environment: EngineEnvironment(
                clock: clock,
                now: { Self.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)
                    + Double(clock.now.offset.components.attoseconds) / 1e18) },
                random: TestRandom(seed: seed),
                network: network
            ),
            emit: { recorder.record($0) }
        )
    }

    /// Seconds of virtual time since the start.
    var elapsed: TimeInterval {
        Double(clock.now.offset.components.seconds) + Double(clock.now.offset.components.attoseconds) / 1e18
    }
}

/// A `messages` answer: ids for the primary (user 1) and linked (user 2) streams.
func answer(primary: [Int64] = [], linked: [Int64] = [], extra: [String: [Int64]] = [:], textLength: Int = 8) -> MessagesAnswer {
    func list(_ ids: [Int64]) -> [UpstreamMessage] {
        ids.map { UpstreamMessage(id: $0, chatId: 1, sender: "s", text: String(repeating: "t", count: textLength), sentAt: "2026-11-29T12:00:00.000Z") }
    }
    var messages: [String: [UpstreamMessage]] = [:]
    if !primary.isEmpty { messages["1"] = list(primary) }
    if !linked.isEmpty { messages["2"] = list(linked) }
    for (key, ids) in extra { messages[key] = list(ids) }
    return MessagesAnswer(messages: messages)
}

/// Lets other tasks run until `condition` holds; for state changes with no event to await.
/// Bounded, so a bug fails the test instead of hanging it.
func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<100_000 {
        if await condition() { return true }
        await Task.yield()
    }
    return false
}

/// The cursors as this project's protocol sees them: ids, 0 for "from the beginning".
extension StreamCursors {
    init(primaryAfter: Int64, linkedAfter: Int64?) {
        self.init(primary: primaryAfter == 0 ? nil : String(primaryAfter), includesLinked: linkedAfter != nil,
                  linked: linkedAfter.flatMap { $0 == 0 ? nil : String($0) })
    }

    var primaryAfter: Int64 { primary.flatMap { Int64($0) } ?? 0 }
    var linkedAfter: Int64? { includesLinked ? (linked.flatMap { Int64($0) } ?? 0) : nil }
}
