import Foundation
import Testing
import TestSupport

/// Writing back through the real binary and the built-in simulator (CONTRACT section 11): what is
/// accepted arrives once, in order, whatever the network and the process do meanwhile.
@Suite("Sending")
struct SendingTests {
    static let arguments = ["--port", "0", "--db", ":memory:", "--always-on", "--no-demo", "--log-level", "warning",
                            "--backoff-base-ms", "50", "--backoff-cap-ms", "300"]

    /// A dashboard whose primary account has chats (from messages published to it); one chat's id.
    private static func dashboardWithAChat(_ arguments: [String] = SendingTests.arguments) async throws -> (RunningDashboard, Int) {
        let dashboard = try await RunningDashboard(arguments)
        try await dashboard.simulator("/sim/messages", #"{"account": "primary", "count": 3}"#)
        let state = try await dashboard.state { ($0[path: "accounts", "primary", "cursor"] as? String) == "3" }
        #expect(state[path: "connection", "state"] as? String == "live")
        let chats = try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]] ?? []
        let chat = try #require(chats.first?["id"] as? Int)
        return (dashboard, chat)
    }

    private static func write(_ dashboard: RunningDashboard, _ text: String, chat: Int, key: String = UUID().uuidString) async throws -> (status: Int, body: [String: Any]) {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["text": text]), as: UTF8.self)
        return try await dashboard.post("/api/chats/\(chat)/messages?account=primary", body, extraHeaders: ["Idempotency-Key": key])
    }

    /// What the simulator's chats got from the account, in order.
    private static func written(_ dashboard: RunningDashboard) async throws -> [String] {
        (try await dashboard.simulator("/sim/written")["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
    }

    private static func outbox(_ dashboard: RunningDashboard) async throws -> [[String: Any]] {
        try await dashboard.json("/api/outbox")["outbox"] as? [[String: Any]] ?? []
    }

    /// Follows the feed until the outbox is empty (or `rounds` changes went by); what is left.
    private static func drained(_ dashboard: RunningDashboard, rounds: Int = 400) async throws -> [[String: Any]] {
        var outbox = try await outbox(dashboard)
        for _ in 0..<rounds where !outbox.isEmpty {
            let seq = try await dashboard.json("/api/state")["seq"] as? Int ?? 0
            _ = try await dashboard.json("/api/poll?since=\(seq)&timeout=5&visible=1")
            outbox = try await Self.outbox(dashboard)
        }
        return outbox
    }

    /// The texts the copy holds in `chat`, oldest first.
    private static func stored(_ dashboard: RunningDashboard, chat: Int) async throws -> [String] {
        let page = try await dashboard.json("/api/messages?account=primary&chat=\(chat)&limit=500")
        return (page["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }.reversed()
    }

    @Test func thirtySendsWithHalfTheAnswersCutArriveExactlyOnceInOrder() async throws {
        let (dashboard, chat) = try await Self.dashboardWithAChat()
        try await dashboard.simulator("/sim/faults", #"{"mode": "drop", "rate": 0.5}"#)
        let texts = (1...30).map { "reply \($0)" }
        for text in texts {
            let answer = try await Self.write(dashboard, text, chat: chat)
            #expect(answer.status == 202)
            #expect(answer.body["state"] as? String == "queued")
        }
        let left = try await Self.drained(dashboard)
        let cuts = try await dashboard.simulator("/sim/stats")["faultsInjected"] as? Int ?? 0
        try await dashboard.simulator("/sim/faults", #"{"mode": "none"}"#)
        #expect(left.isEmpty, "all sent: \(left.count) left")
        #expect(cuts > 0, "answers really were cut")
        #expect(try await Self.written(dashboard) == texts, "each once, in the order written")
        _ = try await dashboard.state { _ in true }
        let stored = try await Self.stored(dashboard, chat: chat).filter { $0.hasPrefix("reply ") }
        #expect(stored == texts, "the copy shows each once")
        #expect(await dashboard.stop().status == 0)
    }

    @Test func sendsWhileTheServerIsOfflineStayQueuedAndGoWhenItIsBack() async throws {
        let (dashboard, chat) = try await Self.dashboardWithAChat()
        try await dashboard.simulator("/sim/faults", #"{"mode": "offline"}"#)
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String != "live" }
        let texts = (1...5).map { "while offline \($0)" }
        for text in texts { #expect(try await Self.write(dashboard, text, chat: chat).status == 202) }
        let waiting = try await Self.outbox(dashboard)
        #expect(waiting.map { $0["state"] as? String } == Array(repeating: "queued", count: 5), "offline is never failed")
        #expect(waiting.allSatisfy { $0["error"] is NSNull })
        #expect(try await Self.written(dashboard).isEmpty)
        try await dashboard.simulator("/sim/faults", #"{"mode": "none"}"#)
        #expect(try await Self.drained(dashboard).isEmpty)
        #expect(try await Self.written(dashboard) == texts)
        #expect(await dashboard.stop().status == 0)
    }

    @Test func aRefusedSendFailsWithItsReasonAndTryAgainAndDeleteDoWhatTheySay() async throws {
        let (dashboard, chat) = try await Self.dashboardWithAChat()
        try await dashboard.simulator("/sim/faults", #"{"mode": "refuse-send"}"#)
        #expect(try await Self.write(dashboard, "not allowed", chat: chat).status == 202)
        let state = try await dashboard.state { state in
            (state["errors"] as? [[String: Any]] ?? []).contains { $0["type"] as? String == "/problems/send-failed" }
        }
        let error = try #require((state["errors"] as? [[String: Any]])?.first { $0["type"] as? String == "/problems/send-failed" })
        #expect(error["presentation"] as? String == "view")
        #expect(error["chatId"] as? Int == chat)
        #expect((error["options"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["try-again", "discard"])
        #expect((error["options"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == ["Try again", "Delete"])
        #expect((error["detail"] as? String)?.contains("does not let this account write") == true)
        let entry = try #require(try await Self.outbox(dashboard).first)
        #expect(entry["state"] as? String == "failed")
        #expect((entry["error"] as? [String: Any])?["id"] as? String == error["id"] as? String)

        let errorID = error["id"] as? String ?? ""
        let callsBefore = try await dashboard.simulator("/sim/stats")["upstreamCalls"] as? Int ?? 0
        for round in 1...2 {
            let again = try await dashboard.post("/api/errors/\(errorID)/attempts", #"{"option": "try-again"}"#,
                                                 extraHeaders: ["Idempotency-Key": "again-\(round)"])
            #expect(again.body["status"] as? String == "failed", "refused again, round \(round)")
            #expect(((again.body["error"] as? [String: Any])?["lastAttempt"] as? [String: Any])?["reason"] as? String != nil)
        }
        let statsAfter = try await dashboard.simulator("/sim/stats")
        #expect(statsAfter["faultsInjected"] as? Int == 3, "the first send and each Try again: one real try each")
        #expect((statsAfter["upstreamCalls"] as? Int ?? 0) >= callsBefore + 2)
        let deleted = try await dashboard.post("/api/errors/\(errorID)/attempts", #"{"option": "discard"}"#,
                                               extraHeaders: ["Idempotency-Key": "delete"])
        #expect(deleted.body["status"] as? String == "dismissed")
        #expect(try await Self.outbox(dashboard).isEmpty)
        try await dashboard.simulator("/sim/faults", #"{"mode": "none"}"#)
        #expect(try await Self.written(dashboard).isEmpty, "a deleted message never goes")
        #expect(await dashboard.stop().status == 0)
    }

    @Test func badRequestsAreRefusedWithTheReasonAndOddTextIsSentAsText() async throws {
        let (dashboard, chat) = try await Self.dashboardWithAChat()
        #expect(try await Self.write(dashboard, "", chat: chat).status == 400)
        #expect(try await Self.write(dashboard, " \n\t ", chat: chat).status == 400)
        #expect(try await Self.write(dashboard, String(repeating: "x", count: 32_001), chat: chat).status == 413)
        #expect(try await Self.write(dashboard, "hello", chat: 999_999).status == 404)
        let missingKey = try await dashboard.post("/api/chats/\(chat)/messages?account=primary", #"{"text": "no key"}"#)
        #expect(missingKey.status == 400)
        let notJSON = try await dashboard.post("/api/chats/\(chat)/messages?account=primary", "text=hi", extraHeaders: ["Idempotency-Key": "nj"])
        #expect(notJSON.status == 400)
        let first = try await Self.write(dashboard, "once", chat: chat, key: "same-key")
        let again = try await Self.write(dashboard, "once", chat: chat, key: "same-key")
        #expect(first.status == 202 && again.status == 202)
        #expect(first.body["outboxId"] as? Int == again.body["outboxId"] as? Int, "the same key is the first answer")
        #expect(try await Self.write(dashboard, "another text", chat: chat, key: "same-key").status == 422)

        let odd = "<b>bold</b> & <script>alert(1)</script> \u{1}\u{7} 😀👍🏽 \u{200F}שלום\u{200E} end"
        #expect(try await Self.write(dashboard, odd, chat: chat).status == 202)
        #expect(try await Self.drained(dashboard).isEmpty)
        _ = try await dashboard.state { _ in true }
        #expect(try await Self.written(dashboard) == ["once", odd], "the repeated request queued nothing")
        #expect(try await Self.stored(dashboard, chat: chat).suffix(2) == ["once", odd])
        #expect(await dashboard.stop().status == 0)
    }

    @Test func aMessageNotSentYetCanBeDeletedAndNothingElse() async throws {
        let (dashboard, chat) = try await Self.dashboardWithAChat()
        try await dashboard.simulator("/sim/faults", #"{"mode": "offline"}"#)
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String != "live" }
        let queued = try await Self.write(dashboard, "changed my mind", chat: chat)
        let id = try #require(queued.body["outboxId"] as? Int)
        #expect(try await dashboard.send("DELETE", "/api/outbox/\(id)").status == 204)
        #expect(try await dashboard.send("DELETE", "/api/outbox/\(id)").status == 404)
        #expect(try await dashboard.send("DELETE", "/api/outbox/x").status == 400)
        try await dashboard.simulator("/sim/faults", #"{"mode": "none"}"#)
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        #expect(try await Self.outbox(dashboard).isEmpty)
        #expect(try await Self.written(dashboard).isEmpty)
        #expect(await dashboard.stop().status == 0)
    }

    @Test func whatADetachedLinkedAccountLeftUnsentIsNeverSentAsTheNextOneAndCanBeDeleted() async throws {
        let dashboard = try await RunningDashboard(Self.arguments)
        try await dashboard.simulator("/sim/messages", #"{"account": "linked", "count": 2}"#)
        _ = try await dashboard.state { ($0[path: "accounts", "linked", "cursor"] as? String) == "2" }
        let chats = try await dashboard.json("/api/chats?account=linked")["chats"] as? [[String: Any]] ?? []
        let chat = try #require(chats.first?["id"] as? Int)
        try await dashboard.simulator("/sim/faults", #"{"mode": "offline"}"#)
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String != "live" }
        for text in ["linked one, unsent", "linked two, unsent"] {
            let body = String(decoding: try JSONSerialization.data(withJSONObject: ["text": text]), as: UTF8.self)
            let answer = try await dashboard.post("/api/chats/\(chat)/messages?account=linked", body, extraHeaders: ["Idempotency-Key": UUID().uuidString])
            #expect(answer.status == 202)
        }
        // The linked account goes and another takes its place, while the two wait.
        try await dashboard.simulator("/sim/linked", #"{"linked": false}"#)
        try await dashboard.simulator("/sim/linked", #"{"linked": true}"#)
        try await dashboard.simulator("/sim/faults", #"{"mode": "none"}"#)
        let state = try await dashboard.state { ($0["errors"] as? [[String: Any]])?.contains { $0["type"] as? String == "/problems/unsent-left-behind" } == true }
        let error = try #require((state["errors"] as? [[String: Any]])?.first { $0["type"] as? String == "/problems/unsent-left-behind" })
        #expect(error["title"] as? String == "2 messages were not sent" && error["unsentCount"] as? Int == 2)
        #expect(try await Self.outbox(dashboard).isEmpty, "not shown for the account that holds the role now")

        // The new linked account writes: only its own message goes, as it.
        try await dashboard.simulator("/sim/messages", #"{"account": "linked", "count": 1}"#)
        var newChat: Int?
        for _ in 0..<100 where newChat == nil {
            newChat = (try await dashboard.json("/api/chats?account=linked")["chats"] as? [[String: Any]])?.first?["id"] as? Int
            if newChat == nil {
                let seq = try await dashboard.json("/api/state")["seq"] as? Int ?? 0
                _ = try await dashboard.json("/api/poll?since=\(seq)&timeout=5&visible=1")
            }
        }
        let fresh = try #require(newChat)
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["text": "the new one's own"]), as: UTF8.self)
        #expect(try await dashboard.post("/api/chats/\(fresh)/messages?account=linked", body, extraHeaders: ["Idempotency-Key": "new"]).status == 202)
        #expect(try await Self.drained(dashboard).isEmpty)
        let written = try await dashboard.simulator("/sim/written")["messages"] as? [[String: Any]] ?? []
        #expect(written.compactMap { $0["text"] as? String } == ["the new one's own"], "nothing of the detached account's sent as the new one")

        let deleted = try await dashboard.post("/api/errors/\(error["id"] as? String ?? "")/attempts", #"{"option": "discard"}"#,
                                               extraHeaders: ["Idempotency-Key": "delete"])
        #expect(deleted.body["status"] as? String == "recovered")
        #expect(deleted.body["summary"] as? String == "Deleted 2 unsent messages; they were never sent.")
        let after = try await dashboard.json("/api/state")
        #expect((after["errors"] as? [[String: Any]])?.contains { $0["type"] as? String == "/problems/unsent-left-behind" } == false)
        #expect(await dashboard.stop().status == 0)
    }

    /// `lp-bench soak` for a short while (the ten-minute run is the benchmark's): writes, deletes,
    /// linked accounts swapped and faults at random, every kept message held against its writer.
    @Test func aShortWritingSoakSendsNothingAsAnotherAccountAndLosesAndDoublesNothing() async throws {
        let (status, output) = try await runToCompletion(ChildProcess.binaryPath("lp-bench"), ["soak", "--seconds", "20", "--seed", "11"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("sent as another user: 0; kept twice: 0; sent after a 204 Delete: 0; lost: 0"), "\(output)")
    }

    @Test func theDashboardKilledFiveTimesWhileSendingLosesAndDoublesNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("send-crash-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let upstream = try ChildProcess("chat-server", ["--port", "0", "--seed", "5", "--no-linked", "--data", folder + "/world.sqlite"])
        defer { upstream.signal(SIGTERM) }
        let upstreamURL = String(try #require(await upstream.nextLine()).split(separator: " ").last!)
        let upstreamPort = try #require(Int(upstreamURL.split(separator: ":").last!.dropLast()))
        try await RunningDashboard.call(port: upstreamPort, "/sim/messages", #"{"account": "primary", "count": 3}"#)
        let arguments = ["--port", "0", "--upstream", upstreamURL, "--db", folder + "/store.sqlite", "--always-on", "--log-level", "error",
                         "--backoff-base-ms", "50", "--backoff-cap-ms", "200"]
        // Slow answers, so that kills land while sends are on their way.
        try await RunningDashboard.call(port: upstreamPort, "/sim/faults", #"{"mode": "slow", "rate": 0.5, "delayMs": 80}"#)

        var accepted: [String] = []
        var random = SystemRandomNumberGenerator()
        for round in 1...5 {
            let dashboard = try await RunningDashboard(arguments)
            // Synced at least as far as the three messages that made the chats (sent ones may follow them).
            let synced = try await dashboard.state { Int($0[path: "accounts", "primary", "cursor"] as? String ?? "") ?? 0 >= 3 }
            #expect(Int(synced[path: "accounts", "primary", "cursor"] as? String ?? "") ?? 0 >= 3, "round \(round)")
            let chat = try #require((try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]])?.first?["id"] as? Int)
            for index in 1...6 {
                let text = "round \(round) message \(index)"
                if try await Self.write(dashboard, text, chat: chat).status == 202 { accepted.append(text) }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...150, using: &random)))
            #expect(await dashboard.kill().status == SIGKILL)
        }
        try await RunningDashboard.call(port: upstreamPort, "/sim/faults", #"{"mode": "none"}"#)
        let last = try await RunningDashboard(arguments)
        #expect(try await Self.drained(last).isEmpty, "everything accepted went")
        let written = (try await RunningDashboard.call(port: upstreamPort, "/sim/written")["messages"] as? [[String: Any]] ?? [])
            .compactMap { $0["text"] as? String }
        #expect(accepted.count == 30)
        #expect(written == accepted, "every accepted message once, in order (\(written.count) arrived of \(accepted.count))")
        #expect(await last.stop().status == 0)
    }
}
