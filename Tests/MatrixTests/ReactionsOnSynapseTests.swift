import Foundation
import Testing
import TestSupport

/// Reactions of a Matrix account on a real Synapse (`m.reaction`, `m.annotation`), given and taken
/// back by other clients through the client-server API and by the dashboard's own routes: what
/// the dashboard shows is what the homeserver holds, and what it sends every other client sees.
@Suite("Reactions on a real Synapse", .requiresSynapse, .serialized)
struct ReactionsOnSynapseTests {
    typealias World = DashboardOnSynapseTests.World

    /// The reactions of the stored message `text`, as "key count" with " mine" for the account's.
    private static func reactions(_ dashboard: RunningDashboard, on text: String) async throws -> [String]? {
        let page = try await dashboard.json("/api/messages?account=primary&limit=100")["messages"] as? [[String: Any]] ?? []
        guard let message = page.first(where: { $0["text"] as? String == text }) else { return nil }
        return (message["reactions"] as? [[String: Any]])?.map { reaction in
            "\(reaction["key"] as? String ?? "?") \(reaction["count"] as? Int ?? -1)\(reaction["mine"] as? Bool == true ? " mine" : "")"
        }
    }

    private static func message(_ dashboard: RunningDashboard, _ text: String) async throws -> [String: Any]? {
        let page = try await dashboard.json("/api/messages?account=primary&limit=100")["messages"] as? [[String: Any]] ?? []
        return page.first { $0["text"] as? String == text }
    }

    private static func drained(_ dashboard: RunningDashboard) async throws {
        try await dashboard.until("the outbox is empty") {
            (try await dashboard.json("/api/outbox")["outbox"] as? [[String: Any]] ?? []).isEmpty
        }
    }

    @Test func reactionsFromEveryClientShowHereAndWhatIsGivenOrTakenBackHereIsWhatTheRoomHolds() async throws {
        let world = try await World.make()
        try await world.bob.setDisplayName("Bob")
        let lunch = try await world.bob.send(world.room, text: "lunch?")
        _ = try await world.bob.react(world.room, to: lunch, "👍")
        // Alice's phone, another client of the account the dashboard syncs.
        let phone = try await MatrixTestClient.signIn(world.server, user: world.aliceID, password: DashboardOnSynapseTests.alicePassword)
        _ = try await phone.react(world.room, to: lunch, "🎉")
        let dashboard = try await world.dashboard()
        try await dashboard.until("the history's reactions") { try await Self.reactions(dashboard, on: "lunch?") == ["👍 1", "🎉 1 mine"] }
        let first = try #require(try await Self.message(dashboard, "lunch?"))
        let senders = (first["reactions"] as? [[String: Any]])?.first?["senders"] as? [String]
        #expect(senders == ["Bob"], "who reacted, by the name the room gives them")

        // Live, from another client.
        let wow = try await world.bob.react(world.room, to: lunch, "😮")
        try await dashboard.until("bob's live reaction") { try await Self.reactions(dashboard, on: "lunch?") == ["👍 1", "🎉 1 mine", "😮 1"] }

        // Given here: one reaction in the room, from alice, whatever the number of requests.
        let id = try #require(first["id"] as? Int)
        let chat = try #require(first["chatId"] as? Int)
        let path = "/api/chats/\(chat)/messages/\(id)/reactions/\(MatrixTestClient.pathComponent("👍"))?account=primary"
        let given = try await dashboard.send("PUT", path)
        #expect(given.status == 202)
        // Asked again: the same entry while it waits, or nothing to do once it is there; never a second.
        let again = try await dashboard.send("PUT", path)
        #expect(again.status == 204 || (again.status == 202 && again.body["outboxId"] as? Int == given.body["outboxId"] as? Int),
                "the same wish is the same entry: \(again)")
        try await Self.drained(dashboard)
        let held = try await world.bob.reactions(world.room, on: lunch)
        #expect(held.filter { $0.key == "👍" }.map(\.sender).sorted() == [world.aliceID, try #require(world.bob.session?.userId)].sorted())
        try await dashboard.until("alice's 👍 stored as hers") { try await Self.reactions(dashboard, on: "lunch?") == ["👍 2 mine", "🎉 1 mine", "😮 1"] }
        #expect(try await dashboard.send("PUT", path).status == 204, "already given: nothing goes")

        // Taken back here: the one alice gave from her phone is redacted in the room.
        let party = "/api/chats/\(chat)/messages/\(id)/reactions/\(MatrixTestClient.pathComponent("🎉"))?account=primary"
        #expect(try await dashboard.send("DELETE", party).status == 202)
        try await Self.drained(dashboard)
        #expect(try await world.bob.reactions(world.room, on: lunch).contains { $0.key == "🎉" } == false, "gone for every client")
        try await dashboard.until("🎉 gone here") { try await Self.reactions(dashboard, on: "lunch?") == ["👍 2 mine", "😮 1"] }
        #expect(try await dashboard.send("DELETE", party).status == 204, "nothing of alice's is left to take back")

        // Taken back by bob in his client.
        try await world.bob.redact(world.room, wow)
        try await dashboard.until("bob's 😮 gone") { try await Self.reactions(dashboard, on: "lunch?") == ["👍 2 mine"] }
        _ = await dashboard.stop()
    }

    @Test func olderHistoryBringsReactionsWithTheirMessagesAndBrokenOnesChangeNothing() async throws {
        let world = try await World.make()
        let old = try await world.bob.send(world.room, text: "an old question")
        _ = try await world.bob.react(world.room, to: old, "👀")
        let regret = try await world.bob.react(world.room, to: old, "👎")
        try await world.bob.redact(world.room, regret)
        // A broken client's reactions (Synapse refuses one without a key, or to an event it does
        // not have: the store's own tests hold those): a key longer than any emoji or word, and a
        // relation that is no object.
        _ = try await world.bob.react(world.room, to: old, String(repeating: "x", count: 300))
        _ = try await world.bob.sendContent(world.room, ["m.relates_to": "not an object"], type: "m.reaction")
        for index in 1...12 { _ = try await world.bob.send(world.room, text: "filler \(index)") }
        // Five events per room in the first sync: the old question and its reactions come with older history.
        let dashboard = try await world.dashboard(timelineLimit: 5)
        try await dashboard.until("the old question with its reaction") { try await Self.reactions(dashboard, on: "an old question") == ["👀 1"] }
        #expect(try await Self.message(dashboard, "filler 12")?["reactions"] as? [Any] != nil, "every Matrix message can carry reactions")
        let texts = (try await dashboard.json("/api/messages?account=primary&limit=100")["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(texts.count == 13, "no reaction, broken or not, became a message: \(texts)")
        _ = await dashboard.stop()
    }
}
