import JSONText
import Upstream

extension MessagesAnswer {
    /// Reads `{"messages": {"<userId>": [message, ...], ...}}` (or `{}` on a timeout) without
    /// `JSONDecoder`: this is ingest's hot path. Other keys are skipped, as `Decodable` would.
    public init(json bytes: [UInt8]) throws {
        var reader = JSONReader(bytes)
        var messages: [String: [UpstreamMessage]] = [:]
        try reader.readObject { reader, key in
            guard key == "messages" else { return try reader.skipValue() }
            if reader.readNullIfPresent() { return }
            try reader.readObject { reader, user in
                var stream: [UpstreamMessage] = []
                try reader.readArray { reader in stream.append(try UpstreamMessage(reading: &reader)) }
                messages[user] = stream
            }
        }
        try reader.finish()
        self.init(messages: messages)
    }
}

extension UpstreamMessage {
    /// Reads one message object; every field must be there but `chatName` (an extension the
    /// built-in simulator sends: the chat's name) and `sendKey` (the `Idempotency-Key` a message
    /// of the account's own was sent under, CONTRACT section 11), unknown ones are skipped.
    init(reading reader: inout JSONReader) throws {
        var id: Int64?, chatId: Int64?, sender: String?, text: String?, sentAt: String?, chatName: String?, sendKey: String?
        try reader.readObject { reader, key in
            switch key {
            case "id": id = try reader.readInt64()
            case "chatId": chatId = try reader.readInt64()
            case "sender": sender = try reader.readString()
            case "text": text = try reader.readString()
            case "sentAt": sentAt = try reader.readString()
            case "chatName": chatName = reader.readNullIfPresent() ? nil : try reader.readString()
            case "sendKey": sendKey = reader.readNullIfPresent() ? nil : try reader.readString()
            default: try reader.skipValue()
            }
        }
        guard let id, let chatId, let sender, let text, let sentAt else {
            throw reader.error("a message without id, chatId, sender, text or sentAt")
        }
        self.init(id: id, chatId: chatId, sender: sender, text: text, sentAt: sentAt, chatName: chatName, sendKey: sendKey)
    }
}

/// The answer to `POST /v1/messages`: `{"id": n}`, read on every send without `JSONDecoder`.
struct SentAnswer {
    var id: Int64

    init(json bytes: [UInt8]) throws {
        var reader = JSONReader(bytes)
        var id: Int64?
        try reader.readObject { reader, key in
            if key == "id" { id = try reader.readInt64() } else { try reader.skipValue() }
        }
        try reader.finish()
        guard let id else { throw reader.error("no id") }
        self.id = id
    }
}
