import Engine
import Foundation
import Lifecycle
import HTTPCore
import Recovery
import Store
import Synchronization
import Testing
import Upstream
@testable import DashboardApp

/// An upstream that signs in with a password and sells storage, scripted by the test: it records
/// the passwords it was handed and the purchase keys it saw.
final class ScriptedAccountUpstream: UpstreamAPI, PasswordSignIn {
    let location = "fake://account"
    let passwords = Mutex<[String]>([])
    let withdrawals = Mutex(0)
    let purchaseKeys = Mutex<[String]>([])
    /// What each purchase answers, in order (a quota, or an error); the last one repeats.
    let purchaseAnswers: Mutex<[Result<Int64, UpstreamError>]>

    init(purchaseAnswers: [Result<Int64, UpstreamError>] = [.success(20_000_000)]) {
        self.purchaseAnswers = Mutex(purchaseAnswers)
    }

    func createSession() async throws(UpstreamError) -> UpstreamSession {
        UpstreamSession(token: "t", primaryUserId: 1, linkedUserId: nil, storageQuotaBytes: 1000)
    }

    func lastMessageInfo(token: String) async throws(UpstreamError) -> LastMessageInfo? { nil }

    func messages(token: String, after cursors: StreamCursors, wait: PollWait) async throws(UpstreamError) -> MessagesAnswer {
        throw .unreachable("this upstream is never polled")
    }

    func purchaseStorage(token: String, bytes: Int64, idempotencyKey: String) async throws(UpstreamError) -> Int64 {
        purchaseKeys.withLock { $0.append(idempotencyKey) }
        let answer = purchaseAnswers.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
        return try answer.get()
    }

    func signInAgain(password: String) { passwords.withLock { $0.append(password) } }
    func withdrawTypedPassword() { withdrawals.withLock { $0 += 1 } }
}

/// The recovery answers say only what the code knows: a password is used only by the attempt that
/// was accepted, and a purchase whose answer was lost is said to be unknown, not uncharged.
@Suite("Recovery tells the truth")
struct RecoveryTruthTests {
    static let loop = try! EventLoop(name: "truth-test")

    struct World {
        let upstream: ScriptedAccountUpstream
        let store: MessageStore
        let services: DashboardServices
        let background: ServiceGroup
        let app: DashboardApp
        let attempter: EngineAttempter
    }

    private func world(_ upstream: ScriptedAccountUpstream = ScriptedAccountUpstream(), quota: Int64? = nil) async throws -> World {
        let store = try MessageStore(location: .memory)
        let secrets = LaunchSecrets()
        // Never activated: the attempts are what is looked at.
        let services = await DashboardServices.assemble(store: store, reader: nil, epoch: secrets.epoch, loop: Self.loop, upstream: UpstreamAccess(upstream), simulator: nil) { emit in
            SyncEngine(store: store, upstream: upstream, options: EngineOptions(quotaOverride: quota), emit: emit)
        }
        let app = DashboardApp(port: 8080, staticFiles: try StaticFiles(root: NSTemporaryDirectory()), services: services, secrets: secrets)
        return World(upstream: upstream, store: store, services: services, background: ServiceGroup(services.background), app: app,
                     attempter: EngineAttempter(engine: services.engine, store: store, upstream: UpstreamAccess(upstream)))
    }

    private func postAttempt(_ world: World, errorID: String, body: String, key: String) async throws -> HTTPResponse {
        let headers: HTTPHeaders = ["Host": "127.0.0.1:8080", "Authorization": "Bearer \(world.app.secrets.accessToken)",
                                    "X-CSRF-Token": world.app.secrets.csrfToken, "Content-Type": "application/json", "Idempotency-Key": key]
        let request = HTTPRequest(method: "POST", target: "/api/errors/\(errorID)/attempts", headers: headers, body: Array(body.utf8))
        return try await world.app.respond(to: request, context: RequestContext(remoteAddress: SocketAddress(host: "127.0.0.1", port: 5),
                                                                                 localAddress: SocketAddress(host: "127.0.0.1", port: 8080),
                                                                                 connectionID: 1))
    }

    @Test func aTypedPasswordIsHandedOverOnlyByAnAcceptedAttemptAndTakenBackWhenItFails() async throws {
        let world = try await world()
        let refused = ErrorCatalog.error(for: EngineProblem(kind: .tokenRefused, debug: "401"), at: Date(), signsIn: true)
        let error = await world.services.registry.raise(refused)
        #expect(error.options.map(\.id) == [.signIn, .stopSyncing])
        #expect(error.option(.stopSyncing)?.title == "Stop syncing", "titled by what it does")

        let unknown = try await postAttempt(world, errorID: "e-nothing", body: #"{"option": "sign-in", "password": "p1"}"#, key: "a")
        #expect(unknown.status == .notFound)
        let wrongOption = try await postAttempt(world, errorID: error.id, body: #"{"option": "buy-space", "password": "p2"}"#, key: "b")
        #expect(wrongOption.status == .unprocessableContent)
        #expect(world.upstream.passwords.withLock { $0 }.isEmpty, "refused attempts hand nothing over")

        let accepted = try await postAttempt(world, errorID: error.id, body: #"{"option": "sign-in", "password": "p3"}"#, key: "c")
        #expect(accepted.status == .ok)
        #expect(world.upstream.passwords.withLock { $0 } == ["p3"])
        #expect(world.upstream.withdrawals.withLock { $0 } == 1, "the try did not get through: the password is not kept for later")
        #expect(!String(decoding: accepted.body, as: UTF8.self).contains("p3"))
    }

    private func outOfSpace(_ world: World) async -> UserFacingError {
        let problem = EngineProblem(kind: .outOfSpace, debug: "quota", usage: StorageUsage(usedBytes: 900, quotaBytes: 1000), neededBytes: 500)
        return await world.services.registry.raise(ErrorCatalog.outOfSpace(problem, at: Date(), freeSpacePlan: nil))
    }

    @Test func aPurchaseWhoseAnswerWasLostIsUnknownAndTryingAgainUsesTheSameKey() async throws {
        let upstream = ScriptedAccountUpstream(purchaseAnswers: [.failure(.unreachable("connection cut mid-answer")), .success(20_000_000)])
        let world = try await world(upstream, quota: 1000)
        let error = await outOfSpace(world)
        let lost = try await world.services.registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: "click-1")
        #expect(lost.status == .failed)
        let reason = try #require(lost.error?.lastFailedAttempt?.reason)
        #expect(reason == ErrorCatalog.purchaseOutcomeUnknown)
        #expect(!reason.contains("Nothing was charged") && reason.contains("not known whether it went through"))
        #expect(reason.contains("never charged twice"))

        _ = try await world.services.registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: "click-2")
        let keys = upstream.purchaseKeys.withLock { $0 }
        #expect(keys.count == 2 && keys[0] == keys[1], "the second click repeats the same purchase: \(keys)")
        #expect(try await world.store.purchasedBytes() == ErrorCatalog.purchaseBytes(neededBytes: 500), "credited once")
    }

    @Test func aPurchaseAnsweredAgainIsCreditedOnceToTheLocalQuota() async throws {
        let world = try await world(ScriptedAccountUpstream(), quota: 1000)
        let error = await outOfSpace(world)
        _ = try await world.services.registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: "click-1")
        // The error is still open (syncing does not run here), so its next purchase is the same one.
        _ = try await world.services.registry.attempt(errorID: error.id, postedOption: "buy-space", idempotencyKey: "click-2")
        let bought = ErrorCatalog.purchaseBytes(neededBytes: 500)
        #expect(try await world.store.purchasedBytes() == bought)
        #expect(await world.store.storageUsage().quotaBytes == 1000 + bought)
    }

    @Test func aPurchaseThatCouldNotEvenStartSaysNothingWasCharged() async throws {
        final class NoSession: UpstreamAPI {
            let location = "fake://down"
            func createSession() async throws(UpstreamError) -> UpstreamSession { throw .unreachable("refused") }
            func lastMessageInfo(token: String) async throws(UpstreamError) -> LastMessageInfo? { nil }
            func messages(token: String, after cursors: StreamCursors, wait: PollWait) async throws(UpstreamError) -> MessagesAnswer {
                throw .unreachable("refused")
            }
            func purchaseStorage(token: String, bytes: Int64, idempotencyKey: String) async throws(UpstreamError) -> Int64 {
                Issue.record("no purchase without a session")
                throw .unreachable("refused")
            }
        }
        let store = try MessageStore(location: .memory)
        let engine = SyncEngine(store: store, upstream: NoSession())
        let attempter = EngineAttempter(engine: engine, store: store, upstream: UpstreamAccess(NoSession()))
        let problem = EngineProblem(kind: .outOfSpace, debug: "quota", usage: StorageUsage(usedBytes: 900, quotaBytes: 1000), neededBytes: 500)
        let error = ErrorCatalog.outOfSpace(problem, at: Date(), freeSpacePlan: nil)
        guard case .failed(let shown) = await attempter.attempt(try #require(error.option(.buySpace)), for: error, input: AttemptInput()) else {
            Issue.record("expected a failure")
            return
        }
        #expect(shown.lastFailedAttempt?.reason.contains("Nothing was sent, so nothing was charged") == true)
    }
}
