import Foundation
import Store
import Testing
import Upstream
@testable import DashboardApp

@Suite("Messages event")
struct MessagesEventTests {
    private func message(_ id: Int64, text: String, sender: String = "Chloé") -> StoredMessage {
        StoredMessage(account: .linked, id: id, chatId: 7, sender: sender, text: text, sentAt: "2026-11-29T12:00:00.000Z",
                      receivedAt: "2026-11-29T12:00:01.000Z")
    }

    @Test func writesTheContractFieldsAndNothingElse() throws {
        let event = MessagesEvent(account: "linked", messages: [message(1, text: "hi"), message(2, text: "there")], notify: true,
                                  storage: StorageUsage(usedBytes: 300, quotaBytes: 50_000_000))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.json())) as? NSDictionary)
        let expected: NSDictionary = [
            "account": "linked", "notify": true, "storage": ["usedBytes": 300, "quotaBytes": 50_000_000], "chats": [Any](),
            "messages": [
                ["id": 1, "chatId": 7, "sender": "Chloé", "text": "hi", "sentAt": "2026-11-29T12:00:00.000Z", "kind": "text"],
                ["id": 2, "chatId": 7, "sender": "Chloé", "text": "there", "sentAt": "2026-11-29T12:00:00.000Z", "kind": "text"],
            ],
        ]
        #expect(object == expected)
    }

    @Test func aMatrixMessageSaysItsKindItsSendersNameAndWhenItWasEdited() throws {
        var edited = message(3, text: "waves")
        edited.kind = .emote
        edited.senderName = "Chloé M."
        edited.editedAt = "2026-11-29T12:05:00.000Z"
        let event = MessagesEvent(account: "primary", messages: [edited], notify: true, storage: StorageUsage(usedBytes: 0, quotaBytes: nil))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.json())) as? [String: Any])
        let written = try #require((object["messages"] as? [[String: Any]])?.first)
        #expect(written["kind"] as? String == "emote")
        #expect(written["senderName"] as? String == "Chloé M.")
        #expect(written["editedAt"] as? String == "2026-11-29T12:05:00.000Z")
    }

    @Test func untrustedTextComesBackAsItWasAndAnUnlimitedQuotaIsNull() throws {
        let texts = ["<img src=x onerror=alert(1)>", "quote \" backslash \\ newline \n tab \t nul \u{0}", "😀 \u{2028}", ""]
        let event = MessagesEvent(account: "primary", messages: texts.enumerated().map { message(Int64($0.offset + 1), text: $0.element, sender: "\"Bob\"\n") },
                                  notify: false, storage: StorageUsage(usedBytes: 0, quotaBytes: nil))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.json())) as? [String: Any])
        let messages = try #require(object["messages"] as? [[String: Any]])
        #expect(messages.map { $0["text"] as? String } == texts)
        #expect(messages.allSatisfy { $0["sender"] as? String == "\"Bob\"\n" })
        #expect(object["notify"] as? Bool == false)
        #expect((object["storage"] as? [String: Any])?["quotaBytes"] is NSNull)
    }

    @Test func anEmptyBatchIsAnEmptyList() throws {
        let event = MessagesEvent(account: "primary", messages: [], notify: false, storage: StorageUsage(usedBytes: 0, quotaBytes: 10))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.json())) as? [String: Any])
        #expect((object["messages"] as? [Any])?.isEmpty == true)
    }

    @Test func theChatsTheMessagesChangedAreWrittenAsTheChatListGivesThem() throws {
        let chats = [ChatSummary(id: 7, name: "Café \"du\" coin", messageCount: 12, unread: 2, lastMessageAt: "2026-11-29T12:00:00.000Z", lastMessageId: 12),
                     ChatSummary(id: 3, name: nil, messageCount: 1, unread: 0, lastMessageAt: nil, lastMessageId: 1, encrypted: true,
                                 membership: .leave, unreadable: true)]
        let event = MessagesEvent(account: "linked", messages: [message(12, text: "hi")], notify: true,
                                  storage: StorageUsage(usedBytes: 0, quotaBytes: nil), chats: chats)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.json())) as? [String: Any])
        let written = try #require(object["chats"] as? NSArray)
        let encoder = JSONEncoder()
        let listed = try #require(try JSONSerialization.jsonObject(with: encoder.encode(chats.map(ChatBody.init))) as? NSArray)
        #expect(written == listed, "the same objects as /api/chats")
    }
    /// The `outbox` events are written by hand (two per message sent): the same objects the
    /// feed's encoder would write, the error of a failed one included.
    @Test func outboxEventsAreTheObjectsTheEncoderWrites() throws {
        func object(_ bytes: [UInt8]) throws -> NSDictionary {
            try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
        }
        let text = "quote \" backslash \\ <b>bold</b> \u{2067}RTL\u{2069} 😀"
        let queued = OutboxEntry(id: 7, account: .linked, chatId: 3, text: text, state: .queued, createdAt: "2026-12-04T08:00:00.000Z",
                                 upstreamKey: "k", attempts: 0, failure: nil)
        var failed = queued
        failed.state = .failed
        failed.failure = SendRefusal(.tooLarge, detail: "event too large")
        for body in [OutboxEntryBody(queued), OutboxEntryBody(queued, requestKey: "page-key-1"),
                     OutboxEntryBody(failed, error: ErrorCatalog.sendFailed(failed, at: Date(timeIntervalSince1970: 1_800_000_000)))] {
            #expect(try object(body.json()) == object(EventFeed.json(body)))
        }
        #expect(try object(OutboxEntryBody(queued).json())["error"] is NSNull, "null, not absent")
        let left = OutboxLeftBody(outboxId: 7, account: "primary", chatId: 3, state: "sent")
        #expect(try object(left.json()) == object(EventFeed.json(left)))
    }
}
