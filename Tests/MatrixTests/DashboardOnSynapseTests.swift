import Foundation
import Store
import Testing
import TestSupport

/// The dashboard binary syncing a Matrix account on a real Synapse, as a person runs it
/// (`--upstream matrix+http://... --matrix-user ...` with the password in the environment), and
/// heard through its own feed (`/api/poll`), the way the page hears it.
@Suite("Dashboard on a real Synapse", .requiresSynapse, .serialized)
struct DashboardOnSynapseTests {
    static let alicePassword = "alice-secret-password"

    /// A homeserver with alice (whose account the dashboard syncs) and bob (who talks to her) in a
    /// room named "Lunch". Gone with the test: Synapse is stopped and both folders removed when
    /// the last reference goes.
    final class World: Sendable {
        let server: SynapseServer
        let aliceID: String
        let bob: MatrixTestClient
        let room: String
        let folder: URL
        var storePath: String { folder.appendingPathComponent("store.sqlite").path }

        static func make(rcLogin: SynapseServer.RateLimit = .unlimited) async throws -> World {
            let server = try await SynapseServer.start(rcLogin: rcLogin)
            let aliceID = try await server.registerUser("alice", password: DashboardOnSynapseTests.alicePassword)
            let bobID = try await server.registerUser("bob", password: "bob-password")
            let bob = try await MatrixTestClient.signIn(server, user: bobID, password: "bob-password")
            let alice = try await MatrixTestClient.signIn(server, user: aliceID, password: DashboardOnSynapseTests.alicePassword)
            let room = try await bob.createRoom(name: "Lunch", invite: [aliceID])
            try await alice.join(room)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("matrix-dashboard-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return World(server: server, aliceID: aliceID, bob: bob, room: room, folder: folder)
        }

        private init(server: SynapseServer, aliceID: String, bob: MatrixTestClient, room: String, folder: URL) {
            self.server = server
            self.aliceID = aliceID
            self.bob = bob
            self.room = room
            self.folder = folder
        }

        deinit {
            // SynapseServer's own deinit kills it (if still running) and removes its folder.
            try? FileManager.default.removeItem(at: folder)
        }

        /// The dashboard syncing alice, always on, with quick backoff and a 5 s hold.
        func dashboard(password: String? = DashboardOnSynapseTests.alicePassword, timelineLimit: Int = 50) async throws -> RunningDashboard {
            try await RunningDashboard(["--port", "0", "--db", storePath, "--always-on", "--hold-seconds", "5",
                                        "--backoff-base-ms", "200", "--backoff-cap-ms", "1000", "--log-level", "debug",
                                        "--upstream", "matrix+http://127.0.0.1:\(server.port)", "--matrix-user", aliceID,
                                        "--matrix-timeline-limit", String(timelineLimit)],
                                       environment: password.map { ["LP_MATRIX_PASSWORD": $0] } ?? ["LP_MATRIX_PASSWORD": ""])
        }

    }

    /// One message as the feed told it.
    struct Heard: Equatable {
        var text: String
        var notify: Bool
        var caughtUp: Bool
    }

    /// Follows `/api/poll` from `since`, collecting every message event, until `enough` holds or
    /// `rounds` polls went by. Returns what was heard and the seq to follow on from.
    static func follow(_ dashboard: RunningDashboard, from since: Int, rounds: Int = 100,
                       until enough: ([Heard]) -> Bool) async throws -> (heard: [Heard], seq: Int) {
        var heard: [Heard] = [], seq = since
        for _ in 0..<rounds where !enough(heard) {
            let answer = try await dashboard.json("/api/poll?since=\(seq)&timeout=10&visible=1")
            seq = answer["seq"] as? Int ?? seq
            for event in answer["events"] as? [[String: Any]] ?? [] where event["type"] as? String == "messages" {
                let data = event["data"] as? [String: Any] ?? [:]
                for message in data["messages"] as? [[String: Any]] ?? [] {
                    heard.append(Heard(text: message["text"] as? String ?? "", notify: data["notify"] as? Bool ?? false,
                                       caughtUp: data["caughtUp"] as? Bool ?? false))
                }
            }
        }
        return (heard, seq)
    }

    /// The texts stored for alice, oldest first, and the names of her chats.
    static func stored(at path: String) async throws -> (texts: [String], chatNames: [String]) {
        let store = try MessageStore(location: .file(path))
        let texts = try await store.messages(of: .primary, limit: 1_000_000).messages.map(\.text).reversed()
        let names = try await store.chats(of: .primary).compactMap(\.name)
        await store.close()
        return (Array(texts), names)
    }

    /// Each chat's texts as stored for alice, oldest first, by chat name.
    static func storedByChat(at path: String) async throws -> [String: [String]] {
        let store = try MessageStore(location: .file(path))
        var byChat: [String: [String]] = [:]
        for chat in try await store.chats(of: .primary) {
            byChat[chat.name ?? String(chat.id)] = try await store.messages(of: .primary, chat: chat.id, limit: 1_000_000).messages.reversed().map(\.text)
        }
        await store.close()
        return byChat
    }

    // MARK: Scenarios

    /// Reads `/api/chats` until the only chat's unread count is `count`, waiting on the feed between reads.
    static func unread(_ dashboard: RunningDashboard, becomes count: Int) async throws -> [String: Any]? {
        var seq = try await dashboard.json("/api/state")["seq"] as? Int ?? 0
        for _ in 0..<60 {
            let chat = (try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]])?.first
            if chat?["unread"] as? Int == count { return chat }
            seq = try await dashboard.json("/api/poll?since=\(seq)&timeout=10&visible=1")["seq"] as? Int ?? seq
        }
        return nil
    }

    @Test func editsRedactionsAndRepliesInOlderHistoryActAsInALiveSync() async throws {
        let world = try await World.make()
        let typo = try await world.bob.send(world.room, text: "lunch at nonn")
        let regret = try await world.bob.send(world.room, text: "something to take back")
        _ = try await world.bob.reply(world.room, to: typo, quoting: "lunch at nonn", by: world.bob.session?.userId ?? "", text: "which place?")
        _ = try await world.bob.edit(world.room, typo, to: "lunch at noon")
        try await world.bob.redact(world.room, regret)
        _ = try await world.bob.sendMany(world.room, count: 8, prefix: "later")
        // A timeline of 5: all of the above but the last five come through history, newest first,
        // so the edit and the redaction arrive before the messages they act on.
        let dashboard = try await world.dashboard(timelineLimit: 5)
        let done = try await dashboard.state(until: { $0[path: "history", "complete"] as? Bool == true }, rounds: 100)
        #expect(done[path: "history", "complete"] as? Bool == true)
        let page = try await dashboard.json("/api/messages?account=primary&limit=100")
        let messages = page["messages"] as? [[String: Any]] ?? []
        #expect(messages.compactMap { $0["text"] as? String }.reversed() == ["lunch at noon", "which place?"] + (1...8).map { "later \($0)" },
                "the edit shown on its message, the deleted one gone, the reply without its quote")
        let original = messages.first { $0["text"] as? String == "lunch at noon" }
        #expect(original?["editedAt"] is String)
        #expect(messages.first { $0["text"] as? String == "which place?" }?["replyTo"] as? Int64 == original?["id"] as? Int64)
        let old = try await dashboard.json("/api/search?q=nonn&account=primary")
        #expect((old["results"] as? [[String: Any]] ?? []).isEmpty, "the old words are not found")
        _ = await dashboard.stop()
    }

    @Test func aChatReadElsewhereIsReadHereAndOneReadHereIsReadInTheAccountsOtherClients() async throws {
        let world = try await World.make()
        let dashboard = try await world.dashboard()
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        // Alice's phone: another login of the same account.
        let phone = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        let room = MatrixTestClient.pathComponent(world.room)

        let unread = try await world.bob.sendMany(world.room, count: 3, prefix: "while away")
        #expect(try await Self.unread(dashboard, becomes: 3) != nil, "three live messages unread")
        try await phone.call("POST", "/rooms/\(room)/read_markers", json: ["m.fully_read": unread[2], "m.read": unread[2]])
        let readOnThePhone = try await Self.unread(dashboard, becomes: 0)
        #expect(readOnThePhone != nil, "read on the phone, so read here")

        let fresh = try await world.bob.sendMany(world.room, count: 2, prefix: "new")
        let chat = try #require(try await Self.unread(dashboard, becomes: 2))
        let since = try JSONSerialization.jsonObject(with: Data(try await phone.call("GET", "/sync", query: ["timeout": "0"]))) as? [String: Any]
        var position = try #require(since?["next_batch"] as? String)
        let answer = try await dashboard.post("/api/chats/\(chat["id"] as? Int64 ?? 0)/read?account=primary")
        #expect(answer.status == 200)
        // The phone hears of it through its own sync: the fully-read marker at the newest message.
        var marker: String?
        for _ in 0..<20 where marker == nil {
            let sync = try JSONSerialization.jsonObject(with: Data(try await phone.call("GET", "/sync", query: ["since": position, "timeout": "10000"],
                                                                                        timeout: .seconds(20)))) as? [String: Any] ?? [:]
            position = sync["next_batch"] as? String ?? position
            let joined = sync[path: "rooms", "join", world.room] as? [String: Any] ?? [:]
            for event in joined[path: "account_data", "events"] as? [[String: Any]] ?? [] where event["type"] as? String == "m.fully_read" {
                marker = event[path: "content", "event_id"] as? String
            }
        }
        #expect(marker == fresh[1], "read here, so read on the phone")
    }

    /// A PNG of 2 x 2 pixels.
    static let png: [UInt8] = Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==")!)

    @Test func imagesAndFilesComeThroughTheMediaRouteAsUploadedAndNothingRunsOrLeavesTheRules() async throws {
        let world = try await World.make()
        let picture = try await world.bob.upload(Self.png, contentType: "image/png", filename: "dot.png")
        let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8)
        let drawing = try await world.bob.upload(svg, contentType: "image/svg+xml", filename: "drawing.svg")
        _ = try await world.bob.sendContent(world.room, ["msgtype": "m.image", "body": "dot.png", "url": picture,
                                                         "info": ["mimetype": "image/png", "size": Self.png.count, "w": 2, "h": 2]])
        _ = try await world.bob.sendContent(world.room, ["msgtype": "m.file", "body": "drawing.svg", "url": drawing,
                                                         "info": ["mimetype": "image/svg+xml", "size": svg.count]])
        let dashboard = try await world.dashboard()
        let state = try await dashboard.state { ($0[path: "messages", "primary"] as? [Any])?.count == 2 }
        let messages = (state[path: "messages", "primary"] as? [[String: Any]] ?? []).reversed()
        let image = try #require(messages.first)
        #expect(image["kind"] as? String == "image")
        #expect(image[path: "media", "name"] as? String == "dot.png")
        #expect(image[path: "media", "mimetype"] as? String == "image/png")
        let imageURL = try #require(image[path: "media", "url"] as? String)
        let serverAndID = picture.dropFirst("mxc://".count).split(separator: "/").map { MatrixTestClient.pathComponent(String($0)) }
        #expect(imageURL == "/api/media/\(serverAndID.joined(separator: "/"))")

        let served = try await dashboard.fetch(imageURL)
        #expect(served.status == 200)
        #expect(served.body == Self.png, "the bytes bob uploaded")
        #expect(served.header("Content-Type") == "image/png")
        #expect(served.header("Content-Security-Policy") == "sandbox; default-src 'none'")
        #expect(try await dashboard.fetch(imageURL + "?thumbnail=1").status == 200, "a thumbnail")

        let file = try #require(messages.last)
        #expect(file["kind"] as? String == "file")
        let fileURL = try #require(file[path: "media", "url"] as? String)
        let download = try await dashboard.fetch(fileURL)
        #expect(download.body == svg)
        #expect(download.header("Content-Type") == "application/octet-stream", "an SVG is never drawn by the page")
        #expect(download.header("Content-Disposition") == "attachment")

        // Nothing outside the homeserver's media of a checked id is ever asked for.
        for hostile in ["/api/media/localhost/%2E%2E", "/api/media/..%2Fetc/passwd", "/api/media/localhost/a%2Fb",
                        "/api/media/evil.example%2F..%2F/x", "/api/media/localhost/" + String(repeating: "a", count: 300), "/api/media/%00/x"] {
            let status = try await dashboard.fetch(hostile).status
            #expect(status == 400, "\(hostile): \(status)")
        }
        _ = await dashboard.stop()
        // What was fetched is kept beside the store, for the next time the chat is opened.
        let cached = (try? FileManager.default.contentsOfDirectory(atPath: world.folder.appendingPathComponent("store.media").path)) ?? []
        #expect(cached.count == 3, "the image, its thumbnail and the file: \(cached)")
    }

    @Test func unnamedRoomsAreNamedAsElementNamesThemAndTheListIsInTheOrderOfLastActivity() async throws {
        let world = try await World.make()
        let alice = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        let bobID = try #require(world.bob.session?.userId)
        try await world.bob.setDisplayName("Bob Builder")
        // A direct chat as Element starts one: no name, is_direct, and marked in the account's m.direct.
        let created = try await world.bob.call("POST", "/createRoom", json: ["is_direct": true, "preset": "trusted_private_chat", "invite": [world.aliceID]])
        let direct = try #require((try JSONSerialization.jsonObject(with: Data(created)) as? [String: Any])?["room_id"] as? String)
        try await alice.join(direct)
        try await alice.call("PUT", "/user/\(MatrixTestClient.pathComponent(world.aliceID))/account_data/m.direct", json: [bobID: [direct]])
        // An unnamed group of three.
        let carolID = try await world.server.registerUser("carol", password: "carol-password")
        let carol = try await MatrixTestClient.signIn(world.server, user: carolID, password: "carol-password")
        let group = try await world.bob.createRoom(invite: [world.aliceID, carolID])
        try await alice.join(group)
        try await carol.join(group)
        _ = try await world.bob.send(direct, text: "just us")
        _ = try await carol.send(group, text: "the three of us")
        _ = try await world.bob.send(world.room, text: "and lunch")
        let dashboard = try await world.dashboard()
        func names() async throws -> [String] {
            (try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        _ = try await dashboard.state { ($0[path: "messages", "primary"] as? [Any])?.count == 3 }
        let first = try await names()
        #expect(first == ["Lunch", "Bob Builder and carol", "Bob Builder"], "named for the others, the latest active first: \(first)")
        // Activity reorders the list, as in Element.
        _ = try await world.bob.send(direct, text: "still there?")
        var seq = try await dashboard.json("/api/state")["seq"] as? Int ?? 0
        for _ in 0..<30 where try await names().first != "Bob Builder" {
            seq = try await dashboard.json("/api/poll?since=\(seq)&timeout=5&visible=1")["seq"] as? Int ?? seq
        }
        let after = try await names()
        #expect(after == ["Bob Builder", "Lunch", "Bob Builder and carol"], "\(after)")
        _ = await dashboard.stop()
    }

    @Test func roomsLeftOrKickedFromStayAsArchivesUntilTheyAreRemovedOnRequest() async throws {
        let world = try await World.make()
        let alice = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        let kicked = try await world.bob.createRoom(name: "Kicked", invite: [world.aliceID])
        try await alice.join(kicked)
        _ = try await world.bob.send(world.room, text: "in lunch")
        _ = try await world.bob.send(kicked, text: "in kicked")
        let dashboard = try await world.dashboard()
        func chats() async throws -> [String: [String: Any]] {
            let list = try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]] ?? []
            return Dictionary(list.map { ($0["name"] as? String ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
        }
        _ = try await dashboard.state { ($0[path: "messages", "primary"] as? [Any])?.count == 2 }
        #expect(try await chats().mapValues { $0["membership"] as? String } == ["Lunch": "join", "Kicked": "join"])

        _ = try await world.bob.send(kicked, text: "the last words before the kick")
        try await world.bob.call("POST", "/rooms/\(MatrixTestClient.pathComponent(kicked))/kick", json: ["user_id": world.aliceID])
        try await alice.call("POST", "/rooms/\(MatrixTestClient.pathComponent(world.room))/leave", json: [:])
        var seq = try await dashboard.json("/api/state")["seq"] as? Int ?? 0
        for _ in 0..<30 where try await chats().values.contains(where: { $0["membership"] as? String == "join" }) {
            seq = try await dashboard.json("/api/poll?since=\(seq)&timeout=10&visible=1")["seq"] as? Int ?? seq
        }
        let archived = try await chats()
        #expect(archived.mapValues { $0["membership"] as? String } == ["Lunch": "leave", "Kicked": "leave"], "both kept, as archives")
        #expect(archived["Kicked"]?["messageCount"] as? Int == 2, "what was said up to the kick is kept")

        let kickedID = try #require(archived["Kicked"]?["id"] as? Int64)
        #expect(try await dashboard.send("DELETE", "/api/chats/\(kickedID)?account=primary").status == 204)
        #expect(try await chats().keys.sorted() == ["Lunch"], "removed on request, and only that one")
        let texts = try await Self.texts(dashboard)
        #expect(texts == ["in lunch"], "its messages went with it: \(texts)")
        _ = await dashboard.stop()
    }

    @Test func aWholeHistoryOfThreeRoomsIsFetchedOnceInOrderAndAKillInTheMiddleResumes() async throws {
        let world = try await World.make()
        let alice = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        var rooms = ["Lunch": world.room]
        for name in ["Trips", "Books"] {
            let room = try await world.bob.createRoom(name: name, invite: [world.aliceID])
            try await alice.join(room)
            rooms[name] = room
        }
        let perRoom = 1_500
        try await withThrowingTaskGroup(of: Void.self) { group in
            for room in rooms.values {
                group.addTask { _ = try await world.bob.sendMany(room, count: perRoom, prefix: "message", inFlight: 4) }
            }
            try await group.waitForAll()
        }
        // Each room as the homeserver holds it (sent several at a time, it took them in its order).
        var expected: [String: [String]] = [:]
        for (name, room) in rooms {
            let timeline = try await world.bob.allMessageBodies(room)
            #expect(Set(timeline) == Set((1...perRoom).map { "message \($0)" }) && timeline.count == perRoom)
            expected[name] = timeline
        }
        // The first sync brings the newest 50 of each room; the rest is older history.
        let older = Int64(rooms.count * (perRoom - 50))

        let first = try await world.dashboard()
        let midway = try await first.state(until: { ($0[path: "history", "fetched"] as? Int64 ?? 0) >= 1_000 }, rounds: 400)
        _ = await first.kill()
        let fetchedBeforeKill = try #require(midway[path: "history", "fetched"] as? Int64)
        #expect(fetchedBeforeKill < older, "killed while history was being fetched")
        #expect(midway[path: "history", "complete"] as? Bool == false)

        let second = try await world.dashboard(password: nil)
        let done = try await second.state(until: { $0[path: "history", "complete"] as? Bool == true }, rounds: 400)
        #expect(done[path: "history", "fetched"] as? Int64 == older, "every older message stored once, across the kill")
        #expect(done[path: "history", "roomsPending"] as? Int == 0)
        // "Show older" reaches each room's first message: the chat's pages, as the page reads them.
        let chats = try await second.json("/api/chats?account=primary")["chats"] as? [[String: Any]] ?? []
        for chat in chats {
            var texts: [String] = []
            var before: Int64?
            repeat {
                let page = try await second.json("/api/messages?account=primary&chat=\(chat["id"] as? Int64 ?? 0)&limit=500"
                                                 + (before.map { "&before=\($0)" } ?? ""))
                // Newest first, as each page comes.
                texts = ((page["messages"] as? [[String: Any]]) ?? []).compactMap { $0["text"] as? String }.reversed() + texts
                before = page["nextBefore"] as? Int64
            } while before != nil
            #expect(texts == expected[chat["name"] as? String ?? ""], "\(chat["name"] ?? "?"): \(texts.count) messages, in order")
        }
        _ = await second.stop()
        let stored = try await Self.storedByChat(at: world.storePath)
        #expect(Set(stored.keys) == Set(rooms.keys))
        for (name, texts) in stored {
            #expect(texts == expected[name], "\(name): every message once, in order (\(texts.count) stored)")
        }
    }

    @Test func historyArrivesSilentlyThenBobsMessageNotifiesLive() async throws {
        let world = try await World.make()
        for index in 1...5 { _ = try await world.bob.send(world.room, text: "before \(index)") }

        let dashboard = try await world.dashboard()
        let first = try await Self.follow(dashboard, from: 0) { $0.count >= 5 }
        #expect(first.heard.map(\.text) == (1...5).map { "before \($0)" })
        #expect(first.heard.allSatisfy { !$0.notify }, "the first sync of an account is history: no notifications")

        _ = try await world.bob.send(world.room, text: "are you coming?")
        let live = try await Self.follow(dashboard, from: first.seq) { !$0.isEmpty }
        #expect(live.heard == [Heard(text: "are you coming?", notify: true, caughtUp: false)])

        let answers = try await [dashboard.json("/api/state"), dashboard.json("/api/messages?account=primary"), dashboard.json("/api/session")]
            .map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let exit = await dashboard.stop()
        let stored = try await Self.stored(at: world.storePath)
        #expect(stored.texts == (1...5).map { "before \($0)" } + ["are you coming?"])
        #expect(stored.chatNames == ["Lunch"], "a room is a chat with its name")
        let store = try MessageStore(location: .file(world.storePath))
        let token = try #require(try await store.credential("matrix.access_token"), "the token is kept for the next start")
        await store.close()
        for secret in [Self.alicePassword, token] {
            #expect(!exit.stderr.contains(secret), "never in the log, even at debug level")
            #expect(!answers.contains { $0.contains(secret) }, "never in an API answer")
        }
    }

    /// Follows the feed until `count` messages were heard live; each as `(text, attention)`.
    static func attentions(_ dashboard: RunningDashboard, from since: Int, count: Int) async throws -> (heard: [String: String], seq: Int) {
        var heard: [String: String] = [:], seq = since
        for _ in 0..<100 where heard.count < count {
            let answer = try await dashboard.json("/api/poll?since=\(seq)&timeout=10&visible=1")
            seq = answer["seq"] as? Int ?? seq
            for event in answer["events"] as? [[String: Any]] ?? [] where event["type"] as? String == "messages" {
                for message in (event["data"] as? [String: Any])?["messages"] as? [[String: Any]] ?? [] {
                    heard[message["text"] as? String ?? ""] = message["attention"] as? String ?? "(none)"
                }
            }
        }
        return (heard, seq)
    }

    @Test func theAccountsOwnPushRulesDecideWhatIsToldWhatIsAMentionAndWhatStaysQuiet() async throws {
        let world = try await World.make()
        _ = try await world.bob.send(world.room, text: "before")
        let dashboard = try await world.dashboard()
        let first = try await Self.follow(dashboard, from: 0) { $0.count >= 1 }

        // Bob, as any client does: a message, a notice (a bot's), and a mention of alice.
        _ = try await world.bob.send(world.room, text: "lunch?")
        _ = try await world.bob.sendContent(world.room, ["msgtype": "m.notice", "body": "build passed"])
        _ = try await world.bob.sendContent(world.room, ["msgtype": "m.text", "body": "alice: are you coming?",
                                                         "m.mentions": ["user_ids": [world.aliceID]]])
        let live = try await Self.attentions(dashboard, from: first.seq, count: 3)
        #expect(live.heard == ["lunch?": "notify", "build passed": "quiet", "alice: are you coming?": "mention"])

        // The chat's counts are the homeserver's, as alice's other client reads them: the notice
        // is not unread, the mention is one.
        let alice = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        let counts = try #require(try await alice.sync().unreadCounts[world.room])
        #expect(counts.notifications == 3 && counts.highlights == 1, "before + lunch? + the mention: \(counts)")
        let chat = (try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]])?.first
        #expect(chat?["unread"] as? Int == counts.notifications && chat?["highlights"] as? Int == counts.highlights, "\(chat ?? [:])")

        // Alice mutes the room in her other client, as Element's "Mute" does; what comes next stays quiet.
        try await alice.call("PUT", "/pushrules/global/override/\(MatrixTestClient.pathComponent(world.room))",
                             json: ["conditions": [["kind": "event_match", "key": "room_id", "pattern": world.room]], "actions": []])
        _ = try await world.bob.send(world.room, text: "after the mute")
        let muted = try await Self.attentions(dashboard, from: live.seq, count: 1)
        #expect(muted.heard == ["after the mute": "quiet"])
        let mutedChat = (try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]])?.first
        #expect(mutedChat?["unread"] as? Int == counts.notifications, "a muted room's message is not unread, as the homeserver counts: \(mutedChat ?? [:])")

        // What was judged is kept: a mention reads as one after a restart too.
        let stored = try await dashboard.json("/api/messages?account=primary")["messages"] as? [[String: Any]] ?? []
        let kept = Dictionary(stored.map { ($0["text"] as? String ?? "", $0["attention"] as? String ?? "(none)") }, uniquingKeysWith: { a, _ in a })
        #expect(kept["alice: are you coming?"] == "mention" && kept["after the mute"] == "quiet" && kept["lunch?"] == "notify")
        #expect(kept["before"] == "notify", "history is judged too (the first sync only tells nothing)")
        _ = await dashboard.stop()
    }

    @Test func twoThousandMessagesSentWhileStoppedAreAllStoredOnceInOrder() async throws {
        let world = try await World.make()
        _ = try await world.bob.send(world.room, text: "before the stop")
        let first = try await world.dashboard(timelineLimit: 10)
        _ = try await Self.follow(first, from: 0) { $0.count >= 1 }
        _ = await first.stop()

        _ = try await world.bob.sendMany(world.room, count: 2000, prefix: "while stopped", inFlight: 8)
        // No password this time: the token and device kept in the store are enough.
        let second = try await world.dashboard(password: nil, timelineLimit: 10)
        let caughtUp = try await Self.follow(second, from: 0, rounds: 400) { $0.count >= 2000 }
        #expect(caughtUp.heard.count == 2000)
        let notCaughtUp = caughtUp.heard.filter { !$0.caughtUp }
        #expect(notCaughtUp.isEmpty, "what arrived while stopped is one summary, not 2,000 notifications: \(notCaughtUp.count) were not")
        let exit = await second.stop()
        #expect(exit.stderr.contains("filled a gap"), "the timeline limit of 10 left a gap that was filled")

        let stored = try await Self.stored(at: world.storePath)
        let timeline = try await world.bob.allMessageBodies(world.room)
        #expect(Set(timeline) == Set(["before the stop"] + (1...2000).map { "while stopped \($0)" }) && timeline.count == 2001)
        #expect(stored.texts == timeline, "every message once, in the homeserver's timeline order")
    }

    @Test func aHomeserverKilledDuringAHeldSyncComesBackAndNothingIsLost() async throws {
        let world = try await World.make()
        let dashboard = try await world.dashboard()
        var state = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        #expect(state[path: "connection", "state"] as? String == "live")

        _ = try await world.bob.sendMany(world.room, count: 3, prefix: "just before the crash")
        await world.server.kill()
        state = try await dashboard.state { $0[path: "connection", "state"] as? String == "waiting" && ($0[path: "connection", "attempt"] as? Int ?? 0) >= 2 }
        #expect(state[path: "connection", "state"] as? String == "waiting", "the connection waits with backoff while the homeserver is gone")
        #expect((state["errors"] as? [[String: Any]])?.first?["type"] as? String == "/problems/upstream-unreachable")

        try await world.server.restart()
        state = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" && ($0["errors"] as? [Any])?.isEmpty == true }
        #expect(state[path: "connection", "state"] as? String == "live")
        _ = try await world.bob.send(world.room, text: "after the restart")
        _ = try await dashboard.state { state in
            (state[path: "messages", "primary"] as? [[String: Any]])?.first?["text"] as? String == "after the restart"
        }
        _ = await dashboard.stop()
        let stored = try await Self.stored(at: world.storePath)
        #expect(stored.texts == (1...3).map { "just before the crash \($0)" } + ["after the restart"])
    }

    @Test func aTokenSignedOutElsewhereIsReplacedSilentlyAsTheSameDevice() async throws {
        let world = try await World.make()
        let dashboard = try await world.dashboard()
        let first = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }

        // Alice signs out every session from another device.
        let elsewhere = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        _ = try await elsewhere.call("POST", "/logout/all", json: [:])
        _ = try await world.bob.send(world.room, text: "after the sign-out")
        let heard = try await Self.follow(dashboard, from: first["seq"] as? Int ?? 0) { $0.contains { $0.text == "after the sign-out" } }
        #expect(heard.heard.contains(Heard(text: "after the sign-out", notify: true, caughtUp: false)))

        let state = try await dashboard.json("/api/state")
        #expect((state["errors"] as? [Any])?.isEmpty == true, "signing in again was silent")
        #expect((state["recentProblems"] as? [[String: Any]] ?? []).allSatisfy { $0["type"] as? String != "/problems/token-refused" })
        let exit = await dashboard.stop()
        #expect(exit.stderr.contains("signing in again"))

        let checker = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        let devices = try JSONSerialization.jsonObject(with: Data(try await checker.call("GET", "/devices"))) as? [String: Any]
        let dashboards = (devices?["devices"] as? [[String: Any]] ?? []).filter { $0["display_name"] as? String == "Long-poll dashboard" }
        #expect(dashboards.count == 1, "signed in again as the same device, not a new one")
    }

    @Test func withoutAPasswordARefusedTokenAsksToSignInAgainAndThePasswordTypedWorksOnce() async throws {
        let world = try await World.make()
        let first = try await world.dashboard()
        _ = try await first.state { $0[path: "connection", "state"] as? String == "live" }
        _ = await first.stop()
        let elsewhere = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        _ = try await elsewhere.call("POST", "/logout/all", json: [:])

        let dashboard = try await world.dashboard(password: nil)
        var state = try await dashboard.state { ($0["errors"] as? [[String: Any]])?.first?["type"] as? String == "/problems/token-refused" }
        var error = try #require((state["errors"] as? [[String: Any]])?.first)
        #expect((error["options"] as? [[String: Any]])?.map { $0["id"] as? String } == ["sign-in", "stop-syncing"])
        #expect((error["options"] as? [[String: Any]])?.first?["input"] as? String == "password")

        let wrong = try await dashboard.post("/api/errors/\(error["id"] as? String ?? "")/attempts", #"{"option":"sign-in","password":"not it"}"#,
                                             extraHeaders: ["Idempotency-Key": "wrong"])
        #expect(wrong.body["status"] as? String == "failed")
        state = try await dashboard.json("/api/state")
        error = try #require((state["errors"] as? [[String: Any]])?.first)
        let right = try await dashboard.post("/api/errors/\(error["id"] as? String ?? "")/attempts",
                                             #"{"option":"sign-in","password":"\#(Self.alicePassword)"}"#, extraHeaders: ["Idempotency-Key": "right"])
        #expect(right.body["status"] as? String == "recovered")
        state = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        #expect((state["errors"] as? [Any])?.isEmpty == true)
        // "Used once and not stored": signed out elsewhere again, the dashboard asks again
        // instead of signing in with the password typed before.
        let again = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        _ = try await again.call("POST", "/logout/all", json: [:])
        state = try await dashboard.state { ($0["errors"] as? [[String: Any]])?.first?["type"] as? String == "/problems/token-refused" }
        let exit = await dashboard.stop()
        #expect(!exit.stderr.contains(Self.alicePassword))
    }

    @Test func aRateLimitedSignInWaitsAtLeastAsLongAsTheHomeserverAsks() async throws {
        // Four sign-ins at once, then one per 20 s. Alice signs in elsewhere until the homeserver
        // refuses (however much of the burst the world and the dashboard left, on a machine as busy
        // as it may be), then signs every device out: the dashboard's next sign-in meets the 429.
        let world = try await World.make(rcLogin: SynapseServer.RateLimit(perSecond: 0.05, burstCount: 4))
        let dashboard = try await world.dashboard()
        _ = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        var elsewhere = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        for _ in 0..<20 {
            do {
                elsewhere = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
            } catch MatrixTestClientError.refused(_, status: 429, _) {
                break
            }
        }
        _ = try await elsewhere.call("POST", "/logout/all", json: [:])

        let waiting = try await dashboard.state { state in
            (state["errors"] as? [[String: Any]] ?? []).contains { $0["type"] as? String == "/problems/upstream-error" }
                && state[path: "connection", "retryAt"] is String
        }
        let error = try #require((waiting["errors"] as? [[String: Any]])?.first { $0["type"] as? String == "/problems/upstream-error" })
        let raisedAt = try #require((error["createdAt"] as? String).flatMap(Self.date))
        let retryAt = try #require((waiting[path: "connection", "retryAt"] as? String).flatMap(Self.date))
        // What the homeserver asked, as the error's debug text carries it: "... asked to wait 8.123 seconds".
        let debug = error[path: "debug", "underlying"] as? String ?? ""
        let asked = try #require(debug.firstMatch(of: /asked to wait ([0-9.]+) seconds/).flatMap { Double($0.1) }, "\(debug)")
        #expect(asked > 1, "longer than the backoff's cap of 1 s, so the wait below can only be the homeserver's")
        #expect(retryAt.timeIntervalSince(raisedAt) >= asked - 0.5, "waited at least what was asked (\(asked) s; the page hears of the error a moment after the engine)")

        _ = try await world.bob.send(world.room, text: "after the wait")
        let live = try await dashboard.state { state in
            (state[path: "messages", "primary"] as? [[String: Any]])?.first?["text"] as? String == "after the wait"
        }
        #expect(live[path: "connection", "state"] as? String == "live")
        let exit = await dashboard.stop()
        #expect(exit.stderr.contains("429 rate limited"))
    }

    @Test func htmlAndLongMessagesAreStoredAsTheTextTheyCarry() async throws {
        let world = try await World.make()
        let dashboard = try await world.dashboard()
        let first = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        let html = "<script>alert(1)</script> & <b>bold</b>"
        let long = String(repeating: "0123456789", count: 1000)
        _ = try await world.bob.send(world.room, text: html, html: "<b>bold</b>")
        _ = try await world.bob.send(world.room, text: long)
        let heard = try await Self.follow(dashboard, from: first["seq"] as? Int ?? 0) { $0.count >= 2 }
        #expect(heard.heard.map(\.text) == [html, long], "the body as it was sent: HTML is text here, 10,000 characters whole")
        _ = await dashboard.stop()
    }

    @Test func editsRedactionsAndRepliesFromAnotherClientShowAsInThatClient() async throws {
        let world = try await World.make()
        // Before the first start: an edited message and a deleted one.
        let typo = try await world.bob.send(world.room, text: "lunch at nonn")
        _ = try await world.bob.edit(world.room, typo, to: "lunch at noon")
        let regret = try await world.bob.send(world.room, text: "something to take back")
        try await world.bob.redact(world.room, regret)
        let dashboard = try await world.dashboard()
        let first = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        _ = try await Self.follow(dashboard, from: 0) { !$0.isEmpty }
        let history = try await Self.texts(dashboard)
        #expect(history == ["lunch at noon"], "the edit shown, the deleted message gone, no '* ' message")

        // Live, acted on by another client while the dashboard watches.
        let plan = try await world.bob.send(world.room, text: "meet at the door")
        _ = try await world.bob.reply(world.room, to: plan, quoting: "meet at the door", by: world.bob.session?.userId ?? "", text: "or inside?")
        _ = try await world.bob.edit(world.room, plan, to: "meet at the back door")
        try await world.bob.redact(world.room, typo)
        var seq = first["seq"] as? Int ?? 0
        var changed: [String] = [], removed = 0
        for _ in 0..<40 where changed.isEmpty || removed == 0 {
            let answer = try await dashboard.json("/api/poll?since=\(seq)&timeout=5&visible=1")
            seq = answer["seq"] as? Int ?? seq
            for event in answer["events"] as? [[String: Any]] ?? [] {
                let data = event["data"] as? [String: Any] ?? [:]
                switch event["type"] as? String {
                case "message.changed": changed.append(data[path: "message", "text"] as? String ?? "")
                case "message.removed": removed += 1
                default: break
                }
            }
        }
        #expect(changed == ["meet at the back door"])
        #expect(removed == 1)
        let live = try await Self.texts(dashboard)
        #expect(live == ["or inside?", "meet at the back door"], "newest first; the reply without its quote; the first message deleted")
        let page = try await dashboard.json("/api/messages?account=primary")
        let edited = (page["messages"] as? [[String: Any]] ?? []).first { $0["text"] as? String == "meet at the back door" }
        #expect(edited?["editedAt"] is String)
        let answer = (page["messages"] as? [[String: Any]] ?? []).first { $0["text"] as? String == "or inside?" }
        #expect(answer?["replyTo"] as? Int64 == edited?["id"] as? Int64, "a reply names the stored message it answers")
        #expect(edited?.keys.contains("replyTo") == false, "a message that is no reply has no replyTo")
        let search = try await dashboard.json("/api/search?q=door&account=primary")
        #expect((search["results"] as? [[String: Any]] ?? []).count == 1)
        let old = try await dashboard.json("/api/search?q=nonn&account=primary")
        #expect((old["results"] as? [[String: Any]] ?? []).isEmpty, "the old words are not found")
        // An edit by someone else than the sender changes nothing.
        let alice = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        _ = try await alice.edit(world.room, plan, to: "hijacked")
        _ = try await world.bob.send(world.room, text: "after the foreign edit")
        // The foreign edit came before this message: once it is stored, the edit was seen.
        for _ in 0..<40 {
            if try await Self.texts(dashboard).first == "after the foreign edit" { break }
            let answer = try await dashboard.json("/api/poll?since=\(seq)&timeout=5&visible=1")
            seq = answer["seq"] as? Int ?? seq
        }
        let after = try await Self.texts(dashboard)
        #expect(after == ["after the foreign edit", "or inside?", "meet at the back door"], "an edit by another than the sender is ignored")
        _ = await dashboard.stop()
    }

    @Test func sendersByTheirDisplayNamesKindsAndAnEncryptedRoomSaidPlainly() async throws {
        let world = try await World.make()
        try await world.bob.setDisplayName("Bob Builder")
        _ = try await world.bob.send(world.room, text: "named")
        _ = try await world.bob.sendContent(world.room, ["msgtype": "m.emote", "body": "waves"])
        let secret = try await world.bob.createRoom(name: "Secret", invite: [world.aliceID], encrypted: true)
        let alice = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: Self.alicePassword)
        try await alice.join(secret)
        // What an Olm/Megolm client sends; Synapse stores it as it is.
        _ = try await world.bob.sendContent(secret, ["algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnAC", "sender_key": "k",
                                                     "device_id": "D", "session_id": "s"], type: "m.room.encrypted")
        let dashboard = try await world.dashboard()
        _ = try await Self.follow(dashboard, from: 0) { $0.count >= 3 }
        let page = try await dashboard.json("/api/messages?account=primary")
        let messages = page["messages"] as? [[String: Any]] ?? []
        let kinds = Dictionary(uniqueKeysWithValues: messages.map { ($0["text"] as? String ?? "", $0["kind"] as? String ?? "") })
        #expect(kinds == ["named": "text", "waves": "emote", "Encrypted message: this dashboard cannot read it.": "encrypted"])
        #expect(messages.map { $0["senderName"] as? String } == ["Bob Builder", "Bob Builder", "Bob Builder"])
        let chats = try await dashboard.json("/api/chats?account=primary")["chats"] as? [[String: Any]] ?? []
        #expect(Dictionary(uniqueKeysWithValues: chats.map { ($0["name"] as? String ?? "", $0["encrypted"] as? Bool) })
                == ["Secret": true, "Lunch": false])
        let search = try await dashboard.json("/api/search?q=encrypted&account=primary")
        #expect((search["results"] as? [Any])?.isEmpty == true, "the placeholder is never found")
        #expect(search["encryptedChatsNotSearched"] as? Int == 1)

        // A new display name: the messages after it carry it, a restart included (full state).
        _ = await dashboard.stop()
        try await world.bob.setDisplayName("Robert")
        // The homeserver puts the new name into each room on its own time: the room says so first.
        for _ in 0..<100 {
            let member = try JSONSerialization.jsonObject(with: Data(try await world.bob.call(
                "GET", "/rooms/\(MatrixTestClient.pathComponent(world.room))/state/m.room.member/\(MatrixTestClient.pathComponent(world.bob.session?.userId ?? ""))")))
            if (member as? [String: Any])?["displayname"] as? String == "Robert" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let restarted = try await world.dashboard()
        let live = try await restarted.state { $0[path: "connection", "state"] as? String == "live" }
        _ = try await world.bob.send(world.room, text: "renamed")
        _ = try await Self.follow(restarted, from: live["seq"] as? Int ?? 0) { $0.contains { $0.text == "renamed" } }
        let after = try await restarted.json("/api/messages?account=primary&limit=1")
        #expect((after["messages"] as? [[String: Any]])?.first?["senderName"] as? String == "Robert")
        _ = await restarted.stop()
    }

    @Test func brokenEventsFromAnotherClientNeverBreakTheCopy() async throws {
        let world = try await World.make()
        let dashboard = try await world.dashboard()
        let first = try await dashboard.state { $0[path: "connection", "state"] as? String == "live" }
        let known = try await world.bob.send(world.room, text: "a message to act on")
        // (Synapse itself refuses a message without a string body; those are tested as values in
        // SyncTranslationTests.)
        for content: [String: Any] in [
            ["msgtype": "org.example.poll", "body": "an unknown type"],          // shown as a file by its body
            ["msgtype": "m.text", "body": "* x", "m.relates_to": ["rel_type": "m.replace", "event_id": known]],  // no new content
            ["msgtype": "m.text", "body": "* x", "m.new_content": "text", "m.relates_to": ["rel_type": "m.replace", "event_id": known]],
            ["msgtype": "m.text", "body": "odd relation", "m.relates_to": ["rel_type": "org.example.thing", "event_id": known]],
            ["msgtype": "m.text", "body": "<img src=x onerror=alert(1)>", "m.relates_to": "nonsense"],
        ] {
            _ = try await world.bob.sendContent(world.room, content)
        }
        try await world.bob.redact(world.room, "$neverSeenEvent-\(UUID().uuidString)")
        _ = try await world.bob.send(world.room, text: "the last one")
        _ = try await Self.follow(dashboard, from: first["seq"] as? Int ?? 0) { $0.contains { $0.text == "the last one" } }
        let texts = try await Self.texts(dashboard)
        #expect(texts == ["the last one", "<img src=x onerror=alert(1)>", "odd relation", "an unknown type", "a message to act on"],
                "stored plainly or skipped; nothing else in the batch lost")
        let state = try await dashboard.json("/api/state")
        #expect(state[path: "connection", "state"] as? String == "live")
        let exit = await dashboard.stop()
        #expect(exit.stderr.components(separatedBy: "such messages and reactions are skipped quietly from now on").count == 2,
                "the unreadable ones are said once in the log, not once each")
    }

    /// The texts of alice's stored messages, newest first, as the page reads them.
    static func texts(_ dashboard: RunningDashboard) async throws -> [String] {
        let page = try await dashboard.json("/api/messages?account=primary&limit=100")
        return (page["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
    }

    static func date(_ text: String) -> Date? {
        try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }
}
