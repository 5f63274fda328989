import PushRules

/// The parts of the Matrix client-server API's answers this transport reads. Every field the
/// spec allows to be absent is optional; unknown fields are ignored.
struct SyncResponse: Decodable, Sendable {
    var nextBatch: String
    var rooms: Rooms?
    /// The account's own data that changed: its push rules (`m.push_rules`) among them.
    var accountData: AccountData?

    struct AccountData: Decodable, Sendable {
        var events: [AccountDataEvent]?
    }

    /// One piece of account data; the push rules and the direct chats (`m.direct`) are read.
    struct AccountDataEvent: Decodable, Sendable {
        var type: String
        var pushRules: PushRuleSet?
        /// `m.direct`: each user's direct rooms with the account. A value that is no list of room
        /// ids (a broken client's) reads as none for that user.
        var direct: [String: [String]]?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = (try? container.decode(String.self, forKey: .type)) ?? ""
            pushRules = type == "m.push_rules" ? (try? container.decode(GlobalPushRules.self, forKey: .content))?.global : nil
            if type == "m.direct", let content = try? container.decode(JSONValue.self, forKey: .content), case .object(let users) = content {
                direct = users.compactMapValues { rooms in
                    guard case .array(let list) = rooms else { return nil }
                    return list.compactMap { if case .string(let room) = $0 { room } else { nil } }
                }
            }
        }

        enum CodingKeys: String, CodingKey { case type, content }
    }

    struct Rooms: Decodable, Sendable {
        var join: [String: JoinedRoom]?
        /// Rooms the account left, was kicked or banned from since the last sync: their timeline
        /// up to the leave (the same shape as a joined room's).
        var leave: [String: JoinedRoom]?
    }

    struct JoinedRoom: Decodable, Sendable {
        var timeline: Timeline?
        var state: Events?
        var summary: Summary?
        /// What the account's notification counts say of the room: 0 when every message that
        /// counts was read (here or in another client).
        var unreadNotifications: UnreadNotifications?

        enum CodingKeys: String, CodingKey {
            case timeline, state, summary
            case unreadNotifications = "unread_notifications"
        }
    }

    struct UnreadNotifications: Decodable, Sendable {
        var notificationCount: Int?
        var highlightCount: Int?

        enum CodingKeys: String, CodingKey {
            case notificationCount = "notification_count"
            case highlightCount = "highlight_count"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            notificationCount = (try? container.decodeIfPresent(Int.self, forKey: .notificationCount)).flatMap { $0 }.map { max(0, $0) }
            highlightCount = (try? container.decodeIfPresent(Int.self, forKey: .highlightCount)).flatMap { $0 }.map { max(0, $0) }
        }
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
        var joinedMemberCount: Int?
        var invitedMemberCount: Int?

        enum CodingKeys: String, CodingKey {
            case heroes = "m.heroes"
            case joinedMemberCount = "m.joined_member_count"
            case invitedMemberCount = "m.invited_member_count"
        }
    }

    enum CodingKeys: String, CodingKey {
        case rooms
        case nextBatch = "next_batch"
        case accountData = "account_data"
    }
}

/// `GET /pushrules/` and the `m.push_rules` account data: the rules under `global`.
struct GlobalPushRules: Decodable, Sendable {
    var global: PushRuleSet?
}

/// `GET /rooms/{roomId}/messages`: a page of a room's timeline.
struct MessagesPage: Decodable, Sendable {
    var chunk: [RoomEvent]?
    /// Where the next page starts; absent when there is no more.
    var end: String?
    /// With `lazy_load_members`: the member events of the chunk's senders.
    var state: [RoomEvent]?
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
struct RoomEvent: Decodable, Sendable {
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

    /// The content fields read: a message's `body` and relation, a name event's `name`, an alias
    /// event's `alias`, a redaction's `redacts`. A field of another type than the spec's (a
    /// hostile or broken client's event) reads as absent.
    struct Content: Decodable, Sendable {
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
        struct Info: Decodable, Sendable {
            var mimetype: String?
            var size: Int64?
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                mimetype = try? container.decodeIfPresent(String.self, forKey: .mimetype)
                size = (try? container.decodeIfPresent(Int64.self, forKey: .size)).flatMap { $0 >= 0 ? $0 : nil }
            }
            enum CodingKeys: String, CodingKey { case mimetype, size }
        }

        /// `m.relates_to`: an edit (`rel_type` `m.replace`) or a reply (`m.in_reply_to`).
        struct Relation: Decodable, Sendable {
            var relType: String?
            var eventId: String?
            var inReplyTo: String?
            /// In a thread (`m.thread`), the `m.in_reply_to` is only there for clients without
            /// threads (the thread's latest message), not a reply the person made.
            var isFallingBack = false
            /// An annotation's key (a reaction's emoji or word).
            var key: String?

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                relType = try? container.decodeIfPresent(String.self, forKey: .relType)
                eventId = try? container.decodeIfPresent(String.self, forKey: .eventId)
                inReplyTo = (try? container.decodeIfPresent(Reply.self, forKey: .inReplyTo))?.eventId
                key = try? container.decodeIfPresent(String.self, forKey: .key)
                isFallingBack = (try? container.decodeIfPresent(Bool.self, forKey: .isFallingBack)) == true
            }

            struct Reply: Decodable, Sendable {
                var eventId: String?
                enum CodingKeys: String, CodingKey { case eventId = "event_id" }
                init(from decoder: any Decoder) throws {
                    eventId = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .eventId)
                }
            }

            enum CodingKeys: String, CodingKey {
                case key
                case relType = "rel_type"
                case eventId = "event_id"
                case inReplyTo = "m.in_reply_to"
                case isFallingBack = "is_falling_back"
            }
        }

        private struct NewContent: Decodable {
            var body: String?
            init(from decoder: any Decoder) throws {
                body = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .body)
            }
            enum CodingKeys: String, CodingKey { case body }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            body = try? container.decodeIfPresent(String.self, forKey: .body)
            name = try? container.decodeIfPresent(String.self, forKey: .name)
            alias = try? container.decodeIfPresent(String.self, forKey: .alias)
            redacts = try? container.decodeIfPresent(String.self, forKey: .redacts)
            msgtype = try? container.decodeIfPresent(String.self, forKey: .msgtype)
            displayname = try? container.decodeIfPresent(String.self, forKey: .displayname)
            membership = try? container.decodeIfPresent(String.self, forKey: .membership)
            relatesTo = try? container.decodeIfPresent(Relation.self, forKey: .relatesTo)
            newBody = (try? container.decodeIfPresent(NewContent.self, forKey: .newContent))?.body
            url = try? container.decodeIfPresent(String.self, forKey: .url)
            filename = try? container.decodeIfPresent(String.self, forKey: .filename)
            info = try? container.decodeIfPresent(Info.self, forKey: .info)
            hasEncryptedFile = container.contains(.file)
        }

        enum CodingKeys: String, CodingKey {
            case body, name, alias, redacts, msgtype, displayname, membership, url, filename, info, file
            case relatesTo = "m.relates_to"
            case newContent = "m.new_content"
        }
    }

    private struct Unsigned: Decodable {
        var redactedBecause: Bool
        var transactionId: String?
        enum CodingKeys: String, CodingKey {
            case redactedBecause = "redacted_because"
            case transactionId = "transaction_id"
        }
        init(from decoder: any Decoder) throws {
            let container = try? decoder.container(keyedBy: CodingKeys.self)
            redactedBecause = container?.contains(.redactedBecause) ?? false
            transactionId = try? container?.decodeIfPresent(String.self, forKey: .transactionId)
        }
    }

    enum CodingKeys: String, CodingKey {
        case type, sender, content, redacts, unsigned
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
        rawContent = try? container.decodeIfPresent(JSONValue.self, forKey: .content)
        if type == "m.room.power_levels" { powerLevels = try? container.decodeIfPresent(PowerLevels.self, forKey: .content) }
        redacts = try? container.decodeIfPresent(String.self, forKey: .redacts)
        let unsigned = try? container.decodeIfPresent(Unsigned.self, forKey: .unsigned)
        isRedacted = unsigned?.redactedBecause ?? false
        transactionId = unsigned?.transactionId
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
