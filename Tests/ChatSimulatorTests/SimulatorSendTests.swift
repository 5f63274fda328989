import Foundation
import HTTPCore
import Synchronization
import Testing
import Upstream
import ChatServerClient
@testable import ChatSimulator

/// `POST /v1/messages` of the built-in simulator (CONTRACT section 11): each key stored once, kept
/// with its world, refusals that say why, and the message back through the next poll.
@Suite("Simulator sends")
struct SimulatorSendTests {
    private func request(_ method: String, _ target: String, token: String?, body: String = "", key: String? = nil) -> HTTPRequest {
        var headers: HTTPHeaders = ["Host": "sim"]
        if let token { headers.add("Authorization", "Bearer \(token)") }
        if let key { headers.add("Idempotency-Key", key) }
        return HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8))
    }

    private func respond(_ simulator: ChatSimulator, _ request: HTTPRequest) async throws -> HTTPResponse {
        try await SimulatorResponder(simulator: simulator).respond(
            to: request, context: RequestContext(remoteAddress: SocketAddress(host: "127.0.0.1", port: 1),
                                                 localAddress: SocketAddress(host: "127.0.0.1", port: 2), connectionID: 1))
    }

    private func session(_ simulator: ChatSimulator) async throws -> UpstreamSession {
        try JSONDecoder().decode(UpstreamSession.self, from: Data(try await respond(simulator, request("POST", "/v1/session", token: nil)).body))
    }

    private func send(_ simulator: ChatSimulator, token: String, user: Int64, chat: Int64 = 2, text: String, key: String?) async throws -> HTTPResponse {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["userId": user, "chatId": chat, "text": text]), as: UTF8.self)
        return try await respond(simulator, request("POST", "/v1/messages", token: token, body: body, key: key))
    }

    private func id(_ response: HTTPResponse) throws -> Int64 {
        struct Answer: Decodable { var id: Int64 }
        return try JSONDecoder().decode(Answer.self, from: Data(response.body)).id
    }

    @Test func aMessageIsKeptOnceUnderItsKeyAndComesBackThroughThePollWithIt() async throws {
        let simulator = ChatSimulator()
        let session = try await session(simulator)
        await simulator.publish(account: "primary", count: 2)
        let first = try await send(simulator, token: session.token, user: session.primaryUserId, text: "hi <b>all</b> 😀", key: "k1")
        #expect(first.status == .ok)
        #expect(try id(first) == 3)
        let again = try await send(simulator, token: session.token, user: session.primaryUserId, text: "hi <b>all</b> 😀", key: "k1")
        #expect(try id(again) == 3, "the same key answers the same id")
        let poll = try await respond(simulator, request("GET", "/v1/messages?primaryAfter=2&timeout=0", token: session.token))
        let answer = try MessagesAnswer(json: poll.body)
        let message = try #require(answer.messages[String(session.primaryUserId)]?.first)
        #expect(answer.messages[String(session.primaryUserId)]?.count == 1, "stored once")
        #expect(message.text == "hi <b>all</b> 😀")
        #expect(message.sender == UpstreamMessage.ownSender)
        #expect(message.sendKey == "k1")
        #expect(await simulator.written().map(\.text) == ["hi <b>all</b> 😀"])
        #expect(await simulator.stats().sentToChats == 1)
    }

    @Test func theKeysAreKeptWithTheWorldAcrossARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-send-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("world.sqlite").path
        let first = try ChatSimulator(dataPath: path)
        var session = try await session(first)
        let sent = try id(try await send(first, token: session.token, user: session.primaryUserId, text: "before the restart", key: "kept"))
        await first.close()
        let second = try ChatSimulator(dataPath: path)
        session = try await self.session(second)
        let again = try await send(second, token: session.token, user: session.primaryUserId, text: "before the restart", key: "kept")
        #expect(try id(again) == sent, "answered from the kept key, nothing stored twice")
        #expect(await second.written().map(\.text) == ["before the restart"])
        let poll = try MessagesAnswer(json: try await respond(second, request("GET", "/v1/messages?primaryAfter=0&timeout=0", token: session.token)).body)
        #expect(poll.messages[String(session.primaryUserId)]?.first?.sendKey == "kept", "the key comes back with it after a restart too")
    }

    @Test func refusalsSayWhyAndStoreNothing() async throws {
        let simulator = ChatSimulator()
        let session = try await session(simulator)
        let user = session.primaryUserId
        #expect(try await send(simulator, token: session.token, user: user, text: "no key", key: nil).status == .badRequest)
        #expect(try await send(simulator, token: session.token, user: user, chat: 99, text: "x", key: "a").status.code == 403)
        #expect(try await send(simulator, token: session.token, user: 424_242, text: "x", key: "b").status.code == 403)
        let large = String(repeating: "x", count: ChatSimulator.maximumSentTextBytes + 1)
        #expect(try await send(simulator, token: session.token, user: user, text: large, key: "c").status.code == 413)
        #expect(try await send(simulator, token: "nope", user: user, text: "x", key: "d").status == .unauthorized)
        await simulator.setFaults(FaultSettings(mode: .refuseSend))
        let refused = try await send(simulator, token: session.token, user: user, text: "x", key: "e")
        #expect(refused.status.code == 403)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("may not write"))
        // The fault is about sends only: polls go on.
        #expect(try await respond(simulator, request("GET", "/v1/messages?primaryAfter=0&timeout=0", token: session.token)).status == .ok)
        #expect(await simulator.written().isEmpty)
    }

    @Test func aCutAnswerHasStoredTheMessageAndTheSameKeyAgainAnswersIt() async throws {
        let simulator = ChatSimulator()
        let session = try await session(simulator)
        await simulator.setFaults(FaultSettings(mode: .drop))
        _ = try await send(simulator, token: session.token, user: session.primaryUserId, text: "cut", key: "k")
        await simulator.setFaults(FaultSettings(mode: .none))
        let again = try await send(simulator, token: session.token, user: session.primaryUserId, text: "cut", key: "k")
        #expect(try id(again) == 1)
        #expect(await simulator.written().map(\.text) == ["cut"])
    }

    /// Over a real socket: the client cuts a send at the deadline it is given, and the same key
    /// sent again is the one message, whatever the cut request did meanwhile.
    @Test func aSendPastItsDeadlineIsCutThereAndItsKeyAgainKeepsTheMessageOnce() async throws {
        let loop = try EventLoop(name: "send-deadline-test")
        let server = try await SimulatorServer.start(loop: loop)
        let upstream = ChatServerUpstream(baseURL: URL(string: server.url)!, loop: loop)
        let session = try await upstream.createSession()
        let message = OutgoingMessage(userId: session.primaryUserId, chatId: 2, text: "late", key: "k-late", writtenAt: "2026-12-03T08:00:00.000Z")
        await server.simulator.setFaults(FaultSettings(mode: .slow, delay: .seconds(5)))
        await #expect(throws: UpstreamError.timedOut) {
            try await upstream.send(message, token: session.token, deadline: .milliseconds(200))
        }
        await server.simulator.setFaults(FaultSettings(mode: .none))
        let sent = try await upstream.send(message, token: session.token, deadline: .seconds(10))
        #expect(sent.sendKey == "k-late")
        #expect(await server.simulator.written().map(\.text) == ["late"])
        await server.server.shutdown(gracePeriod: .milliseconds(100))
        await loop.shutdown()
    }
    /// Sends on a loop of their own never wait for the sync's: with the sync's loop thread held
    /// (as by a long batch being read), a message still goes and its answer is read.
    @Test func aSendOnItsOwnLoopIsAnsweredWhileTheSyncLoopIsHeld() async throws {
        let syncLoop = try EventLoop(name: "sync-test"), sendLoop = try EventLoop(name: "send-test"), serverLoop = try EventLoop(name: "server-test")
        let server = try await SimulatorServer.start(loop: serverLoop)
        let upstream = ChatServerUpstream(baseURL: URL(string: server.url)!, loop: syncLoop, sendLoop: sendLoop)
        let session = try await upstream.createSession()
        let release = DispatchSemaphore(value: 0)
        let held = Atomic<Bool>(true)
        syncLoop.execute {
            release.wait()
            held.store(false, ordering: .sequentiallyConsistent)
        }
        // Should the send wait for the held loop after all, this lets the test end (and fail).
        let watchdog = Task.detached {
            try? await Task.sleep(for: .seconds(30))
            release.signal()
        }
        let message = OutgoingMessage(userId: session.primaryUserId, chatId: 1, text: "apart", key: "k-apart", writtenAt: "2026-12-04T08:00:00.000Z")
        let sent = try await upstream.send(message, token: session.token, deadline: .seconds(60))
        let answeredWhileHeld = held.load(ordering: .sequentiallyConsistent)
        #expect(answeredWhileHeld, "the send was answered only once the sync's loop was let go")
        #expect(sent.sendKey == "k-apart")
        watchdog.cancel()
        release.signal()
        await server.server.shutdown(gracePeriod: .milliseconds(100))
        for loop in [syncLoop, sendLoop, serverLoop] { await loop.shutdown() }
    }
}
