import ChatServerClient
import ChatSimulator
import Engine
import Foundation
import HTTPCore
import Store
import Testing
import TestSupport
import Upstream

/// The real engine against the real simulator over loopback, with every fault kind striking 20 %
/// of the calls while messages flow on both accounts.
@Suite("Engine against the simulator")
struct SimulatorSyncTests {
    @Test func linkingAndUnlinkingInQuickSuccessionStaysSilent() async throws {
        let loop = try EventLoop(name: "sim-link-test")
        let simulator = try await SimulatorServer.start(loop: loop)
        let store = try MessageStore(location: .memory)
        let recorder = EventRecorder()
        let engine = SyncEngine(store: store, upstream: ChatServerUpstream(baseURL: URL(string: simulator.url)!, loop: loop, holdSeconds: 25),
                                options: EngineOptions(alwaysOn: true), emit: { recorder.record($0) })
        await engine.activate()
        _ = await recorder.connectionState(.live)
        // As a person clicks Unlink, Link, Unlink, Link: twice in a row, then in a burst.
        for linked in [false, true, false, true] {
            await simulator.simulator.setLinked(linked)
            try await Task.sleep(for: .milliseconds(100))
        }
        for linked in [false, true, false, true] {
            await simulator.simulator.setLinked(linked)
        }
        let finalLinked = await simulator.simulator.stats().linkedUserId
        await simulator.simulator.publish(account: "linked", count: 1)
        await recorder.waitUntil { events in
            events.contains { if case .messages(.linked, _, _, _, _) = $0 { true } else { false } }
        }
        #expect(try await store.accountIDs().linkedUserId == finalLinked)
        let refused = recorder.events.contains { if case .problemRaised(let problem) = $0 { problem.kind == .tokenRefused } else { false } }
        #expect(!refused, "no token-refused error for session changes")
        #expect(await engine.connectionStatus().state == .live)
        await engine.stop()
    }

    /// What was there before the first sync is history (no chat unread); what is published
    /// after it raises its chat's count. The simulator's chats carry names.
    @Test func historyIsReadAndLiveMessagesAreUnreadInNamedChats() async throws {
        let loop = try EventLoop(name: "sim-unread-test")
        let simulator = try await SimulatorServer.start(loop: loop)
        await simulator.simulator.publish(account: "primary", count: 30)
        let store = try MessageStore(location: .memory)
        let recorder = EventRecorder()
        let engine = SyncEngine(store: store, upstream: ChatServerUpstream(baseURL: URL(string: simulator.url)!, loop: loop, holdSeconds: 25),
                                options: EngineOptions(alwaysOn: true), emit: { recorder.record($0) })
        await engine.activate()
        await recorder.waitUntil { events in
            events.contains { if case .messages(.primary, let messages, _, _, _) = $0 { messages.contains { $0.id == 30 } } else { false } }
        }
        #expect(try await store.chats(of: .primary).map(\.unread).reduce(0, +) == 0, "history is not unread")
        await simulator.simulator.publish(account: "primary", count: 12)
        await recorder.waitUntil { events in
            events.contains { if case .messages(.primary, let messages, .live, _, _) = $0 { messages.contains { $0.id == 42 } } else { false } }
        }
        let chats = try await store.chats(of: .primary)
        #expect(chats.map(\.unread).reduce(0, +) == 12)
        #expect(chats.allSatisfy { $0.name == ChatSimulator.chatName($0.id) && $0.name != nil })
        await engine.stop()
    }

    @Test func fiveThousandMessagesPerAccountThroughTwentyPercentFaultsAreStoredExactlyOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-sync-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let loop = try EventLoop(name: "sim-test")
        let simulator = try await SimulatorServer.start(
            configuration: SimulatorConfiguration(seed: 7, maxBatch: 50, slowDelay: .milliseconds(50), maxHold: .seconds(1)), loop: loop)
        let store = try MessageStore(location: .file(folder + "/store.sqlite"))
        let recorder = EventRecorder()
        let options = EngineOptions(alwaysOn: true, backoff: Backoff(base: .milliseconds(5), cap: .milliseconds(50)), holdSeconds: 1,
                                    importantRetryDelays: [.milliseconds(5), .milliseconds(10)], anotherPollerWait: .milliseconds(50))
        let engine = SyncEngine(store: store, upstream: ChatServerUpstream(baseURL: URL(string: simulator.url)!, loop: loop, holdSeconds: 1),
                                options: options, emit: { recorder.record($0) })
        await engine.activate()

        let perAccount = 5000
        let faults = Task {
            // Only the modes that can strike the engine's polls: `decline` and `refuse-send`
            // touch purchases and sends, which this test does not make.
            var modes = FaultMode.allCases.filter { ![FaultMode.none, .decline, .refuseSend].contains($0) }
            while !Task.isCancelled {
                for mode in modes {
                    await simulator.simulator.setFaults(FaultSettings(mode: mode, rate: 0.2))
                    try? await Task.sleep(for: .milliseconds(40))
                }
                modes.shuffle()
            }
        }
        for round in 0..<(perAccount / 100) {
            if round == perAccount / 100 - 1 {
                // The last round waits until faults have really struck, so the engine cannot
                // finish the work before the faults reached it however fast this machine is.
                for _ in 0..<12_000 where await simulator.simulator.stats().faultsInjected <= 10 {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            await simulator.simulator.publish(account: "primary", count: 100)
            await simulator.simulator.publish(account: "linked", count: 100)
            try await Task.sleep(for: .milliseconds(10))
        }

        // Done when every published id has reached the feed (a safety net fails a hang after 120 s).
        let arrived = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await recorder.waitUntil { events in
                    Self.delivered(events, "primary").count >= perAccount && Self.delivered(events, "linked").count >= perAccount
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(120))
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        faults.cancel()
        _ = await faults.value
        await engine.stop()
        let counters = await engine.engineCounters()
        let stats = await simulator.simulator.stats()
        #expect(arrived, "not everything arrived; counters \(counters)")
        #expect(stats.faultsInjected > 10, "faults really struck: \(stats.faultsInjected)")
        #expect(counters.pollsFailed > 3, "and the engine really saw failures: \(counters.pollsFailed)")

        for account in ["primary", "linked"] {
            let ids = Self.delivered(recorder.events, account)
            #expect(ids.count == perAccount, "\(account): the feed showed \(ids.count) ids for \(perAccount) sent")
            #expect(Set(ids).count == ids.count, "\(account): the feed never repeats a message")
            #expect(Set(ids) == Set(1...Int64(perAccount)))
        }
        let sent = await simulator.simulator.sent()
        let primary = try await store.messages(of: .primary, limit: 100_000).messages.map(\.id)
        let linked = try await store.messages(of: .linked, limit: 100_000).messages.map(\.id)
        #expect(primary.sorted() == sent.primary, "every sent primary message stored once")
        #expect(linked.sorted() == sent.linked, "every sent linked message stored once")
        #expect(try await store.integrityCheck())

        await simulator.server.shutdown(gracePeriod: .milliseconds(100))
        await loop.shutdown()
    }

    static func delivered(_ events: [EngineEvent], _ account: String) -> [Int64] {
        events.flatMap { event -> [Int64] in
            if case let .messages(role, messages, _, _, _) = event, role.description == account { return messages.map(\.id) }
            return []
        }
    }
}
