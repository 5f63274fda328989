import Foundation
import Testing
import JSONText
import PushRules
import Upstream
@testable import MatrixClient

/// What the transport makes of a sync's rooms and events, without a homeserver.
@Suite("Matrix sync translation")
struct SyncTranslationTests {
    private func sync(_ json: String) throws -> SyncResponse {
        try SyncResponse(jsonText: Array(json.utf8))
    }

    @Test func aSyncReadsWhatItCanAndOnlyALostPositionRefusesIt() throws {
        let response = try sync("""
            {"next_batch": "s2", "rooms": {"join": {
              "!r:x": {"timeline": {"events": [{"content": {"body": "no type"}}, 7, {"type": "m.room.message", "event_id": "$1", "content": {"body": "hi", "msgtype": 5}}],
                                    "limited": "yes", "prev_batch": "p1"},
                       "unread_notifications": {"notification_count": -3, "highlight_count": 1.5},
                       "summary": {"m.heroes": ["@bob:x", 4], "m.joined_member_count": 3}},
              "!broken:x": "no room"
            }}, "account_data": {"events": [{"type": "m.direct", "content": {"@bob:x": ["!r:x", 1], "@eve:x": "!r:x"}}]}}
            """)
        let room = try #require(response.rooms?.join?["!r:x"])
        #expect(room.timeline?.events?.map(\.eventId) == ["$1"], "an entry with no type, or no object, is no event; the rest are kept")
        #expect(room.timeline?.events?.first?.content?.body == "hi" && room.timeline?.events?.first?.content?.msgtype == nil, "a field of the wrong type reads as absent")
        #expect(room.timeline?.limited == nil && room.timeline?.prevBatch == "p1")
        #expect(room.unreadNotifications?.notificationCount == 0 && room.unreadNotifications?.highlightCount == nil, "a negative count is none, a fraction no count")
        #expect(room.summary?.heroes == ["@bob:x"] && room.summary?.joinedMemberCount == 3)
        #expect(response.rooms?.join?["!broken:x"] == nil, "a room that is no object is left out")
        #expect(response.accountData?.events?.first?.direct == ["@bob:x": ["!r:x"]], "m.direct keeps the room ids it can read")
        #expect(throws: AnswerShapeError.self, "without next_batch there is no position to go on from") { try sync(#"{"rooms": {}}"#) }
        #expect(throws: JSONReadError.self) { try sync(#"{"next_batch": "s3""#) }
    }

    @Test func aRoomCountsItsMainTimelineAndEachThreadAndAThreadWithoutAnyIsLeftOut() throws {
        let response = try sync("""
            {"next_batch": "s2", "rooms": {"join": {"!r:x": {
              "unread_notifications": {"notification_count": 2, "highlight_count": 0},
              "unread_thread_notifications": {"$a": {"notification_count": 3, "highlight_count": 1},
                                              "$b": {"notification_count": 0, "highlight_count": 0},
                                              "$c": "not counts", "$d": {"notification_count": -1}}}}}}
            """)
        let room = try #require(response.rooms?.join?["!r:x"])
        let main = try #require(room.unreadNotifications)
        let counts = NotificationCounts(main, threads: room.unreadThreadNotifications)
        #expect(counts.notifications == 5 && counts.highlights == 1, "the chat counts its timeline and its threads, as Element's room list")
        #expect(counts.threads == ["$a": NotificationCounts(notifications: 3, highlights: 1)],
                "a thread with nothing unread, or no counts to read, has none")
        #expect(NotificationCounts(main, threads: [:]) == NotificationCounts(notifications: 2, highlights: 0), "a room without threads")
    }

    @Test func aRoomIsNamedByItsNameThenItsAliasThenItsMembers() throws {
        var names = RoomNames()
        let response = try sync("""
            {"next_batch": "s1", "rooms": {"join": {
              "!named:x": {"state": {"events": [{"type": "m.room.name", "state_key": "", "content": {"name": "Lunch"}},
                                                {"type": "m.room.canonical_alias", "state_key": "", "content": {"alias": "#food:x"}}]}},
              "!alias:x": {"timeline": {"events": [{"type": "m.room.canonical_alias", "state_key": "", "content": {"alias": "#team:x"}}]}},
              "!people:x": {"summary": {"m.heroes": ["@bob:x", "@carol:example.org"]}},
              "!nothing:x": {}
            }}}
            """)
        for (id, room) in response.rooms?.join ?? [:] { names.learn(id, from: room) }
        #expect(names.name(of: "!named:x") == "Lunch")
        #expect(names.name(of: "!alias:x") == "#team:x")
        #expect(names.name(of: "!people:x") == "bob and carol")
        #expect(names.name(of: "!nothing:x") == nil, "the store keeps the last name it was given")
    }

    @Test func anUnnamedRoomIsNamedForItsPeopleByTheirDisplayNamesAndADirectChatForTheOtherPerson() throws {
        var names = RoomNames()
        let response = try sync("""
            {"next_batch": "s1", "account_data": {"events": [
               {"type": "m.direct", "content": {"@dan:x": ["!dm:x"], "@eve:x": "not a list", "@fay:x": ["!gone:x", 7]}}]},
             "rooms": {"join": {
              "!big:x": {"summary": {"m.heroes": ["@bob:x", "@carol:x"], "m.joined_member_count": 6, "m.invited_member_count": 1}},
              "!three:x": {"summary": {"m.heroes": ["@bob:x", "@carol:x"], "m.joined_member_count": 3}},
              "!dm:x": {"summary": {"m.heroes": ["@dan:x"], "m.joined_member_count": 2}},
              "!gone:x": {"summary": {"m.joined_member_count": 1}}
            }}}
            """)
        for (id, room) in response.rooms?.join ?? [:] { names.learn(id, from: room) }
        let direct = try #require(response.accountData?.events?.first?.direct)
        #expect(direct == ["@dan:x": ["!dm:x"], "@fay:x": ["!gone:x"]], "what is no list of room ids reads as none")
        names.learnDirect(direct)
        let displayNames = ["@bob:x": "Bob Builder", "@carol:x": "Carol", "@dan:x": "Dan", "@fay:x": "Fay"]
        let named = { (id: String) in names.name(of: id) { displayNames[$0] ?? $0 } }
        #expect(named("!big:x") == "Bob Builder, Carol and 4 others")
        #expect(named("!three:x") == "Bob Builder and Carol")
        #expect(named("!dm:x") == "Dan")
        #expect(named("!gone:x") == "Fay", "a direct chat the other person left is still theirs")
        // No summary (Synapse gives one with lazy-loaded members only): named for the members known.
        let people = (1...7).map { "@p\($0):x" }
        #expect(names.name(of: "!plain:x", members: ["@bob:x", "@carol:x"]) { displayNames[$0] ?? $0 } == "Bob Builder and Carol")
        #expect(names.name(of: "!crowd:x", members: people) == "p1, p2, p3, p4, p5 and 2 others", "five named, as heroes are")
    }

    @Test func onlyMessagesBecomeMessagesAndHostileFieldsReadAsAbsent() throws {
        let response = try sync("""
            {"next_batch": "s2", "rooms": {"join": {"!r:x": {"timeline": {"limited": true, "prev_batch": "t1", "events": [
              {"type": "m.room.message", "event_id": "$1", "sender": "@bob:x", "origin_server_ts": 1764504000000,
               "content": {"msgtype": "m.text", "body": "<b>hi</b>", "format": "org.matrix.custom.html", "formatted_body": "<b>hi</b>"}},
              {"type": "m.room.message", "event_id": "$2", "sender": "@bob:x", "content": {"body": 42}},
              {"type": "m.reaction", "event_id": "$3", "content": {"body": "not a message"}},
              {"type": "m.room.message", "sender": "@bob:x", "content": {"body": "no event id"}},
              {"type": "m.room.encrypted", "event_id": "$4", "content": {"ciphertext": "..."}}
            ]}}}}}
            """)
        let room = try #require(response.rooms?.join?["!r:x"])
        #expect(room.timeline?.limited == true && room.timeline?.prevBatch == "t1")
        let messages = (room.timeline?.events ?? []).compactMap { UpstreamMessage($0, roomID: "!r:x", roomName: "Lunch") }
        #expect(messages.count == 2, "the text message, and the encrypted one as what it is")
        #expect(messages.last?.kind == .encrypted)
        #expect(messages.first?.text == "<b>hi</b>", "the body is text, kept as it came; the page shows it as text")
        #expect(messages.first?.eventId == "$1")
        #expect(messages.first?.sentAt == "2025-11-30T12:00:00.000Z")
        #expect(messages.first?.chatName == "Lunch")
        #expect(messages.first?.chatId == MatrixIdentity.number(for: "!r:x"))
    }

    private func translated(_ events: String) throws -> [UpstreamMessage] {
        let response = try sync(#"{"next_batch": "s", "rooms": {"join": {"!r:x": {"timeline": {"events": ["# + events + "]}}}}}")
        return (response.rooms?.join?["!r:x"]?.timeline?.events ?? []).compactMap { UpstreamMessage($0, roomID: "!r:x", roomName: nil) }
    }

    @Test func anEditCarriesItsNewTextForItsTargetAndIsNoMessageOfItsOwn() throws {
        let messages = try translated("""
            {"type": "m.room.message", "event_id": "$e", "sender": "@bob:x", "origin_server_ts": 1764504000000,
             "content": {"msgtype": "m.text", "body": "* dinner", "m.new_content": {"msgtype": "m.text", "body": "dinner"},
                         "m.relates_to": {"rel_type": "m.replace", "event_id": "$a"}}}
            """)
        #expect(messages.map(\.text) == ["dinner"], "the new content, not the '* ' fallback")
        #expect(messages.first?.relation == .replaces(eventId: "$a"))
        #expect(messages.first?.eventId == "$e")
    }

    @Test func anEditWithoutUsableNewContentIsSkipped() throws {
        let messages = try translated("""
            {"type": "m.room.message", "event_id": "$e1", "sender": "@bob:x", "content": {"body": "* x", "m.relates_to": {"rel_type": "m.replace", "event_id": "$a"}}},
            {"type": "m.room.message", "event_id": "$e2", "sender": "@bob:x", "content": {"body": "* x", "m.new_content": "text",
             "m.relates_to": {"rel_type": "m.replace", "event_id": "$a"}}},
            {"type": "m.room.message", "event_id": "$e3", "sender": "@bob:x", "content": {"body": "* x", "m.new_content": {"body": 7},
             "m.relates_to": {"rel_type": "m.replace", "event_id": "$a"}}},
            {"type": "m.room.message", "event_id": "$ok", "sender": "@bob:x", "content": {"body": "still here", "m.relates_to": "nonsense"}}
            """)
        #expect(messages.map(\.eventId) == ["$ok"], "nothing else in the batch is lost")
    }

    @Test func redactionsInEitherRoomVersionAndRedactedMessagesRemoveTheirTarget() throws {
        let messages = try translated("""
            {"type": "m.room.redaction", "event_id": "$r1", "sender": "@bob:x", "redacts": "$a", "content": {}},
            {"type": "m.room.redaction", "event_id": "$r2", "sender": "@bob:x", "content": {"redacts": "$b"}},
            {"type": "m.room.message", "event_id": "$c", "sender": "@bob:x", "content": {}, "unsigned": {"redacted_because": {"type": "m.room.redaction"}}},
            {"type": "m.room.redaction", "event_id": "$r3", "sender": "@bob:x", "content": {}}
            """)
        #expect(messages.map(\.relation) == [.redacts(eventId: "$a"), .redacts(eventId: "$b"), .redacts(eventId: "$c")],
                "a redaction that names no event is skipped")
    }

    @Test func aReactionCarriesItsKeyForItsTargetAndABrokenOneIsSkipped() throws {
        let long = String(repeating: "x", count: UpstreamMessage.maximumReactionKeyBytes + 1)
        let messages = try translated("""
            {"type": "m.reaction", "event_id": "$r1", "sender": "@bob:x", "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$a", "key": "👍"}},
             "unsigned": {"transaction_id": "txn-7"}},
            {"type": "m.reaction", "event_id": "$r2", "sender": "@bob:x", "content": {}, "unsigned": {"redacted_because": {"type": "m.room.redaction"}}},
            {"type": "m.reaction", "event_id": "$r3", "sender": "@bob:x", "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$a"}}},
            {"type": "m.reaction", "event_id": "$r4", "sender": "@bob:x", "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$a", "key": "\(long)"}}},
            {"type": "m.reaction", "event_id": "$r5", "sender": "@bob:x", "content": {"m.relates_to": {"rel_type": "m.replace", "event_id": "$a", "key": "👍"}}},
            {"type": "m.reaction", "event_id": "$r6", "sender": "@bob:x", "content": {"m.relates_to": {"rel_type": "m.annotation", "key": "👍"}}},
            {"type": "m.reaction", "event_id": "$r7", "sender": "@bob:x", "content": {"m.relates_to": "nonsense"}}
            """)
        #expect(messages.map(\.relation) == [.annotates(eventId: "$a"), .redacts(eventId: "$r2")],
                "one without a key or target, of another relation or with a key no emoji or word is that long, is none")
        #expect(messages.first?.text == "👍")
        #expect(messages.first?.sendKey == "txn-7", "one sent from here leaves its outbox entry when it comes")
    }

    @Test func aThreadsReplyNamesItsFirstMessageAndItsFallbackIsNoReply() throws {
        let messages = try translated("""
            {"type": "m.room.message", "event_id": "$t1", "sender": "@bob:x", "content": {"msgtype": "m.text", "body": "in the thread",
             "m.relates_to": {"rel_type": "m.thread", "event_id": "$root", "is_falling_back": true, "m.in_reply_to": {"event_id": "$latest"}}}},
            {"type": "m.room.message", "event_id": "$t2", "sender": "@bob:x", "content": {"msgtype": "m.text", "body": "> <@ann:x> that one\\n\\nto that one",
             "m.relates_to": {"rel_type": "m.thread", "event_id": "$root", "m.in_reply_to": {"event_id": "$ann"}}}},
            {"type": "m.room.message", "event_id": "$t3", "sender": "@bob:x", "content": {"body": "under itself",
             "m.relates_to": {"rel_type": "m.thread", "event_id": "$t3"}}},
            {"type": "m.room.message", "event_id": "$t4", "sender": "@bob:x", "content": {"body": "no first message", "m.relates_to": {"rel_type": "m.thread"}}},
            {"type": "m.room.message", "event_id": "$t5", "sender": "@bob:x", "content": {"body": "a number", "m.relates_to": {"rel_type": "m.thread", "event_id": 7}}}
            """)
        #expect(messages.map(\.threadRoot) == ["$root", "$root", nil, nil, nil], "a broken thread relation is a message of the timeline")
        #expect(messages.map(\.replyTo) == [nil, "$ann", nil, nil, nil], "the fallback reply is for clients without threads")
        #expect(messages.map(\.text) == ["in the thread", "to that one", "under itself", "no first message", "a number"])
    }

    @Test func aReplyKeepsItsOwnWordsWithoutTheQuotedFallback() throws {
        let messages = try translated("""
            {"type": "m.room.message", "event_id": "$re", "sender": "@bob:x", "content": {"msgtype": "m.text",
             "body": "> <@alice:x> lunch?\\n> second line\\n\\nyes, at noon\\n> not a quote of the fallback",
             "m.relates_to": {"m.in_reply_to": {"event_id": "$a"}}}},
            {"type": "m.room.message", "event_id": "$plain", "sender": "@bob:x", "content": {"body": "> quoting by hand"}}
            """)
        #expect(messages.map(\.text) == ["yes, at noon\n> not a quote of the fallback", "> quoting by hand"],
                "only a reply has a fallback to take out")
    }

    @Test func everyMessageTypeHasAKindAndEncryptedEventsAPlaceholder() throws {
        let messages = try translated("""
            {"type": "m.room.message", "event_id": "$1", "sender": "@bob:x", "content": {"msgtype": "m.text", "body": "plain"}},
            {"type": "m.room.message", "event_id": "$2", "sender": "@bob:x", "content": {"msgtype": "m.notice", "body": "a bot says"}},
            {"type": "m.room.message", "event_id": "$3", "sender": "@bob:x", "content": {"msgtype": "m.emote", "body": "waves"}},
            {"type": "m.room.message", "event_id": "$4", "sender": "@bob:x", "content": {"msgtype": "m.image", "body": "cat.png"}},
            {"type": "m.room.message", "event_id": "$5", "sender": "@bob:x", "content": {"msgtype": "m.audio", "body": "song.ogg"}},
            {"type": "m.room.message", "event_id": "$6", "sender": "@bob:x", "content": {"msgtype": "org.example.unknown", "body": "odd"}},
            {"type": "m.room.message", "event_id": "$7", "sender": "@bob:x", "content": {"msgtype": 5, "body": "no string type"}},
            {"type": "m.room.encrypted", "event_id": "$8", "sender": "@bob:x", "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA"}}
            """)
        #expect(messages.map(\.kind) == [.text, .notice, .emote, .image, .file, .file, .text, .encrypted])
        #expect(messages.last?.text == UpstreamMessage.encryptedText, "never the ciphertext")
    }

    @Test func imagesAndFilesCarryTheirFileAndHostileOrEncryptedOnesNoAddress() throws {
        let messages = try translated("""
            {"type": "m.room.message", "event_id": "$1", "sender": "@bob:x", "content": {"msgtype": "m.image", "body": "cat.png",
             "url": "mxc://x/AbC", "info": {"mimetype": "image/png", "size": 1234}}},
            {"type": "m.room.message", "event_id": "$2", "sender": "@bob:x", "content": {"msgtype": "m.file", "body": "look at this",
             "filename": "report.pdf", "url": "mxc://x/Def", "info": {"size": -5}}},
            {"type": "m.room.message", "event_id": "$3", "sender": "@bob:x", "content": {"msgtype": "m.image", "body": "evil.png",
             "url": "mxc://x/../../etc", "info": {"mimetype": 7, "size": "huge"}}},
            {"type": "m.room.message", "event_id": "$4", "sender": "@bob:x", "content": {"msgtype": "m.image", "body": "secret.png",
             "file": {"url": "mxc://x/Enc", "key": {}, "iv": "", "hashes": {}, "v": "v2"}}},
            {"type": "m.room.message", "event_id": "$5", "sender": "@bob:x", "content": {"msgtype": "m.text", "body": "mxc://x/AbC", "url": "mxc://x/AbC"}}
            """)
        #expect(messages.map(\.media) == [
            UpstreamMessage.Media(name: "cat.png", mimetype: "image/png", size: 1234, source: "x/AbC"),
            UpstreamMessage.Media(name: "report.pdf", mimetype: nil, size: nil, source: "x/Def"),
            UpstreamMessage.Media(name: "evil.png", mimetype: nil, size: nil, source: nil),
            UpstreamMessage.Media(name: "secret.png", mimetype: nil, size: nil, source: nil),
            nil,
        ])
        #expect(messages[1].text == "look at this", "with a filename, the body is a caption")
    }

    @Test func aSenderIsNamedAsTheRoomNamedThemWhenTheyWrote() throws {
        var members = RoomMembers()
        func member(_ user: String, _ content: String) throws -> RoomEvent {
            try #require(RoomEvent(json: JSONValue(parsing: Array(#"{"type": "m.room.member", "state_key": "\#(user)", "content": \#(content)}"#.utf8))))
        }
        #expect(members.name(of: "@bob:x", in: "!r:x") == "bob", "unknown: the localpart")
        members.learn(try member("@bob:x", #"{"membership": "join", "displayname": "Bob <b>B</b>"}"#), in: "!r:x")
        #expect(members.name(of: "@bob:x", in: "!r:x") == "Bob <b>B</b>", "text, shown as text")
        #expect(members.name(of: "@bob:x", in: "!other:x") == "bob", "a display name is per room")
        members.learn(try member("@bob:x", #"{"membership": "join", "displayname": "Robert"}"#), in: "!r:x")
        #expect(members.name(of: "@bob:x", in: "!r:x") == "Robert")
        members.learn(try member("@bob:x", #"{"membership": "join", "displayname": 12}"#), in: "!r:x")
        #expect(members.name(of: "@bob:x", in: "!r:x") == "bob", "a name that is no string is none")
        #expect(!members.isEncrypted("!r:x"))
        members.learn(try #require(RoomEvent(json: JSONValue(parsing: Array(#"{"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}"#.utf8)))), in: "!r:x")
        #expect(members.isEncrypted("!r:x"))
    }

    @Test func theRoomAsThePushRulesSeeItComesFromItsStateAndSummary() throws {
        let response = try sync("""
            {"next_batch": "s", "rooms": {"join": {"!r:x": {
              "summary": {"m.joined_member_count": 7},
              "state": {"events": [
                {"type": "m.room.power_levels", "state_key": "", "content": {"users": {"@mod:x": 50}, "users_default": 0, "notifications": {"room": 40}}},
                {"type": "m.room.member", "state_key": "@alice:x", "content": {"membership": "join", "displayname": "Alice"}},
                {"type": "m.room.member", "state_key": "@bob:x", "content": {"membership": "join"}}]},
              "timeline": {"events": [{"type": "m.room.member", "state_key": "@bob:x", "content": {"membership": "leave"}}]}},
              "!small:x": {"state": {"events": [
                {"type": "m.room.power_levels", "state_key": "", "content": {"users": "not an object", "users_default": 10}},
                {"type": "m.room.member", "state_key": "@alice:x", "content": {"membership": "join"}},
                {"type": "m.room.member", "state_key": "@carol:x", "content": {"membership": "join"}}]}}
            }}}
            """)
        var members = RoomMembers()
        for (id, room) in response.rooms?.join ?? [:] {
            members.learn(room.summary, of: id)
            for event in (room.state?.events ?? []) + (room.timeline?.events ?? []) { members.learn(event, in: id) }
        }
        let big = members.pushContext(of: "!r:x", for: "@alice:x")
        #expect(big.memberCount == 7, "the homeserver's count, when the summary gives one")
        #expect(big.displayName == "Alice" && big.powerLevels.level(of: "@mod:x") == 50 && big.powerLevels.required(toNotify: "room") == 40)
        let small = members.pushContext(of: "!small:x", for: "@alice:x")
        #expect(small.memberCount == 2, "else the members joined as far as the state says")
        #expect(small.displayName == nil && small.powerLevels.usersDefault == 10 && small.powerLevels.users.isEmpty, "a hostile field reads as absent")
        #expect(members.pushContext(of: "!unknown:x", for: "@alice:x").memberCount == 0)
    }

    @Test func numbersForMatrixIDsAreStableAndFitJavaScript() {
        let number = MatrixIdentity.number(for: "@alice:example.org")
        #expect(number == MatrixIdentity.number(for: "@alice:example.org"))
        #expect(number != MatrixIdentity.number(for: "@alice:example.com"))
        #expect(number >= 0 && number < (1 << 53))
        let many = Set((0..<10_000).map { MatrixIdentity.number(for: "!room\($0):example.org") })
        #expect(many.count == 10_000)
    }

    @Test func pathSegmentsAndQueryValuesArePercentEncoded() {
        #expect(MatrixUpstream.encode("!abc:example.org") == "%21abc%3Aexample.org")
        #expect(MatrixUpstream.encode("s72_4&since=x") == "s72_4%26since%3Dx")
    }
}

@Suite("Matrix transport: how long a 429 asks to wait")
struct RateLimitWaitTests {
    @Test func theLongerOfTheHeaderAndTheBodyIsTheWait() {
        #expect(RateLimitWait.duration(retryAfterHeader: "3", retryAfterMs: 500, nowSeconds: 0) == .seconds(3))
        #expect(RateLimitWait.duration(retryAfterHeader: "1", retryAfterMs: 2_500, nowSeconds: 0) == .milliseconds(2_500))
        #expect(RateLimitWait.duration(retryAfterHeader: nil, retryAfterMs: 700, nowSeconds: 0) == .milliseconds(700))
        #expect(RateLimitWait.duration(retryAfterHeader: " 7 ", retryAfterMs: nil, nowSeconds: 0) == .seconds(7))
    }

    @Test func aDateInTheHeaderIsAWaitUntilThen() {
        let now = 784_111_777 - 42
        #expect(RateLimitWait.duration(retryAfterHeader: "Sun, 06 Nov 1994 08:49:37 GMT", retryAfterMs: nil, nowSeconds: now) == .seconds(42))
        #expect(RateLimitWait.duration(retryAfterHeader: "Sun, 06 Nov 1994 08:49:37 GMT", retryAfterMs: nil, nowSeconds: now + 100) == .zero,
                "a date gone by asks for no wait")
    }

    @Test func whatCannotBeReadAsksForNothing() {
        #expect(RateLimitWait.duration(retryAfterHeader: "soon", retryAfterMs: nil, nowSeconds: 0) == nil)
        #expect(RateLimitWait.duration(retryAfterHeader: "-5", retryAfterMs: nil, nowSeconds: 0) == nil)
        #expect(RateLimitWait.duration(retryAfterHeader: nil, retryAfterMs: nil, nowSeconds: 0) == nil)
        #expect(RateLimitWait.duration(retryAfterHeader: "soon", retryAfterMs: 900, nowSeconds: 0) == .milliseconds(900))
    }

    @Test func olderHistoryGoesOnAtEachEndAndStopsWhereTheRoomBeginsOrAPageNamesItsOwnStart() throws {
        let position = HistoryPosition(chatId: 1, upstreamChat: "!r", token: "t10")
        func page(_ json: String) throws -> MessagesPage { try MessagesPage(jsonText: Array(json.utf8)) }
        #expect(MatrixUpstream.nextPosition(after: try page(#"{"chunk": [], "start": "t10", "end": "t5"}"#), from: position)?.token == "t5",
                "an empty page with an end goes on: events hidden by history visibility")
        #expect(MatrixUpstream.nextPosition(after: try page(#"{"chunk": [], "start": "t10"}"#), from: position) == nil, "no end: the beginning")
        #expect(MatrixUpstream.nextPosition(after: try page(#"{"chunk": [], "start": "t10", "end": "t10"}"#), from: position) == nil,
                "an end where it began would ask for the same page forever")
    }
}
