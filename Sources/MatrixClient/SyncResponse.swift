/// The parts of the Matrix client-server API's answers this transport reads. Every field the
/// spec allows to be absent is optional; unknown fields are ignored.
struct SyncResponse: Decodable, Sendable {
    var nextBatch: String
    var rooms: Rooms?

    struct Rooms: Decodable, Sendable {
        var join: [String: JoinedRoom]?
    }

    struct JoinedRoom: Decodable, Sendable {
        var timeline: Timeline?
        var state: Events?
        var summary: Summary?
    }

    struct Timeline: Decodable, Sendable {
        var events: [RoomEvent]?
        /// Events were left out between the previous sync and these: a gap to fill from `prevBatch`.
        var limited: Bool?
        var prevBatch: String?

        enum CodingKeys: String, CodingKey {
            case events, limited
            case prevBatch = "prev_batch"
        }
    }

    struct Events: Decodable, Sendable {
        var events: [RoomEvent]?
    }

    struct Summary: Decodable, Sendable {
        var heroes: [String]?

        enum CodingKeys: String, CodingKey {
            case heroes = "m.heroes"
        }
    }

    enum CodingKeys: String, CodingKey {
        case rooms
        case nextBatch = "next_batch"
    }
}

/// `GET /rooms/{roomId}/messages`: a page of a room's timeline.
struct MessagesPage: Decodable, Sendable {
    var chunk: [RoomEvent]?
    /// Where the next page starts; absent when there is no more.
    var end: String?
}

/// One event of a room: a message (`m.room.message`) or state the transport reads (the room's name).
struct RoomEvent: Decodable, Sendable {
    var type: String
    var eventId: String?
    var sender: String?
    var originServerTs: Int64?
    var stateKey: String?
    var content: Content?

    /// The content fields read: a message's `body`, a name event's `name`, an alias event's `alias`.
    /// A field of another type than the spec's (a hostile or broken client's event) reads as absent.
    struct Content: Decodable, Sendable {
        var body: String?
        var name: String?
        var alias: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            body = try? container.decodeIfPresent(String.self, forKey: .body)
            name = try? container.decodeIfPresent(String.self, forKey: .name)
            alias = try? container.decodeIfPresent(String.self, forKey: .alias)
        }

        enum CodingKeys: String, CodingKey {
            case body, name, alias
        }
    }

    enum CodingKeys: String, CodingKey {
        case type, sender, content
        case eventId = "event_id"
        case originServerTs = "origin_server_ts"
        case stateKey = "state_key"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        eventId = try? container.decodeIfPresent(String.self, forKey: .eventId)
        sender = try? container.decodeIfPresent(String.self, forKey: .sender)
        originServerTs = try? container.decodeIfPresent(Int64.self, forKey: .originServerTs)
        stateKey = try? container.decodeIfPresent(String.self, forKey: .stateKey)
        content = try? container.decodeIfPresent(Content.self, forKey: .content)
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
