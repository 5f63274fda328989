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

    /// What Synapse counts as unread for `client`'s account in `room`: the main timeline's and the
    /// thread under `root`'s (a filtered sync, as Element asks with threads on).
    private static func homeserverCounts(_ client: MatrixTestClient, _ room: String, thread root: String) async throws -> (main: Int, thread: Int) {
        let filter = #"{"room":{"timeline":{"limit":1,"unread_thread_notifications":true}}}"#
        let sync = try JSONSerialization.jsonObject(with: Data(try await client.call("GET", "/sync", query: ["timeout": "0", "filter": filter]))) as? [String: Any] ?? [:]
        let joined = sync[path: "rooms", "join", room] as? [String: Any] ?? [:]
        return (joined[path: "unread_notifications", "notification_count"] as? Int ?? 0,
                joined[path: "unread_thread_notifications", root, "notification_count"] as? Int ?? 0)
    }

    /// Waits on `client`'s own sync (which the account's receipts wake) until its counts are
    /// `counts`, or 20 of its syncs went by; the counts it saw last, as "main/thread".
    private static func homeserverCounts(_ client: MatrixTestClient, _ room: String, thread root: String,
                                         become counts: (main: Int, thread: Int)) async throws -> String {
        var position = (try JSONSerialization.jsonObject(with: Data(try await client.call("GET", "/sync", query: ["timeout": "0"]))) as? [String: Any])?["next_batch"] as? String
        var seen = try await homeserverCounts(client, room, thread: root)
        for _ in 0..<20 where seen != counts {
            let next = try JSONSerialization.jsonObject(with: Data(try await client.call("GET", "/sync", query: ["since": position ?? "", "timeout": "5000"],
                                                                                             timeout: .seconds(15)))) as? [String: Any]
            position = next?["next_batch"] as? String ?? position
            seen = try await homeserverCounts(client, room, thread: root)
        }
        return "\(seen.main)/\(seen.thread)"
    }

    @Test func aThreadIsReadApartHereAndInTheAccountsOtherClients() async throws {
        let world = try await World.make()
        let root = try await world.bob.send(world.room, text: "who is in for Friday?")
        let dashboard = try await world.dashboard()
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        let phone = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: DashboardOnSynapseTests.alicePassword)
        try await phone.call("POST", "/rooms/\(MatrixTestClient.pathComponent(world.room))/read_markers", json: ["m.read": root])
        _ = try await DashboardOnSynapseTests.unread(dashboard, becomes: 0)

        // Two live replies in the thread and one in the room: the chat counts all three, the first
        // message the thread's two, as Element's room list and thread dot do.
        let first = try await world.bob.replyInThread(world.room, under: root, latest: root, text: "me, if it is after six")
        let second = try await world.bob.replyInThread(world.room, under: root, latest: first, text: "and Ann too")
        _ = try await world.bob.send(world.room, text: "in the room itself")
        let chat = try #require(try await DashboardOnSynapseTests.unread(dashboard, becomes: 3))
        let chatID = try #require(chat["id"] as? Int)
        func rootThread() async throws -> [String: Any]? {
            try await Self.texts(dashboard, "&chat=\(chatID)").first { $0["text"] as? String == "who is in for Friday?" }?["thread"] as? [String: Any]
        }
        try await dashboard.until("the thread's two unread on its first message") { try await rootThread()?["unread"] as? Int == 2 }
        let rootID = try #require(try await Self.texts(dashboard, "&chat=\(chatID)").first { $0["text"] as? String == "who is in for Friday?" }?["id"] as? Int)

        // The thread read on the phone (a threaded receipt, as Element's thread view sends): read
        // here, and the room's own message still unread.
        try await phone.call("POST", "/rooms/\(MatrixTestClient.pathComponent(world.room))/receipt/m.read/\(MatrixTestClient.pathComponent(second))",
                             json: ["thread_id": root])
        try await dashboard.until("the thread read on the phone") { try await rootThread()?["unread"] as? Int == 0 }
        #expect(try await DashboardOnSynapseTests.unread(dashboard, becomes: 1) != nil)

        // A new reply, read here in its thread: read on the phone too, the room's own count untouched.
        _ = try await world.bob.replyInThread(world.room, under: root, latest: second, text: "I bring the cake")
        try await dashboard.until("the new reply unread") { try await rootThread()?["unread"] as? Int == 1 }
        #expect(try await DashboardOnSynapseTests.unread(dashboard, becomes: 2) != nil)
        let read = try await dashboard.post("/api/chats/\(chatID)/read?account=primary", #"{"thread": \#(rootID)}"#)
        #expect(read.status == 200 && read.body[path: "chat", "unread"] as? Int == 1)
        #expect(try await rootThread()?["unread"] as? Int == 0)
        #expect(try await Self.homeserverCounts(phone, world.room, thread: root, become: (main: 1, thread: 0)) == "1/0",
                "read here, so the thread is read for Synapse, and the room's message is not")

        // The room read here: Synapse holds it all read.
        #expect(try await dashboard.post("/api/chats/\(chatID)/read?account=primary").body[path: "chat", "unread"] as? Int == 0)
        #expect(try await Self.homeserverCounts(phone, world.room, thread: root, become: (main: 0, thread: 0)) == "0/0",
                "read here, so Synapse holds the room read")
        #expect(try await dashboard.post("/api/chats/\(chatID)/read?account=primary", #"{"thread": 424242}"#).status == 404, "no such message")
        #expect(try await dashboard.post("/api/chats/\(chatID)/read?account=primary", #"{"thread": \#(rootID), "through": \#(rootID)}"#).status == 400,
                "a thread or a point of the timeline, not both")
        _ = await dashboard.stop()
    }
}
