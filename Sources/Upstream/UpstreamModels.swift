/// What `POST /v1/session` answers.
public struct UpstreamSession: Sendable, Equatable, Codable {
    public var token: String
    public var primaryUserId: Int64
    public var linkedUserId: Int64?
    public var storageQuotaBytes: Int64

    public init(token: String, primaryUserId: Int64, linkedUserId: Int64?, storageQuotaBytes: Int64) {
        self.token = token
        self.primaryUserId = primaryUserId
        self.linkedUserId = linkedUserId
        self.storageQuotaBytes = storageQuotaBytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
        try container.encode(primaryUserId, forKey: .primaryUserId)
        try container.encode(linkedUserId, forKey: .linkedUserId)  // null, not absent
        try container.encode(storageQuotaBytes, forKey: .storageQuotaBytes)
    }
}

/// What `GET /v1/last-message-info` answers: the newest id the server has per stream.
public struct LastMessageInfo: Sendable, Equatable, Codable {
    public var primaryLastId: Int64
    public var linkedLastId: Int64?

    public init(primaryLastId: Int64, linkedLastId: Int64?) {
        self.primaryLastId = primaryLastId
        self.linkedLastId = linkedLastId
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(primaryLastId, forKey: .primaryLastId)
        try container.encode(linkedLastId, forKey: .linkedLastId)
    }
}

/// One message on the wire.
public struct UpstreamMessage: Sendable, Equatable, Codable {
    public var id: Int64
    public var chatId: Int64
    public var sender: String
    public var text: String
    public var sentAt: String

    public init(id: Int64, chatId: Int64, sender: String, text: String, sentAt: String) {
        self.id = id
        self.chatId = chatId
        self.sender = sender
        self.text = text
        self.sentAt = sentAt
    }
}

/// What `GET /v1/messages` answers: messages keyed by user id (as a string); empty on timeout.
public struct MessagesAnswer: Sendable, Equatable, Codable {
    public var messages: [String: [UpstreamMessage]]

    public init(messages: [String: [UpstreamMessage]]) {
        self.messages = messages
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messages = try container.decodeIfPresent([String: [UpstreamMessage]].self, forKey: .messages) ?? [:]
    }
}

/// Where the streams stand: ask for messages after these ids.
public struct StreamCursors: Sendable, Equatable {
    public var primaryAfter: Int64
    /// nil when there is no linked account.
    public var linkedAfter: Int64?

    public init(primaryAfter: Int64, linkedAfter: Int64?) {
        self.primaryAfter = primaryAfter
        self.linkedAfter = linkedAfter
    }
}
