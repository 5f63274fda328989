import Foundation
import Testing
@testable import Store
import Upstream

/// Edits and redactions of a Matrix account (CONTRACT section 10) in a real SQLite file: applied in
/// the batch's own transaction, in either order, with the search index, counts and usage following.
@Suite("Edits and redactions in the copy")
struct EditsAndRedactionsTests {
    let folder: TemporaryFolder
    let store: MessageStore

    init() throws {
        folder = try TemporaryFolder()
        store = try MessageStore(location: .file(folder.path + "/store.sqlite"))
    }

    private func message(_ id: String, _ text: String, from sender: String = "@bob:test", at second: Int = 1) -> UpstreamMessage {
        UpstreamMessage(id: 0, chatId: 9, sender: sender, text: text, sentAt: Self.time(second), eventId: id)
    }

    private func edit(_ id: String, of target: String, _ text: String, from sender: String = "@bob:test", at second: Int) -> UpstreamMessage {
        UpstreamMessage(id: 0, chatId: 9, sender: sender, text: text, sentAt: Self.time(second), eventId: id, relation: .replaces(eventId: target))
    }

    private func redaction(_ id: String, of target: String) -> UpstreamMessage {
        UpstreamMessage(id: 0, chatId: 9, sender: "@bob:test", text: "", sentAt: Self.time(59), eventId: id, relation: .redacts(eventId: target))
    }

    private static func time(_ second: Int) -> String { "2026-11-29T12:00:\(second < 10 ? "0" : "")\(second).000Z" }

    private func batch(_ events: [UpstreamMessage], cursor: String = "s", unread: UnreadCounting = .none) async throws -> AppliedBatch {
        try await store.applyBatch(events, to: .primary, receivedAt: now, cursor: cursor, unread: unread)
    }

    private func texts() async throws -> [String] {
        try await store.messages(of: .primary).messages.map(\.text)
    }

    private func found(_ words: String) async throws -> [String] {
        try await store.search(SearchQuery(words), account: .primary).results.map(\.message.text)
    }

    private func consistent() async throws {
        #expect(try await store.searchIndexIsSound())
        #expect(try await store.scannedUsage() == (await store.storageUsage()).usedBytes)
        let counted = try await store.scalarForTesting("SELECT count(*) FROM messages WHERE account = 0 AND chat_id = 9")
        #expect(try await store.chats(of: .primary).first { $0.id == 9 }.map(\.messageCount) == counted)
    }

    @Test func anEditChangesItsMessageInPlaceOnceAndSearchFindsOnlyTheNewWords() async throws {
        _ = try await batch([message("$a", "lunch at noon")])
        let outcome = try await batch([edit("$e1", of: "$a", "dinner at eight", at: 5)])
        #expect(outcome.fresh.isEmpty, "an edit is never a message of its own")
        #expect(outcome.changed.map(\.text) == ["dinner at eight"])
        #expect(outcome.changed.first?.editedAt == Self.time(5))
        #expect(try await texts() == ["dinner at eight"])
        #expect(try await found("dinner") == ["dinner at eight"])
        #expect(try await found("lunch").isEmpty)
        try await consistent()
    }

    @Test func theLatestEditWinsInWhateverOrderTheyComeAndBeforeTheirMessage() async throws {
        // History is fetched newest first: the edits come before the message they change.
        let early = try await batch([edit("$e2", of: "$a", "second", at: 7), edit("$e1", of: "$a", "first", at: 5)])
        #expect(early == AppliedBatch(usage: early.usage), "nothing to show until the message comes")
        let outcome = try await batch([message("$a", "original")])
        #expect(outcome.fresh.map(\.text) == ["second"], "the message arrives showing its latest edit")
        #expect(outcome.fresh.first?.editedAt == Self.time(7))
        #expect(try await found("original").isEmpty)
        #expect(try await found("second") == ["second"])
        try await consistent()
    }

    @Test func anEditFromSomeoneElseIsIgnored() async throws {
        _ = try await batch([message("$a", "mine")])
        let outcome = try await batch([edit("$e1", of: "$a", "yours now", from: "@mallory:test", at: 5)])
        #expect(outcome.changed.isEmpty)
        #expect(try await texts() == ["mine"])
    }

    @Test func aRedactionRemovesTheMessageFromEverythingThatCountsIt() async throws {
        _ = try await batch([message("$a", "keep this", at: 1), message("$b", "secret words", at: 2)], unread: .all)
        #expect(try await store.chats(of: .primary).first?.unread == 2)
        let outcome = try await batch([redaction("$r", of: "$b")])
        // Messages known by event id are numbered from where live ones begin, in the order they came.
        let first = Migrations.firstEventMessageID
        #expect(outcome.removed == [RemovedMessage(chatId: 9, id: first + 1)])
        #expect(try await texts() == ["keep this"])
        #expect(try await found("secret").isEmpty)
        let chat = try #require(try await store.chats(of: .primary).first)
        #expect(chat.unread == 1 && chat.messageCount == 1 && chat.lastMessageId == first)
        try await consistent()
    }

    @Test func aRedactionBeforeItsMessageKeepsTheMessageOutWhenItComes() async throws {
        let early = try await batch([redaction("$r", of: "$b")])
        #expect(early == AppliedBatch(usage: early.usage), "nothing to show for a message not yet here")
        let outcome = try await batch([message("$a", "stays"), message("$b", "deleted before it came")])
        #expect(outcome.fresh.map(\.text) == ["stays"])
        #expect(try await texts() == ["stays"])
        try await consistent()
    }

    @Test func aMessageAndItsRedactionInOneBatchAreNeverShown() async throws {
        let outcome = try await batch([message("$a", "oops"), redaction("$r", of: "$a"), message("$c", "fine")])
        #expect(outcome.fresh.map(\.text) == ["fine"])
        #expect(outcome.removed.isEmpty, "the page never saw it")
        try await consistent()
    }

    @Test func redactingAnEditedMessageRemovesItAndItsEdits() async throws {
        _ = try await batch([message("$a", "typo"), edit("$e1", of: "$a", "fixed", at: 5)])
        let outcome = try await batch([redaction("$r", of: "$a")])
        #expect(outcome.removed.map(\.id) == [Migrations.firstEventMessageID])
        #expect(try await found("fixed").isEmpty)
        #expect(try await found("typo").isEmpty)
        #expect(try await store.scalarForTesting("SELECT count(*) FROM message_edits") == 0)
        try await consistent()
    }

    @Test func redactingTheEditBringsBackTheTextBeforeIt() async throws {
        _ = try await batch([message("$a", "before"), edit("$e1", of: "$a", "after", at: 5)])
        let outcome = try await batch([redaction("$r", of: "$e1")])
        #expect(outcome.changed.map(\.text) == ["before"])
        #expect(outcome.changed.first?.editedAt == nil)
        #expect(try await found("before") == ["before"])
        try await consistent()
    }

    @Test func theSameEditTwiceChangesNothingTheSecondTime() async throws {
        _ = try await batch([message("$a", "one"), edit("$e1", of: "$a", "two", at: 5)])
        let again = try await batch([edit("$e1", of: "$a", "two", at: 5)])
        #expect(again.changed.isEmpty)
        try await consistent()
    }

    @Test func anEncryptedMessageIsStoredUnindexedAndItsChatMarked() async throws {
        var secret = message("$x", "Encrypted message: this dashboard cannot read it.")
        secret.kind = .encrypted
        secret.chatEncrypted = true
        var named = message("$n", "hello", at: 2)
        named.senderName = "Bob"
        named.kind = .notice
        let outcome = try await batch([secret, named])
        #expect(outcome.fresh.map(\.kind) == [.encrypted, .notice])
        #expect(outcome.fresh.map(\.senderName) == [nil, "Bob"])
        #expect(try await found("encrypted").isEmpty, "the placeholder is not the message: never found")
        #expect(try await store.chats(of: .primary).first?.encrypted == true)
        #expect(try await store.messages(of: .primary).messages.map(\.senderName) == ["Bob", nil])
        _ = try await batch([redaction("$r", of: "$x")])
        try await consistent()
    }

    @Test func anEncryptedChatIsUnreadableOnlyWhileItHoldsMessagesThatCannotBeRead() async throws {
        var secret = message("$x", "Encrypted message: this dashboard cannot read it.")
        secret.kind = .encrypted
        secret.chatEncrypted = true
        _ = try await batch([secret])
        #expect(try await store.chats(of: .primary).first?.unreadable == true)
        #expect(try await store.search(SearchQuery("hello"), account: .primary).encryptedChatsNotSearched == 1)
        // Through a decrypting proxy the room's messages come readable.
        _ = try await batch([redaction("$r", of: "$x")])
        var readable = message("$y", "hello through the proxy", at: 3)
        readable.chatEncrypted = true
        _ = try await batch([readable])
        let chat = try #require(try await store.chats(of: .primary).first)
        #expect(chat.encrypted && !chat.unreadable)
        #expect(try await store.search(SearchQuery("hello"), account: .primary).encryptedChatsNotSearched == 0)
        #expect(try await found("proxy") == ["hello through the proxy"])
    }

    @Test func theEditsSurviveAReopen() async throws {
        _ = try await batch([edit("$e1", of: "$a", "edited", at: 5), redaction("$r", of: "$gone")])
        let reopened = try MessageStore(location: .file(folder.path + "/store.sqlite"))
        let outcome = try await reopened.applyBatch([message("$a", "plain"), message("$gone", "never")], to: .primary, receivedAt: now,
                                                    cursor: "s2")
        #expect(outcome.fresh.map(\.text) == ["edited"])
    }
}
