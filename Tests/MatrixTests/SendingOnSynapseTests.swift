import Foundation
import Testing
import TestSupport

/// Writing from the dashboard into a real Synapse room (CONTRACT section 11), read by another
/// Matrix client through the client-server API: each message once, in order, whatever happens to
/// the homeserver meanwhile; its echo shown once; a refusal failing with the homeserver's reason.
@Suite("Sending on a real Synapse", .requiresSynapse, .serialized)
struct SendingOnSynapseTests {
    typealias World = DashboardOnSynapseTests.World

    private static func chatID(_ dashboard: RunningDashboard) async throws -> Int {
        let state = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        #expect(state[path: "connection", "state"] as? String == "live")
        let chats = try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]] ?? []
        return try #require(chats.first { $0["name"] as? String == "Lunch" }?["id"] as? Int)
    }

    private static func write(_ dashboard: RunningDashboard, _ text: String, chat: Int) async throws -> Int {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["text": text]), as: UTF8.self)
        let answer = try await dashboard.post("/api/chats/\(chat)/messages?account=primary", body, extraHeaders: ["Idempotency-Key": UUID().uuidString])
        #expect(answer.status == 202)
        return answer.body["outboxId"] as? Int ?? -1
    }

    /// Follows the feed until the outbox is empty; what is left.
    private static func drained(_ dashboard: RunningDashboard, rounds: Int = 200) async throws -> [[String: Any]] {
        var outbox = try await dashboard.json("/api/outbox")["outbox"] as? [[String: Any]] ?? []
        for _ in 0..<rounds where !outbox.isEmpty {
            let seq = try await dashboard.json("/api/state")["seq"] as? Int ?? 0
            _ = try await dashboard.json("/api/poll?since=\(seq)&timeout=5&visible=1")
            outbox = try await dashboard.json("/api/outbox")["outbox"] as? [[String: Any]] ?? []
        }
        return outbox
    }

    @Test func messagesWrittenHereReachTheRoomOnceInOrderAndShowOnceHere() async throws {
        let world = try await World.make()
        _ = try await world.bob.send(world.room, text: "hi alice")
        let dashboard = try await world.dashboard()
        let chat = try await Self.chatID(dashboard)
        let seq = try await dashboard.json("/api/state")["seq"] as? Int ?? 0
        let texts = ["one", "two <b>three</b>", "😀 \u{200F}שלום"]
        for text in texts { _ = try await Self.write(dashboard, text, chat: chat) }
        #expect(try await Self.drained(dashboard).isEmpty)
        // Bob, another client, reads the room.
        let bodies = try await world.bob.allMessageBodies(world.room)
        #expect(bodies == ["hi alice"] + texts)
        // Here: each message once (the send's answer and its echo through /sync are one message),
        // announced to nobody.
        let heard = try await DashboardOnSynapseTests.follow(dashboard, from: seq) { heard in texts.allSatisfy { text in heard.contains { $0.text == text } } }
        for text in texts {
            #expect(heard.heard.filter { $0.text == text }.count == 1, "\(text) heard once")
            #expect(heard.heard.first { $0.text == text }?.notify == false, "one's own message is not announced")
        }
        _ = await dashboard.stop()
        let stored = try await DashboardOnSynapseTests.storedByChat(at: world.storePath)
        #expect(stored["Lunch"] == ["hi alice"] + texts)
    }

    @Test func sendsWhileTheHomeserverIsDownStayQueuedAndGoOnceWhenItIsBack() async throws {
        let world = try await World.make()
        _ = try await world.bob.send(world.room, text: "hi alice")
        let dashboard = try await world.dashboard()
        let chat = try await Self.chatID(dashboard)
        await world.server.kill()
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "waiting" }
        let texts = (1...5).map { "while it was down \($0)" }
        for text in texts { _ = try await Self.write(dashboard, text, chat: chat) }
        let waiting = try await dashboard.json("/api/outbox")["outbox"] as? [[String: Any]] ?? []
        #expect(waiting.compactMap { $0["state"] as? String } == Array(repeating: "queued", count: 5), "down is never failed")
        try await world.server.restart()
        #expect(try await Self.drained(dashboard).isEmpty)
        #expect(try await world.bob.allMessageBodies(world.room) == ["hi alice"] + texts)
        _ = await dashboard.stop()
        #expect(try await DashboardOnSynapseTests.storedByChat(at: world.storePath)["Lunch"] == ["hi alice"] + texts)
    }

    @Test func whatAliceLeftUnsentIsNeverSentAsBobWhoSignsInOnTheSameStore() async throws {
        let world = try await World.make()
        _ = try await world.bob.send(world.room, text: "hi alice")
        let dashboard = try await world.dashboard()
        let chat = try await Self.chatID(dashboard)
        await world.server.kill()
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "waiting" }
        let alices = ["alice wrote this", "and this, unsent"]
        for text in alices { _ = try await Self.write(dashboard, text, chat: chat) }
        _ = await dashboard.stop()
        try await world.server.restart()

        // Bob signs in on the same store.
        let bobID = try #require(world.bob.session?.userId)
        let asBob = try await RunningDashboard(["--port", "0", "--db", world.storePath, "--always-on", "--hold-seconds", "5",
                                                "--backoff-base-ms", "200", "--backoff-cap-ms", "1000", "--log-level", "info",
                                                "--upstream", "matrix+http://127.0.0.1:\(world.server.port)", "--matrix-user", bobID],
                                               environment: ["LP_MATRIX_PASSWORD": "bob-password"])
        let state = try await asBob.state { ($0["errors"] as? [[String: Any]])?.contains { $0["type"] as? String == "/problems/unsent-left-behind" } == true }
        let error = try #require((state["errors"] as? [[String: Any]])?.first { $0["type"] as? String == "/problems/unsent-left-behind" })
        #expect(error["title"] as? String == "2 messages were not sent")
        #expect(error["unsentCount"] as? Int == 2)
        #expect((error["options"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["export", "discard", "not-now"])
        #expect((try await asBob.json("/api/outbox")["outbox"] as? [[String: Any]])?.isEmpty == true, "alice's messages are not bob's to see or send")

        // Bob writes his own: it goes, as him, and alice's never do.
        let bobsChat = try await Self.chatID(asBob)
        _ = try await Self.write(asBob, "bob's own", chat: bobsChat)
        #expect(try await Self.drained(asBob).isEmpty)
        #expect(try await world.bob.allMessageBodies(world.room) == ["hi alice", "bob's own"])

        let saved = try await asBob.post("/api/errors/\(error["id"] as? String ?? "")/attempts", #"{"option": "export"}"#,
                                         extraHeaders: ["Idempotency-Key": "save"])
        #expect(saved.body["status"] as? String == "recovered")
        let summary = saved.body["summary"] as? String ?? ""
        let path = try #require(summary.range(of: #"/\S+\.jsonl"#, options: .regularExpression).map { String(summary[$0]) }, "the summary names the file: \(summary)")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.compactMap { $0["text"] as? String } == alices, "what alice wrote, kept")
        let after = try await asBob.json("/api/state")
        #expect((after["errors"] as? [[String: Any]])?.contains { $0["type"] as? String == "/problems/unsent-left-behind" } == false)
        _ = await asBob.stop()
        #expect(try await world.bob.allMessageBodies(world.room) == ["hi alice", "bob's own"], "not a byte of alice's sent as bob")
    }

    @Test func theDashboardKilledWhileSendingSendsEachMessageOnceUnderItsTransactionID() async throws {
        let world = try await World.make()
        _ = try await world.bob.send(world.room, text: "hi alice")
        var accepted: [String] = []
        for round in 1...5 {
            let dashboard = try await world.dashboard()
            let chat = try await Self.chatID(dashboard)
            for index in 1...4 {
                let text = "round \(round) message \(index)"
                _ = try await Self.write(dashboard, text, chat: chat)
                accepted.append(text)
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...120)))
            _ = await dashboard.kill()
        }
        let last = try await world.dashboard()
        _ = try await Self.chatID(last)
        #expect(try await Self.drained(last).isEmpty)
        #expect(try await world.bob.allMessageBodies(world.room) == ["hi alice"] + accepted, "each accepted message once, in order")
        _ = await last.stop()
    }

    @Test func aMessageTheHomeserverRefusesAsTooLargeFailsWithItsReason() async throws {
        let world = try await World.make()
        _ = try await world.bob.send(world.room, text: "hi alice")
        let dashboard = try await world.dashboard()
        let chat = try await Self.chatID(dashboard)
        // Within the dashboard's limits (32,000 bytes of text; its request, each control character
        // written \u0001, under 64 KiB), but over Matrix's 65,536 bytes for the whole event.
        let text = String(repeating: "\u{1}", count: 10_900)
        _ = try await Self.write(dashboard, text, chat: chat)
        let state = try await dashboard.state { state in
            (state["errors"] as? [[String: Any]] ?? []).contains { $0["type"] as? String == "/problems/send-failed" }
        }
        let error = try #require((state["errors"] as? [[String: Any]])?.first { $0["type"] as? String == "/problems/send-failed" })
        #expect((error["detail"] as? String)?.contains("too large") == true, "\(error["detail"] ?? "")")
        #expect((error["debug"] as? [String: Any])?["underlying"] as? String != nil)
        let entry = try #require((try await dashboard.json("/api/outbox")["outbox"] as? [[String: Any]])?.first)
        #expect(entry["state"] as? String == "failed")
        #expect(try await world.bob.allMessageBodies(world.room) == ["hi alice"])
        _ = await dashboard.stop()
    }
}
