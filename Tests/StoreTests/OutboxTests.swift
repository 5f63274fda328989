import Foundation
@testable import Store
import SQLite
import Testing
import Upstream

/// The outbox (CONTRACT section 11) in a real SQLite file: written before anything is sent, kept
/// across a reopen, left in the transaction that stores the sent message.
@Suite("Outbox")
struct OutboxTests {
    let folder: TemporaryFolder
    var path: String { folder.path + "/store.sqlite" }

    init() throws {
        folder = try TemporaryFolder()
    }

    /// A store whose primary account has chat 1 (from a message of someone else).
    private func storeWithAChat() async throws -> MessageStore {
        let store = try MessageStore(location: .file(path))
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1001, linkedUserId: nil))
        _ = try await store.apply([UpstreamMessage(id: 1, chatId: 1, sender: "bob", text: "hi", sentAt: now)], to: .primary, receivedAt: now)
        return store
    }

    /// Another user signs in on the same store, as the engine does it: everything of the first
    /// one goes (`removeAllAccounts`), the new user is noted and brings a chat 1 of their own.
    private func anotherUserSignsIn(_ store: MessageStore, _ user: Int64) async throws {
        _ = try await store.removeAllAccounts()
        try await store.setAccountIDs(AccountIDs(primaryUserId: user, linkedUserId: nil))
        _ = try await store.apply([UpstreamMessage(id: 5, chatId: 1, sender: "carol", text: "hello", sentAt: now)], to: .primary, receivedAt: now)
    }

    private func queued(_ admission: OutboxAdmission) throws -> OutboxEntry {
        guard case .queued(let entry) = admission else {
            Issue.record("not queued: \(admission)")
            throw CancellationError()
        }
        return entry
    }

    @Test func anEntryIsKeptAcrossAReopenWithTheKeyItCarriesUpstream() async throws {
        let store = try await storeWithAChat()
        let entry = try queued(try await store.enqueue("hello", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        #expect(entry.state == .queued)
        await store.close()
        let reopened = try MessageStore(location: .file(path))
        #expect(try await reopened.outbox() == [entry])
        let reader = try StoreReader(path: path)
        #expect(try await reader.outbox() == [entry])
    }

    @Test func theNextToSendIsTheOldestQueuedOneOfItsAccountAndAFailedOneWaits() async throws {
        let store = try await storeWithAChat()
        let first = try queued(try await store.enqueue("one", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        let second = try queued(try await store.enqueue("two", to: 1, of: .primary, requestKey: "r2", upstreamKey: "u2", createdAt: now))
        #expect(try await store.nextToSend(of: .primary, limit: 1).map(\.entry) == [first])
        #expect(try await store.nextToSend(of: .primary, limit: 10).map(\.entry) == [first, second], "the line, oldest first")
        try await store.setOutboxState(first.id, to: .failed, refusal: SendRefusal(.tooLarge, detail: "too long"))
        #expect(try await store.nextToSend(of: .primary, limit: 1).first?.entry == second)
        #expect(try await store.nextToSend(of: .linked, limit: 10).isEmpty, "each account has its own line")
        try await store.setOutboxState(second.id, to: .failed, refusal: SendRefusal(.forbidden, detail: "M_FORBIDDEN"))
        #expect(try await store.nextToSend(of: .primary, limit: 10).isEmpty, "failed ones wait for Try again")
    }

    @Test func theSameRequestAgainIsTheFirstAnswerAndAnotherTextUnderItsKeyIsRefused() async throws {
        let store = try await storeWithAChat()
        let entry = try queued(try await store.enqueue("hello", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        #expect(try await store.enqueue("hello", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u2", createdAt: now) == .repeated(outboxId: entry.id))
        #expect(try await store.enqueue("other", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u3", createdAt: now) == .keyReused)
        #expect(try await store.outbox().count == 1)
        // Still the same answer once it was sent and left the outbox.
        _ = try await store.apply([UpstreamMessage(id: 2, chatId: 1, sender: "me", text: "hello", sentAt: now, sendKey: "u1")], to: .primary,
                                  receivedAt: now, cursor: nil)
        #expect(try await store.outbox().isEmpty)
        #expect(try await store.enqueue("hello", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u4", createdAt: now) == .repeated(outboxId: entry.id))
    }

    @Test func anEncryptedRoomTakesNothingSoNothingGoesThereInTheClear() async throws {
        let store = try await storeWithAChat()
        var encrypted = UpstreamMessage(id: 0, chatId: 2, sender: "@bob:x", text: "(encrypted)", sentAt: now, eventId: "$e1")
        encrypted.kind = .encrypted
        encrypted.chatEncrypted = true
        _ = try await store.apply([encrypted], to: .primary, receivedAt: now, cursor: "s1")
        #expect(try await store.enqueue("secret", to: 2, of: .primary, requestKey: "e", upstreamKey: "ue", createdAt: now) == .encrypted)
        #expect(try await store.outbox().isEmpty)
    }

    @Test func anUnknownChatOrOneTheAccountLeftTakesNothing() async throws {
        let store = try await storeWithAChat()
        #expect(try await store.enqueue("x", to: 9, of: .primary, requestKey: "a", upstreamKey: "ua", createdAt: now) == .noSuchChat)
        #expect(try await store.enqueue("x", to: 1, of: .linked, requestKey: "a", upstreamKey: "ua", createdAt: now) == .noSuchChat)
        _ = try await store.applyBatch([], to: .primary, receivedAt: now, cursor: nil, chats: ChatChanges(membership: [1: .leave]))
        #expect(try await store.enqueue("x", to: 1, of: .primary, requestKey: "a", upstreamKey: "ua", createdAt: now) == .archived)
        #expect(try await store.outbox().isEmpty)
    }

    @Test func theSentMessageLeavesTheOutboxInItsOwnBatchOnceAndIsNeverUnread() async throws {
        let store = try await storeWithAChat()
        let entry = try queued(try await store.enqueue("hello", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        let sent = try await store.applyBatch([UpstreamMessage(id: 2, chatId: 1, sender: "me", text: "hello", sentAt: now, sendKey: "u1")],
                                              to: .primary, receivedAt: now, cursor: nil, unread: .all)
        #expect(sent.sent == [entry.id])
        #expect(sent.fresh.map(\.outboxId) == [entry.id])
        #expect(sent.chats.first?.unread == 0, "a batch counted as live, and still the message sent from here is not unread")
        // The echo through the next poll is the same id: stored once, nothing left to take out.
        let echo = try await store.applyBatch([UpstreamMessage(id: 2, chatId: 1, sender: "me", text: "hello", sentAt: now)],
                                              to: .primary, receivedAt: now, cursor: "2", unread: .all)
        #expect(echo.fresh.isEmpty && echo.sent.isEmpty)
        #expect(try await store.allIDs(.primary) == [1, 2])
    }

    @Test func aMatrixEchoThatComesBeforeTheAnswerTakesTheEntryOutAndTheAnswerThenChangesNothing() async throws {
        let store = try MessageStore(location: .file(path))
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1001, linkedUserId: nil))
        _ = try await store.apply([UpstreamMessage(id: 0, chatId: 1, sender: "@bob:hs", text: "hi", sentAt: now, eventId: "$bob")],
                                  to: .primary, receivedAt: now, cursor: "s1")
        let entry = try queued(try await store.enqueue("hello", to: 1, of: .primary, requestKey: "r1", upstreamKey: "txn1", createdAt: now))
        let echo = try await store.applyBatch([UpstreamMessage(id: 0, chatId: 1, sender: "@me:hs", text: "hello", sentAt: now, eventId: "$mine",
                                                               sendKey: "txn1")], to: .primary, receivedAt: now, cursor: "s2", unread: .all)
        #expect(echo.sent == [entry.id])
        let answer = try await store.applyBatch([UpstreamMessage(id: 0, chatId: 1, sender: "@me:hs", text: "hello", sentAt: now, eventId: "$mine",
                                                                 sendKey: "txn1")], to: .primary, receivedAt: now, cursor: nil)
        #expect(answer.fresh.isEmpty && answer.sent.isEmpty)
        #expect(try await store.messages(of: .primary, limit: 10).messages.count == 2)
    }

    @Test func aTryThatEndsUnsentIsCountedAndARefusalIsKeptAcrossAReopenUntilTryAgain() async throws {
        let store = try await storeWithAChat()
        let entry = try queued(try await store.enqueue("hello", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        let backInLine = try #require(try await store.setOutboxState(entry.id, to: .queued, endingATry: true))
        #expect(backInLine.state == .queued && backInLine.attempts == 1)
        await store.close()
        let reopened = try MessageStore(location: .file(path))
        let failed = try #require(try await reopened.setOutboxState(entry.id, to: .failed, refusal: SendRefusal(.tooLarge, detail: "M_TOO_LARGE"),
                                                                   endingATry: true))
        #expect(failed.failure == SendRefusal(.tooLarge, detail: "M_TOO_LARGE") && failed.attempts == 2)
        #expect(try await reopened.setOutboxState(entry.id, to: .queued)?.failure == nil, "Try again forgets the refusal")
        guard case .removed(let removed) = try await reopened.discardOutbox(entry.id) else {
            Issue.record("not removed")
            return
        }
        #expect(removed.text == "hello")
        #expect(try await reopened.discardOutbox(entry.id) == .notFound)
    }

    @Test func aFileThatMarkedAnEntrySendingHasItQueuedSoItGoesAgain() async throws {
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, to: 17)  // before step 18 queued what was sending
        try connection.execute("""
            INSERT INTO outbox (account, chat_id, text, upstream_key, state, created_at, attempts)
            VALUES (0, 1, 'on its way', 'lp-kept', 'sending', '2026-12-03T08:00:00.000Z', 1)
            """)
        connection.close()
        let store = try MessageStore(location: .file(path))
        #expect(try await store.outbox().map(\.state) == [.queued])
        #expect(try await store.nextToSend(of: .primary, limit: 1).first?.entry.upstreamKey == "lp-kept")
    }

    @Test func outboxIdsAreNeverGivenTwiceEvenAfterTheNewestLeft() async throws {
        let store = try await storeWithAChat()
        let first = try queued(try await store.enqueue("a", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        _ = try await store.discardOutbox(first.id)
        let second = try queued(try await store.enqueue("b", to: 1, of: .primary, requestKey: "r2", upstreamKey: "u2", createdAt: now))
        #expect(second.id > first.id)
    }

    @Test func anEntryIsSentOnlyForTheUserWhoWroteItAndIsLeftBehindWhenAnotherHoldsTheAccount() async throws {
        let store = try await storeWithAChat()
        let written = try queued(try await store.enqueue("from 1001", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        #expect(written.ownerUserId == 1001)
        try await anotherUserSignsIn(store, 2002)
        #expect(try await store.outbox().isEmpty, "not shown for another user")
        #expect(try await store.outbox(of: .primary).isEmpty)
        #expect(try await store.nextToSend(of: .primary, limit: 10).isEmpty, "never in the new user's line")
        #expect(try await store.leftBehindOutbox() == [written], "kept, with who wrote it")
        let theirs = try queued(try await store.enqueue("from 2002", to: 1, of: .primary, requestKey: "r2", upstreamKey: "u2", createdAt: now))
        #expect(try await store.nextToSend(of: .primary, limit: 10).map(\.entry) == [theirs])
        // The first user back: theirs goes again, the second's waits for them.
        try await anotherUserSignsIn(store, 1001)
        #expect(try await store.nextToSend(of: .primary, limit: 10).map(\.entry) == [written])
        #expect(try await store.leftBehindOutbox() == [theirs])
    }

    @Test func aDetachedLinkedAccountLeavesItsEntriesBehind() async throws {
        let store = try await storeWithAChat()
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1001, linkedUserId: 3003))
        _ = try await store.apply([UpstreamMessage(id: 2, chatId: 7, sender: "dan", text: "yo", sentAt: now)], to: .linked, receivedAt: now)
        let linked = try queued(try await store.enqueue("from the linked one", to: 7, of: .linked, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        let primary = try queued(try await store.enqueue("from the primary", to: 1, of: .primary, requestKey: "r2", upstreamKey: "u2", createdAt: now))
        _ = try await store.purgeLinkedAccount()
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1001, linkedUserId: nil))
        #expect(try await store.outbox() == [primary])
        #expect(try await store.leftBehindOutbox() == [linked])
    }

    @Test func deletingWhatWasLeftBehindTakesNothingElse() async throws {
        let store = try await storeWithAChat()
        let old = try queued(try await store.enqueue("old", to: 1, of: .primary, requestKey: "r1", upstreamKey: "u1", createdAt: now))
        try await anotherUserSignsIn(store, 2002)
        let new = try queued(try await store.enqueue("new", to: 1, of: .primary, requestKey: "r2", upstreamKey: "u2", createdAt: now))
        #expect(try await store.deleteLeftBehindOutbox([old.id, new.id]) == 1)
        #expect(try await store.leftBehindOutbox().isEmpty)
        #expect(try await store.outbox() == [new], "the signed-in user's entry stays")
    }

    @Test func entriesOfAnOlderFileBelongToTheUserWhoHeldTheirAccount() async throws {
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, to: 19)
        try connection.execute("""
            INSERT INTO accounts (role, user_id) VALUES (0, 77);
            INSERT INTO outbox (account, chat_id, text, upstream_key, created_at) VALUES (0, 1, 'older', 'lp-old', '2026-12-03T08:00:00.000Z');
            """)
        connection.close()
        let store = try MessageStore(location: .file(path))
        #expect(try await store.outbox().map(\.ownerUserId) == [77])
    }
}
