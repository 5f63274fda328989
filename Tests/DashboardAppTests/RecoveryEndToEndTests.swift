import ChatServerClient
import ChatSimulator
import Engine
import Foundation
import Lifecycle
import HTTPCore
import Recovery
import Store
import Testing
import TestSupport
import Upstream
@testable import DashboardApp

/// Out of space with the real simulator, engine and store: raised, recovered through the
/// attempts, and nothing lost.
@Suite("Recovery end to end")
struct RecoveryEndToEndTests {
    struct World {
        let loop: EventLoop
        let simulator: SimulatorServer
        let store: MessageStore
        let services: DashboardServices
        let background: ServiceGroup
    }

    /// `quota` nil: the simulator's quota is the one in force (no `--quota`).
    private func world(quota: Int64?, simulatorQuota: Int64 = 50_000_000) async throws -> World {
        let loop = try EventLoop(name: "recovery-test")
        let simulator = try await SimulatorServer.start(configuration: SimulatorConfiguration(linkedAtStart: false, storageQuotaBytes: simulatorQuota),
                                                        loop: loop)
        let store = try MessageStore(location: .memory)
        let options = EngineOptions(alwaysOn: true, backoff: Backoff(base: .milliseconds(5), cap: .milliseconds(20)), holdSeconds: 2,
                                    quotaOverride: quota)
        let upstream = ChatServerUpstream(baseURL: URL(string: simulator.url)!, loop: loop, holdSeconds: 2)
        let services = await DashboardServices.assemble(store: store, reader: nil, epoch: "E", loop: loop, upstream: UpstreamAccess(upstream), simulator: simulator.simulator) { emit in
            SyncEngine(store: store, upstream: upstream, options: options, emit: emit)
        }
        await services.engine.activate()
        return World(loop: loop, simulator: simulator, store: store, services: services, background: ServiceGroup(services.background))
    }

    /// Waits (bounded) until `condition` holds; the engine works on its own tasks meanwhile.
    private func until(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<4000 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    private func outOfSpace(_ world: World) async throws -> UserFacingError {
        #expect(try await until { await world.services.registry.openErrors().contains { $0.kind == .outOfSpace } })
        return try #require(await world.services.registry.openErrors().first { $0.kind == .outOfSpace })
    }

    @Test func buyingSpaceRaisesTheQuotaAndEveryMessageArrivesOnce() async throws {
        let world = try await world(quota: 2000)
        await world.simulator.simulator.publish(account: "primary", count: 40)
        let error = try await outOfSpace(world)
        #expect(error.presentation == .view)
        #expect(error.options.map(\.id) == [.notNow, .buySpace], "nothing stored yet: removing messages cannot make room")
        #expect(await world.services.engine.connectionStatus().state == .paused)
        #expect(await world.store.cursor(for: .primary) == nil, "nothing stored")

        let answer = try await world.services.registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: "k1")
        #expect(answer.status == .recovered)
        #expect(answer.summary == "Added 10 MB of storage: you now have 10 MB. The messages that waited are stored and syncing goes on.",
                "2 KB plus the 10 MB bought")
        #expect(try await until { await world.store.cursor(for: .primary) == "40" })
        let stored = try await world.store.messages(of: .primary, limit: 500).messages.map(\.id).sorted()
        #expect(stored == (await world.simulator.simulator.sent().primary))
        #expect(await world.simulator.simulator.stats().purchases == 1)
        #expect(await world.services.registry.openErrors().isEmpty)
        await world.services.engine.stop()
    }

    @Test func freeingSpaceMakesRoomForTheNextBatch() async throws {
        // About 99 bytes a message: 40 fit into 4,500; 10 more do not, until the oldest go.
        let world = try await world(quota: 4500)
        await world.simulator.simulator.publish(account: "primary", count: 40)
        #expect(try await until { await world.store.cursor(for: .primary) == "40" })
        await world.simulator.simulator.publish(account: "primary", count: 10)
        let error = try await outOfSpace(world)
        let answer = try await world.services.registry.attempt(errorID: error.id, postedOption: "free-space", idempotencyKey: "k")
        #expect(answer.status == .recovered)
        let summary = try #require(answer.summary, "a recovery that says what it removed")
        #expect(summary.hasPrefix("Deleted the ") && summary.contains(" oldest messages (") && summary.contains("to spare"), "\(summary)")
        #expect(try await until { await world.store.cursor(for: .primary) == "50" })
        let usage = await world.store.storageUsage()
        #expect(usage.usedBytes <= 4500)
        let newest = try await world.store.messages(of: .primary, limit: 10).messages.map(\.id)
        #expect(newest == Array((41...50).reversed()), "the new batch is all there")
        await world.services.engine.stop()
    }

    @Test func aDeclinedPaymentIsItsOwnErrorAndTryAgainUsesTheSameKey() async throws {
        let world = try await world(quota: 2000)
        await world.simulator.simulator.publish(account: "primary", count: 40)
        let error = try await outOfSpace(world)
        await world.simulator.simulator.setFaults(FaultSettings(mode: .decline))
        let declined = try await world.services.registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: "k1")
        #expect(declined.status == .failed)
        let next = try #require(declined.error, "a decline")
        #expect(next.kind == .purchaseDeclined)
        #expect(next.options.map(\.id) == [.tryAgain, .dismiss])
        #expect(await world.services.registry.openErrors().map(\.type) == ["/problems/out-of-space", "/problems/purchase-declined"])

        await world.simulator.simulator.setFaults(FaultSettings(mode: .none))
        let retried = try await world.services.registry.attempt(errorID: next.id, postedOption: "try-again", idempotencyKey: "k2")
        #expect(retried.status == .recovered)
        #expect(retried.summary == "Added 10 MB of storage: you now have 10 MB. The messages that waited are stored and syncing goes on.")
        #expect(try await until { await world.store.cursor(for: .primary) == "40" })
        #expect(await world.simulator.simulator.stats().purchases == 1)
        await world.services.engine.stop()
    }

    @Test func cancelTurnsTheViewIntoABannerAndTheEngineStaysPaused() async throws {
        let world = try await world(quota: 2000)
        await world.simulator.simulator.publish(account: "primary", count: 40)
        let error = try await outOfSpace(world)
        let answer = try await world.services.registry.attempt(errorID: error.id, postedOption: "cancel", idempotencyKey: "c")
        #expect(answer.status == .dismissed, "Not now is done as asked, not a failure")
        let banner = try #require(answer.error, "the error stays")
        #expect(banner.id == error.id && banner.presentation == .banner)
        #expect(await world.services.engine.connectionStatus().state == .paused)
        await world.services.engine.stop()
    }

    // MARK: Fill storage (the simulator panel's button)

    private func filler(_ world: World) -> StorageFiller {
        let store = world.store
        return StorageFiller(simulator: world.simulator.simulator, usage: { await store.storageUsage() })
    }

    private func fillsStorage(_ world: World) async throws {
        guard case .success = await filler(world).fill() else { Issue.record("fill refused"); return }
        _ = try await outOfSpace(world)
    }

    private func buySpace(_ world: World) async throws {
        let error = try await outOfSpace(world)
        let answer = try await world.services.registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: UUID().uuidString)
        guard answer.status == .recovered else { Issue.record("the purchase did not recover"); return }
    }

    @Test func fillStorageFillsTheUpstreamsQuotaWithoutShrinkingItBeforeAndAfterBuyingSpace() async throws {
        let world = try await world(quota: nil, simulatorQuota: 200_000)
        await world.simulator.simulator.publish(account: "primary", count: 5)
        #expect(try await until { await world.store.cursor(for: .primary) == "5" })
        try await fillsStorage(world)
        #expect(await world.simulator.simulator.stats().quotaBytes == 200_000, "filled, not shrunk")
        try await buySpace(world)
        let bought = await world.store.storageUsage().quotaBytes ?? 0
        #expect(bought > 10_000_000)
        try await fillsStorage(world)
        #expect(await world.store.storageUsage().quotaBytes == bought, "what was bought stays")
        await world.services.engine.stop()
    }

    @Test func fillStorageWorksUnderAFixedQuotaBeforeAndAfterBuyingSpace() async throws {
        let world = try await world(quota: 3000)
        await world.simulator.simulator.publish(account: "primary", count: 5)
        #expect(try await until { await world.store.cursor(for: .primary) == "5" })
        try await fillsStorage(world)
        try await buySpace(world)
        let announced = await world.simulator.simulator.stats().quotaBytes
        try await fillsStorage(world)
        #expect(await world.simulator.simulator.stats().quotaBytes == announced, "the simulator's quota plays no part under --quota")
        await world.services.engine.stop()
    }

    @Test func fillStorageRefusesToFloodTheSimulatorAndSaysWhy() async throws {
        let world = try await world(quota: 500_000_000)
        #expect(try await until { await world.store.storageUsage().quotaBytes == 500_000_000 })
        guard case .failure(let refusal) = await filler(world).fill() else { Issue.record("expected a refusal"); return }
        #expect(refusal.detail.contains("smaller --quota"))
        #expect(refusal.detail.hasPrefix("500 MB are free"))
        #expect(await world.simulator.simulator.stats().published == 0)
        await world.services.engine.stop()
    }
}

@Suite("Attempts over the API")
struct AttemptsAPITests {
    @Test func aDoubleClickRunsOneAttemptAndTheOtherGets409() async throws {
        let loop = try EventLoop(name: "attempts-test")
        let simulator = try await SimulatorServer.start(configuration: SimulatorConfiguration(linkedAtStart: false), loop: loop)
        let store = try MessageStore(location: .memory)
        let secrets = LaunchSecrets()
        let options = EngineOptions(alwaysOn: true, backoff: Backoff(base: .milliseconds(5), cap: .milliseconds(20)), holdSeconds: 2,
                                    quotaOverride: 2000)
        let upstream = ChatServerUpstream(baseURL: URL(string: simulator.url)!, loop: loop, holdSeconds: 2)
        let services = await DashboardServices.assemble(store: store, reader: nil, epoch: secrets.epoch, loop: loop,
                                                        upstream: UpstreamAccess(upstream), simulator: simulator.simulator) { emit in
            SyncEngine(store: store, upstream: upstream, options: options, emit: emit)
        }
        let background = ServiceGroup(services.background)
        defer { withExtendedLifetime(background) {} }
        await services.engine.activate()
        let fixture = try PublicFixture()
        let app = DashboardApp(port: 8080, staticFiles: try StaticFiles(root: fixture.publicPath), services: services, secrets: secrets)
        await simulator.simulator.publish(account: "primary", count: 40)
        var error: UserFacingError?
        for _ in 0..<4000 where error == nil {
            error = await services.registry.openErrors().first { $0.kind == .outOfSpace }
            if error == nil { try await Task.sleep(for: .milliseconds(5)) }
        }
        let id = try #require(error?.id)
        let context = RequestContext(remoteAddress: SocketAddress(host: "127.0.0.1", port: 1),
                                     localAddress: SocketAddress(host: "127.0.0.1", port: 8080), connectionID: 1)
        func click(_ key: String) async throws -> HTTPResponse {
            try await app.respond(to: HTTPRequest(method: "POST", target: "/api/errors/\(id)/attempts",
                                                  headers: ["Host": "127.0.0.1:8080", "Content-Type": "application/json",
                                                            "Authorization": "Bearer \(secrets.accessToken)",
                                                            "X-CSRF-Token": secrets.csrfToken, "Idempotency-Key": key],
                                                  body: Array(#"{"option":"buy-space"}"#.utf8)), context: context)
        }
        // Two keys, as two rendered buttons would have; an attempt lasts at least 400 ms.
        async let first = click("button-1")
        async let second = click("button-2")
        let statuses = [try await first.status.code, try await second.status.code].sorted()
        #expect(statuses == [200, 409])
        #expect(await simulator.simulator.stats().purchases == 1, "the option ran once")
        await services.engine.stop()
    }

    @Test func aVisiblePollStartsTheEngineAndItsEndStartsTheGrace() async throws {
        let loop = try EventLoop(name: "lifecycle-test")
        let simulator = try await SimulatorServer.start(loop: loop)
        let store = try MessageStore(location: .memory)
        let secrets = LaunchSecrets()
        let upstream = ChatServerUpstream(baseURL: URL(string: simulator.url)!, loop: loop, holdSeconds: 2)
        let services = await DashboardServices.assemble(store: store, reader: nil, epoch: secrets.epoch, loop: loop,
                                                        upstream: UpstreamAccess(upstream), simulator: simulator.simulator) { emit in
            SyncEngine(store: store, upstream: upstream, options: EngineOptions(alwaysOn: false), emit: emit)
        }
        let background = ServiceGroup(services.background)
        defer { withExtendedLifetime(background) {} }
        await services.engine.activate()
        #expect(await services.engine.connectionStatus().state == .stopped, "no tab, no syncing")
        guard case .held = await services.feed.poll(since: 0, epoch: secrets.epoch, timeout: .seconds(30), visible: true) else {
            Issue.record("expected the poll to park")
            return
        }
        var state = ConnectionState.stopped
        for _ in 0..<4000 where state == .stopped {
            state = await services.engine.connectionStatus().state
            if state == .stopped { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(state != .stopped, "a visible tab started syncing")
        await services.engine.stop()
    }

}
