import Foundation
@testable import Store
import Testing
import Upstream

/// Reactions of a Matrix account (`m.annotation`) in a real SQLite file: kept under the message
/// they are on whichever comes first, counted once per person, taken back by a redaction, and
/// given or taken back from here through the outbox.
@Suite("Reactions in the copy")
struct ReactionsTests {
    let folder: TemporaryFolder
    let store: MessageStore

    init() async throws {
        folder = try TemporaryFolder()
        store = try MessageStore(location: .file(folder.path + "/store.sqlite"))
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1001, linkedUserId: nil))
    }

    private func message(_ id: String, _ text: String = "lunch?") -> UpstreamMessage {
        var message = UpstreamMessage(id: 0, chatId: 9, sender: "@bob:test", text: text, sentAt: Self.time(1), eventId: id)
        message.senderName = "Bob"
        return message
    }

    private func reaction(_ id: String, on target: String, _ key: String, from sender: String = "@carol:test", name: String? = nil,
                          mine: Bool = false, at second: Int = 2, sendKey: String? = nil) -> UpstreamMessage {
        var reaction = UpstreamMessage(id: 0, chatId: 9, sender: sender, text: key, sentAt: Self.time(second), eventId: id,
                                       relation: .annotates(eventId: target), sendKey: sendKey)
        reaction.senderName = name
        reaction.byAccount = mine
        return reaction
    }

    private func redaction(_ id: String, of target: String) -> UpstreamMessage {
        UpstreamMessage(id: 0, chatId: 9, sender: "@carol:test", text: "", sentAt: Self.time(59), eventId: id, relation: .redacts(eventId: target))
    }

    private static func time(_ second: Int) -> String { "2026-11-29T12:00:\(second < 10 ? "0" : "")\(second).000Z" }

    private func batch(_ events: [UpstreamMessage]) async throws -> AppliedBatch {
        try await store.applyBatch(events, to: .primary, receivedAt: now, cursor: "s")
    }

    private func shown() async throws -> [Reaction] {
        try await store.messages(of: .primary).messages.first?.reactions ?? []
    }

    private func consistent() async throws {
        #expect(try await store.scannedUsage() == (await store.storageUsage()).usedBytes)
    }

    @Test func aReactionShowsOnItsMessageAsAChangeWithItsCountMineAndWho() async throws {
        _ = try await batch([message("$m")])
        let outcome = try await batch([reaction("$r1", on: "$m", "👍", name: "Carol"),
                                       reaction("$r2", on: "$m", "👍", from: "@me:test", name: "Me", mine: true, at: 3),
                                       reaction("$r3", on: "$m", "🎉", at: 4)])
        #expect(outcome.fresh.isEmpty, "a reaction is never a message of its own")
        #expect(outcome.changed.map(\.reactions) == [[Reaction(key: "👍", count: 2, mine: true, senders: ["Carol", "Me"]),
                                                     Reaction(key: "🎉", count: 1, mine: false, senders: ["@carol:test"])]])
        #expect(try await shown() == outcome.changed.first?.reactions)
        try await consistent()
    }

    @Test func aReactionThatComesBeforeItsMessageShowsOnItWhenItComes() async throws {
        // A page of history is newest first: the reaction before the message it is on.
        let early = try await batch([reaction("$r1", on: "$m", "👀")])
        #expect(early.changed.isEmpty && early.fresh.isEmpty)
        let outcome = try await batch([message("$m")])
        #expect(outcome.fresh.map(\.reactions) == [[Reaction(key: "👀", count: 1, mine: false, senders: ["@carol:test"])]])
        try await consistent()
    }

    @Test func aPersonCountsOnceForAKeyAndTheSameEventTwiceIsOneReaction() async throws {
        _ = try await batch([message("$m")])
        _ = try await batch([reaction("$r1", on: "$m", "👍"), reaction("$r1", on: "$m", "👍"), reaction("$r2", on: "$m", "👍", at: 5)])
        #expect(try await shown() == [Reaction(key: "👍", count: 1, mine: false, senders: ["@carol:test"])])
    }

    @Test func aRedactedReactionLeavesAndOneRedactedBeforeItCameIsNeverStored() async throws {
        _ = try await batch([message("$m"), reaction("$r1", on: "$m", "👍"), reaction("$r2", on: "$m", "🎉", from: "@dan:test")])
        let outcome = try await batch([redaction("$x1", of: "$r1")])
        #expect(outcome.removed.isEmpty, "taking back a reaction removes no message")
        #expect(outcome.changed.map(\.reactions) == [[Reaction(key: "🎉", count: 1, mine: false, senders: ["@dan:test"])]])
        // Redacted first, then the reaction itself comes (a gap filled late): it stays out.
        _ = try await batch([redaction("$x2", of: "$r3")])
        _ = try await batch([reaction("$r3", on: "$m", "😂")])
        #expect(try await shown().map(\.key) == ["🎉"])
        try await consistent()
    }

    @Test func aRedactedMessageTakesItsReactionsWithItAndTheirBytes() async throws {
        _ = try await batch([message("$m"), reaction("$r1", on: "$m", "👍")])
        _ = try await batch([redaction("$x", of: "$m")])
        #expect(try await store.scalarForTesting("SELECT count(*) FROM reactions") == 0)
        try await consistent()
    }

    @Test func aReactionToAnUnknownEventIsKeptQuietlyAndChangesNothingShown() async throws {
        _ = try await batch([message("$m")])
        let outcome = try await batch([reaction("$r1", on: "$nowhere", "👍")])
        #expect(outcome.changed.isEmpty && outcome.fresh.isEmpty && outcome.removed.isEmpty)
        #expect(try await shown().isEmpty)
        try await consistent()
    }

    @Test func deletingAChatTakesItsReactionsAndTheirBytes() async throws {
        _ = try await batch([message("$m"), reaction("$r1", on: "$m", "👍")])
        _ = try await store.deleteChat(9, of: .primary)
        #expect(try await store.scalarForTesting("SELECT count(*) FROM reactions") == 0)
        try await consistent()
    }

    // MARK: Giving and taking back from here

    private func admitted(_ admission: ReactionAdmission) throws -> OutboxEntry {
        guard case .queued(let entry) = admission else {
            Issue.record("not queued: \(admission)")
            throw CancellationError()
        }
        return entry
    }

    private func storedID() async throws -> Int64 {
        try #require(try await store.messages(of: .primary).messages.first?.id)
    }

    @Test func givingAReactionQueuesItOnceAndItsEchoTakesItOutAndMarksItMine() async throws {
        _ = try await batch([message("$m")])
        let id = try await storedID()
        let entry = try admitted(try await store.enqueueReaction("👍", adding: true, to: id, in: 9, of: .primary, upstreamKey: "k1", createdAt: now))
        #expect(entry.action == .react(target: "$m") && entry.targetMessageId == id && entry.text == "👍")
        #expect(try await store.enqueueReaction("👍", adding: true, to: id, in: 9, of: .primary, upstreamKey: "k2", createdAt: now) == .repeated(entry),
                "the same wish again is the entry that waits")
        let echo = try await batch([reaction("$mine", on: "$m", "👍", from: "@me:test", mine: true, sendKey: "k1")])
        #expect(echo.sent == [entry.id])
        #expect(echo.changed.first?.reactions == [Reaction(key: "👍", count: 1, mine: true, senders: ["@me:test"])])
        #expect(try await store.enqueueReaction("👍", adding: true, to: id, in: 9, of: .primary, upstreamKey: "k3", createdAt: now) == .already)
        #expect(try await store.outbox().isEmpty)
    }

    @Test func takingBackNamesTheAccountsOwnReactionAndItsRedactionTakesItOut() async throws {
        _ = try await batch([message("$m"), reaction("$theirs", on: "$m", "👍"), reaction("$mine", on: "$m", "👍", from: "@me:test", mine: true, at: 4)])
        let id = try await storedID()
        let entry = try admitted(try await store.enqueueReaction("👍", adding: false, to: id, in: 9, of: .primary, upstreamKey: "k1", createdAt: now))
        #expect(entry.action == .unreact(target: "$m", reaction: "$mine"))
        let answer = try await store.recordSent([UpstreamMessage(id: 0, chatId: 9, sender: "@me:test", text: "👍", sentAt: now, eventId: "$undo",
                                                                 relation: .redacts(eventId: "$mine"), sendKey: "k1")],
                                                to: .primary, receivedAt: now)
        #expect(answer.sent == [entry.id])
        #expect(answer.changed.first?.reactions == [Reaction(key: "👍", count: 1, mine: false, senders: ["@carol:test"])])
        #expect(try await store.enqueueReaction("👍", adding: false, to: id, in: 9, of: .primary, upstreamKey: "k2", createdAt: now) == .already,
                "nothing of the account's is left to take back")
        try await consistent()
    }

    @Test func takingBackAReactionThatWasNeverSentAnswersItsEntryUnlessItIsOnItsWay() async throws {
        _ = try await batch([message("$m")])
        let id = try await storedID()
        let giving = try admitted(try await store.enqueueReaction("👍", adding: true, to: id, in: 9, of: .primary, upstreamKey: "k1", createdAt: now))
        #expect(try await store.enqueueReaction("👍", adding: false, to: id, in: 9, of: .primary, upstreamKey: "k2", createdAt: now) == .unsentReaction(giving))
        let undo = try admitted(try await store.enqueueReaction("👍", adding: false, to: id, in: 9, of: .primary, behindUnsent: true,
                                                                upstreamKey: "k3", createdAt: now))
        #expect(undo.action == .unreact(target: "$m", reaction: nil), "its reaction is not stored yet: named when it is sent")
        _ = try await batch([reaction("$mine", on: "$m", "👍", from: "@me:test", mine: true, sendKey: "k1")])
        #expect(try await store.outbox().map(\.action) == [.unreact(target: "$m", reaction: "$mine")])
    }

    @Test func aMessageWithoutAnEventIdOrInAnEncryptedOrLeftChatTakesNoReaction() async throws {
        _ = try await store.apply([UpstreamMessage(id: 3, chatId: 1, sender: "bob", text: "plain", sentAt: now)], to: .primary, receivedAt: now)
        #expect(try await store.enqueueReaction("👍", adding: true, to: 3, in: 1, of: .primary, upstreamKey: "k1", createdAt: now) == .notSupported)
        #expect(try await store.enqueueReaction("👍", adding: true, to: 3, in: 2, of: .primary, upstreamKey: "k2", createdAt: now) == .noSuchMessage)
        var secret = message("$s")
        secret.chatEncrypted = true
        _ = try await batch([secret])
        let secretID = try await storedID()
        #expect(try await store.enqueueReaction("👍", adding: true, to: secretID, in: 9, of: .primary, upstreamKey: "k3", createdAt: now) == .encrypted)
        #expect(try await store.outbox().isEmpty)
    }
}
