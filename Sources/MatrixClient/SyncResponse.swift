import Foundation
import JSONText
import PushRules

/// An answer read from its body parsed once into a ``JSONValue`` (by `JSONReader`, not
/// `Decodable`): a large initial sync is thousands of events, and each event's content is needed
/// both as typed fields and as it came (for the push rules), so it is parsed once and read twice.
protocol ReadFromJSON {
    /// The answer in `json`; throws only when the whole answer is unusable. A field of another
    /// type than the spec's (a hostile or broken client's event) reads as absent.
    init(json: JSONValue) throws(AnswerShapeError)
}

extension ReadFromJSON {
    /// The answer in a JSON text: malformed text or a wrong shape throws.
    init(jsonText bytes: [UInt8]) throws {
        try self.init(json: JSONValue(parsing: bytes))
    }
}

/// An answer that is valid JSON but lacks what makes it this answer (a sync without `next_batch`).
struct AnswerShapeError: Error, CustomStringConvertible {
    var description: String
}

/// The parts of the Matrix client-server API's answers this transport reads. Every field the
/// spec allows to be absent is optional; unknown fields are ignored.
struct SyncResponse: ReadFromJSON, Sendable {
    var nextBatch: String
    var rooms: Rooms?
    /// The account's own data that changed: its push rules (`m.push_rules`) among them.
    var accountData: AccountData?

    init(json: JSONValue) throws(AnswerShapeError) {
        guard let nextBatch = json["next_batch"]?.string else { throw AnswerShapeError(description: "a sync without next_batch") }
        self.nextBatch = nextBatch
        rooms = json["rooms"]?.object.map(Rooms.init(json:))
        accountData = json["account_data"]?.object.map { AccountData(events: $0["events"]?.array?.compactMap(AccountDataEvent.init(json:))) }
    }

    struct AccountData: Sendable {
        var events: [AccountDataEvent]?
    }

    /// One piece of account data; the push rules and the direct chats (`m.direct`) are read.
    struct AccountDataEvent: Sendable {
        var type: String
        var pushRules: PushRuleSet?
        /// `m.direct`: each user's direct rooms with the account. A value that is no list of room
        /// ids (a broken client's) reads as none for that user.
        var direct: [String: [String]]?

        init?(json: JSONValue) {
            guard json.object != nil else { return nil }
            type = json["type"]?.string ?? ""
            let content = json["content"]
            if type == "m.push_rules", let content {
                // Rules change seldom and are few: they keep their lenient `Decodable` reading.
                pushRules = (try? JSONDecoder().decode(GlobalPushRules.self, from: Data(content.serialized())))?.global
            }
            if type == "m.direct", let users = content?.object {
                direct = users.compactMapValues { rooms in rooms.array?.compactMap(\.string) }
            }
        }
    }

    struct Rooms: Sendable {
        var join: [String: JoinedRoom]?
        /// Rooms the account left, was kicked or banned from since the last sync: their timeline
        /// up to the leave (the same shape as a joined room's).
        var leave: [String: JoinedRoom]?

        init(json: [String: JSONValue]) {
            join = json["join"]?.object?.compactMapValues(JoinedRoom.init(json:))
            leave = json["leave"]?.object?.compactMapValues(JoinedRoom.init(json:))
        }
    }

    struct JoinedRoom: Sendable {
        var timeline: Timeline?
        var state: Events?
        var summary: Summary?
        /// What the account's notification counts say of the room: 0 when every message that
        /// counts was read (here or in another client).
        var unreadNotifications: UnreadNotifications?
        /// Per thread (its first message's event id), with the filter's `unread_thread_notifications`:
        /// those counts are apart from `unreadNotifications`, and a thread not here has none.
        var unreadThreadNotifications: [String: UnreadNotifications] = [:]

        init?(json: JSONValue) {
            guard let room = json.object else { return nil }
            timeline = room["timeline"]?.object.map { timeline in
                Timeline(events: RoomEvent.list(timeline["events"]), limited: timeline["limited"]?.bool, prevBatch: timeline["prev_batch"]?.string)
            }
            state = room["state"]?.object.map { Events(events: RoomEvent.list($0["events"])) }
            summary = room["summary"]?.object.map { summary in
                Summary(heroes: summary["m.heroes"]?.array?.compactMap(\.string),
                        joinedMemberCount: summary["m.joined_member_count"]?.int,
                        invitedMemberCount: summary["m.invited_member_count"]?.int)
            }
            unreadNotifications = room["unread_notifications"].flatMap(UnreadNotifications.init(json:))
            unreadThreadNotifications = room["unread_thread_notifications"]?.object?.compactMapValues(UnreadNotifications.init(json:)) ?? [:]
        }
    }

    struct UnreadNotifications: Sendable {
        var notificationCount: Int?
        var highlightCount: Int?

        init?(json: JSONValue) {
            guard let counts = json.object else { return nil }
            notificationCount = counts["notification_count"]?.int.map { max(0, $0) }
            highlightCount = counts["highlight_count"]?.int.map { max(0, $0) }
        }
    }

    struct Timeline: Sendable {
        var events: [RoomEvent]?
        /// Events were left out between the previous sync and these: a gap to fill from `prevBatch`.
        var limited: Bool?
        var prevBatch: String?
    }

    struct Events: Sendable {
        var events: [RoomEvent]?
    }

    struct Summary: Sendable {
        var heroes: [String]?
        var joinedMemberCount: Int?
        var invitedMemberCount: Int?
    }
}

/// `GET /pushrules/` and the `m.push_rules` account data: the rules under `global`.
struct GlobalPushRules: Decodable, Sendable {
    var global: PushRuleSet?
}

/// `GET /rooms/{roomId}/messages`: a page of a room's timeline.
struct MessagesPage: ReadFromJSON, Sendable {
    var chunk: [RoomEvent]?
    /// Where the next page starts; absent when there is no more.
    var end: String?
    /// With `lazy_load_members`: the member events of the chunk's senders.
    var state: [RoomEvent]?

    init(json: JSONValue) throws(AnswerShapeError) {
        guard json.object != nil else { throw AnswerShapeError(description: "a page of messages that is no object") }
        chunk = RoomEvent.list(json["chunk"])
        end = json["end"]?.string
        state = RoomEvent.list(json["state"])
    }
}

extension RoomEvent {
    /// The event as the push rules read it (the fields a rule can name, and the content as it came).
    func flattened(in roomID: String) -> FlattenedEvent {
        var fields: [String: JSONValue] = ["type": .string(type), "room_id": .string(roomID)]
        if let sender { fields["sender"] = .string(sender) }
        if let eventId { fields["event_id"] = .string(eventId) }
        if let stateKey { fields["state_key"] = .string(stateKey) }
        if let rawContent { fields["content"] = rawContent }
        return FlattenedEvent(.object(fields))
    }
}

/// One event of a room: a message (`m.room.message`) or state the transport reads (the room's name).
struct RoomEvent: Sendable {
    var type: String
    var eventId: String?
    var sender: String?
    var originServerTs: Int64?
    var stateKey: String?
    var content: Content?
    /// The event a redaction removes (room versions up to 10 put it here, 11 in the content).
    var redacts: String?
    /// The event itself was redacted: `unsigned.redacted_because` is there.
    var isRedacted = false
    /// The id this device sent it under (`unsigned.transaction_id`: only the sending device sees it).
    var transactionId: String?
    /// The content as it came, whatever its fields: what the account's push rules look at.
    var rawContent: JSONValue?
    /// A power-levels event's levels (`m.room.power_levels`).
    var powerLevels: PowerLevels?

    /// The events of a list; an entry that is no event (no object, or no `type`) is left out.
    static func list(_ json: JSONValue?) -> [RoomEvent]? {
        json?.array?.compactMap(RoomEvent.init(json:))
    }

    init?(json: JSONValue) {
        guard let type = json["type"]?.string else { return nil }
        self.type = type
        eventId = json["event_id"]?.string
        sender = json["sender"]?.string
        originServerTs = json["origin_server_ts"]?.integer
        stateKey = json["state_key"]?.string
        if let content = json["content"], let fields = content.object {
            self.content = Content(json: fields)
            if type == "m.room.power_levels" { powerLevels = PowerLevels(json: content) }
        }
        rawContent = json["content"]
        redacts = json["redacts"]?.string
        let unsigned = json["unsigned"]
        isRedacted = unsigned?["redacted_because"] != nil
        transactionId = unsigned?["transaction_id"]?.string
    }

    /// The content fields read: a message's `body` and relation, a name event's `name`, an alias
    /// event's `alias`, a redaction's `redacts`. A field of another type than the spec's (a
    /// hostile or broken client's event) reads as absent.
    struct Content: Sendable {
        var body: String?
        var name: String?
        var alias: String?
        var redacts: String?
        var msgtype: String?
        /// A member event's display name.
        var displayname: String?
        var membership: String?
        var relatesTo: Relation?
        /// An edit's new content: its `body` (nil when `m.new_content` is missing or no object).
        var newBody: String?
        /// A file's `mxc://` URI (an unencrypted attachment).
        var url: String?
        /// The file's name, when the body is a caption (spec v1.10).
        var filename: String?
        var info: Info?
        /// An encrypted attachment (`file`): it cannot be fetched without the room's keys.
        var hasEncryptedFile = false

        /// A file's `info`: what the sender said of its type and size (hostile values read as absent).
        struct Info: Sendable {
            var mimetype: String?
            var size: Int64?
        }

        /// `m.relates_to`: an edit (`rel_type` `m.replace`) or a reply (`m.in_reply_to`).
        struct Relation: Sendable {
            var relType: String?
            var eventId: String?
            var inReplyTo: String?
            /// In a thread (`m.thread`), the `m.in_reply_to` is only there for clients without
            /// threads (the thread's latest message), not a reply the person made.
            var isFallingBack = false
            /// An annotation's key (a reaction's emoji or word).
            var key: String?

            init(json: [String: JSONValue]) {
                relType = json["rel_type"]?.string
                eventId = json["event_id"]?.string
                inReplyTo = json["m.in_reply_to"]?["event_id"]?.string
                key = json["key"]?.string
                isFallingBack = json["is_falling_back"]?.bool == true
            }
        }

        init(json: [String: JSONValue]) {
            body = json["body"]?.string
            name = json["name"]?.string
            alias = json["alias"]?.string
            redacts = json["redacts"]?.string
            msgtype = json["msgtype"]?.string
            displayname = json["displayname"]?.string
            membership = json["membership"]?.string
            relatesTo = json["m.relates_to"]?.object.map(Relation.init(json:))
            newBody = json["m.new_content"]?["body"]?.string
            url = json["url"]?.string
            filename = json["filename"]?.string
            info = json["info"]?.object.map { info in
                Info(mimetype: info["mimetype"]?.string, size: info["size"]?.integer.flatMap { $0 >= 0 ? $0 : nil })
            }
            hasEncryptedFile = json["file"] != nil
        }
    }
}

/// `POST /login` and `GET /account/whoami`.
struct LoginResponse: Decodable, Sendable {
    var accessToken: String
    var deviceId: String?
    var userId: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case deviceId = "device_id"
        case userId = "user_id"
    }
}

struct WhoAmIResponse: Decodable, Sendable {
    var userId: String
    var deviceId: String?

    enum CodingKeys: String, CodingKey {
        case userId = "user_id"
        case deviceId = "device_id"
    }
}

/// The error body of every Matrix API: `{"errcode": "M_...", "error": "...", ...}`.
struct MatrixErrorBody: Decodable, Sendable {
    var errcode: String?
    var error: String?
    var softLogout: Bool?
    var retryAfterMs: Int64?

    enum CodingKeys: String, CodingKey {
        case errcode, error
        case softLogout = "soft_logout"
        case retryAfterMs = "retry_after_ms"
    }
}
