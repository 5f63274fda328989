import Foundation
import Testing
import TestSupport

/// Threads of a Matrix account on a real Synapse (`m.thread`), written by other clients through
/// the client-server API and answered from the dashboard's own routes: the chat's timeline is
/// what Element shows in the room (the replies read in their thread), the thread holds what the
/// homeserver's thread holds, and what is answered here is in the thread for every client.
@Suite("Threads on a real Synapse", .requiresSynapse, .serialized)
struct ThreadsOnSynapseTests {
    typealias World = DashboardOnSynapseTests.World

    private static func texts(_ dashboard: RunningDashboard, _ query: String) async throws -> [[String: Any]] {
        try await dashboard.json("/api/messages?account=primary&limit=100\(query)")["messages"] as? [[String: Any]] ?? []
    }

    @Test func aThreadIsReadInItsThreadCountedOnItsFirstMessageAndAnsweredFromHere() async throws {
        let world = try await World.make()
        let root = try await world.bob.send(world.room, text: "who is in for Friday?")
        let first = try await world.bob.replyInThread(world.room, under: root, latest: root, text: "me, if it is after six")
        let phone = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: DashboardOnSynapseTests.alicePassword)
        _ = try await phone.replyInThread(world.room, under: root, latest: first, text: "count me in")
        _ = try await world.bob.send(world.room, text: "in the room itself")
        let dashboard = try await world.dashboard()
        try await dashboard.until("the history") { try await Self.texts(dashboard, "").count == 4 }

        let all = try await Self.texts(dashboard, "")
        let rootMessage = try #require(all.first { $0["text"] as? String == "who is in for Friday?" })
        let rootID = try #require(rootMessage["id"] as? Int), chat = try #require(rootMessage["chatId"] as? Int)
        let timeline = try await Self.texts(dashboard, "&chat=\(chat)")
        #expect(timeline.compactMap { $0["text"] as? String } == ["in the room itself", "who is in for Friday?"],
                "the room's timeline as Element shows it: the replies are in their thread")
        let summary = try #require(timeline.last?["thread"] as? [String: Any])
        #expect(summary["replies"] as? Int == 2 && summary["lastReplyAt"] is String)
        let thread = try await Self.texts(dashboard, "&thread=\(rootID)")
        #expect(thread.compactMap { $0["text"] as? String } == ["count me in", "me, if it is after six"], "the thread, newest first")
        #expect(thread.allSatisfy { $0["threadId"] as? Int == rootID && $0["replyTo"] == nil }, "the fallback reply is no reply")

        // Live from another client: the first message's count moves.
        _ = try await world.bob.replyInThread(world.room, under: root, latest: first, text: "and a third")
        try await dashboard.until("the live reply counted") {
            (try await Self.texts(dashboard, "&chat=\(chat)").last?["thread"] as? [String: Any])?["replies"] as? Int == 3
        }
        #expect(try await Self.texts(dashboard, "&chat=\(chat)").count == 2, "still out of the timeline")

        // Answered here: in the thread for every client.
        let written = try await dashboard.send("POST", "/api/chats/\(chat)/messages?account=primary", #"{"text": "I bring the cake", "threadId": \#(rootID)}"#,
                                               extraHeaders: ["Idempotency-Key": "thread-1"])
        #expect(written.status == 202)
        try await dashboard.until("the answer stored in its thread") {
            try await Self.texts(dashboard, "&thread=\(rootID)").first?["text"] as? String == "I bring the cake"
        }
        let held = try await world.bob.threadReplies(world.room, under: root)
        #expect(held.first.map { "\($0.body) from \($0.sender)" } == "I bring the cake from \(world.aliceID)", "the homeserver's thread: \(held)")
        #expect(held.count == 4)
        #expect(try await dashboard.send("POST", "/api/chats/\(chat)/messages?account=primary", #"{"text": "x", "threadId": 424242}"#,
                                         extraHeaders: ["Idempotency-Key": "thread-2"]).status == 404, "no such message to answer in the thread of")

        // Export keeps the thread.
        let export = String(decoding: try await dashboard.fetch("/api/export?account=primary").body, as: UTF8.self)
        let cake = try #require(export.split(separator: "\n").first { $0.contains("I bring the cake") })
        #expect(cake.contains(#""threadId":\#(rootID)"#))
        _ = await dashboard.stop()
    }
}
