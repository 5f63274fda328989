import Foundation
import Synchronization
import Testing

/// The Synapse harness itself: a real homeserver starts, people register, talk in a room and
/// read it back, and what they said survives SIGKILL and a restart on the same data. The rate
/// limit a test can lower really answers 429, many messages keep their order, and a port another
/// server took is left for another.
@Suite("Synapse harness", .requiresSynapse, .serialized)
struct SynapseHarnessTests {
    @Test func aConversationIsSyncedAndSurvivesKillAndRestart() async throws {
        let started = ContinuousClock.now
        let server = try await SynapseServer.start()
        print("Synapse ready on port \(server.port) after \(ContinuousClock.now - started)")

        let aliceId = try await server.registerUser("alice", password: "alice-password")
        let bobId = try await server.registerUser("bob", password: "bob-password")
        #expect(aliceId == "@alice:\(server.serverName)")
        #expect(bobId == "@bob:\(server.serverName)")

        let alice = try await MatrixTestClient.signIn(server, user: "alice", password: "alice-password")
        let bob = try await MatrixTestClient.signIn(server, user: bobId, password: "bob-password")
        #expect(alice.session?.userId == aliceId)
        #expect(bob.session?.deviceId.isEmpty == false)

        let room = try await alice.createRoom(name: "Harness room", invite: [bobId])
        #expect(try await bob.sync().invitedRooms.contains(room))
        try await bob.join(room)
        let textId = try await alice.send(room, text: "Hello Bob")
        let htmlId = try await alice.send(room, text: "Hello *Bob*", html: "Hello <em>Bob</em>")
        #expect(textId != htmlId)

        let check = { (answer: MatrixTestClient.SyncAnswer, moment: Comment) in
            let messages = answer.timeline(room).filter(\.isMessage)
            #expect(messages.map(\.body) == ["Hello Bob", "Hello *Bob*"], moment)
            #expect(messages.map(\.eventId) == [textId, htmlId], moment)
            #expect(messages.allSatisfy { $0.sender == aliceId && $0.msgtype == "m.text" }, moment)
            #expect(messages.last?.format == "org.matrix.custom.html", moment)
            #expect(messages.last?.formattedBody == "Hello <em>Bob</em>", moment)
            #expect(answer.timeline(room).contains { $0.type == "m.room.name" && $0.name == "Harness room" }, moment)
        }
        check(try await bob.sync(), "before the kill")

        await server.kill()
        #expect(!server.isRunning)
        let restarted = ContinuousClock.now
        try await server.restart()
        print("Synapse ready again after \(ContinuousClock.now - restarted)")
        check(try await bob.sync(), "after kill and restart")

        await server.stop()
        #expect(!FileManager.default.fileExists(atPath: server.folder.path))
    }

    /// A free port is only free when it is chosen: here another Synapse holds the port the new
    /// one is given first. The new one must notice the other (whose secret is not its own) and
    /// start on another port, where its own secret registers people.
    @Test func aPortAnotherSynapseTookIsLeftForAnother() async throws {
        let other = try await SynapseServer.start()
        let ports = Mutex([other.port])
        let server = try await SynapseServer.start(choosePort: {
            try ports.withLock { $0.isEmpty ? try SynapseServer.freeLoopbackPort() : $0.removeFirst() }
        })
        #expect(server.port != other.port)
        #expect(try await server.registerUser("alice", password: "alice-password") == "@alice:\(server.serverName)")
        await server.stop()
        await other.stop()
    }

    @Test func aLowMessageRateLimitAnswers429() async throws {
        let server = try await SynapseServer.start(rcMessage: .init(perSecond: 0.1, burstCount: 2))
        _ = try await server.registerUser("carol", password: "carol-password")
        let carol = try await MatrixTestClient.signIn(server, user: "carol", password: "carol-password")
        let room = try await carol.createRoom(name: "Quiet room")
        var refusals: [MatrixTestClientError] = []
        for number in 1...6 {
            do {
                _ = try await carol.send(room, text: "attempt \(number)")
            } catch let error as MatrixTestClientError {
                refusals.append(error)
            }
        }
        #expect(!refusals.isEmpty, "some of six quick sends were refused")
        #expect(refusals.allSatisfy { $0.status == 429 && $0.errcode == "M_LIMIT_EXCEEDED" }, "\(refusals)")
        #expect(refusals.allSatisfy { ($0.retryAfter ?? .zero) > .zero }, "a refusal says how long to wait")
        await server.stop()
    }

    @Test func manyMessagesKeepTheirOrderAndLogoutEndsTheToken() async throws {
        let server = try await SynapseServer.start()
        _ = try await server.registerUser("dave", password: "dave-password", admin: true)
        let dave = try await MatrixTestClient.signIn(server, user: "dave", password: "dave-password")
        let room = try await dave.createRoom(name: "Busy room")

        let count = 300
        let started = ContinuousClock.now
        let eventIds = try await dave.sendMany(room, count: count, prefix: "busy")
        let elapsed = ContinuousClock.now - started
        print("sendMany: \(count) messages in \(elapsed)")
        #expect(Set(eventIds).count == count)
        #expect(try await dave.allMessageBodies(room, pageSize: 120) == (1...count).map { "busy \($0)" })

        try await dave.logout()
        let error = await #expect(throws: MatrixTestClientError.self) { try await dave.sync() }
        #expect(error?.status == 401)
        #expect(error?.errcode == "M_UNKNOWN_TOKEN")
        await server.stop()
    }
}
