import Foundation
import Testing
import Upstream
@testable import MatrixClient

/// What the transport makes of a sync's rooms and events, without a homeserver.
@Suite("Matrix sync translation")
struct SyncTranslationTests {
    private func sync(_ json: String) throws -> SyncResponse {
        try JSONDecoder().decode(SyncResponse.self, from: Data(json.utf8))
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
        #expect(names.name(of: "!people:x") == "bob, carol")
        #expect(names.name(of: "!nothing:x") == nil, "the store keeps the last name it was given")
    }

    @Test func onlyTextMessagesBecomeMessagesAndHostileFieldsReadAsAbsent() throws {
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
        #expect(messages.count == 1)
        #expect(messages.first?.text == "<b>hi</b>", "the body is text, kept as it came; the page shows it as text")
        #expect(messages.first?.eventId == "$1")
        #expect(messages.first?.sentAt == "2025-11-30T12:00:00.000Z")
        #expect(messages.first?.chatName == "Lunch")
        #expect(messages.first?.chatId == MatrixIdentity.number(for: "!r:x"))
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
