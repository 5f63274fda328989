import JSONText
import Upstream

/// JSON for messages, written by hand: each message is encoded once, when it is published, and a
/// `messages` answer is the concatenation of those fragments. Answers are the simulator's hot path.
enum AnswerJSON {
    /// A message object of the protocol (CONTRACT section 3): `{"id","chatId","sender","text","sentAt"}`,
    /// and `"chatName"` after them when the chat has one, then `"sendKey"` for one the account sent
    /// (`POST /v1/messages`): the key it went under, so the sender knows its echo.
    static func fragment(_ message: UpstreamMessage) -> [UInt8] {
        var json = JSONWriter(capacity: 96 + message.text.utf8.count)
        json.raw("{")
        json.messageFields(id: message.id, chatId: message.chatId, sender: message.sender, text: message.text, sentAt: message.sentAt,
                           chatName: message.chatName)
        if let key = message.sendKey {
            json.raw(#","sendKey":"#)
            json.string(key)
        }
        json.raw("}")
        return json.bytes
    }

    /// `{"messages":{"<user>":[...],...}}` from the fragments of each stream.
    static func answer(_ streams: [(user: Int64, fragments: ArraySlice<[UInt8]>)]) -> [UInt8] {
        var json = JSONWriter(capacity: 64 + streams.reduce(0) { $0 + $1.fragments.reduce(0) { $0 + $1.count + 1 } })
        json.raw(#"{"messages":{"#)
        for (index, stream) in streams.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("\"\(stream.user)\":[")
            for (offset, fragment) in stream.fragments.enumerated() {
                if offset > 0 { json.raw(",") }
                json.raw(bytes: fragment)
            }
            json.raw("]")
        }
        json.raw("}}")
        return json.bytes
    }
}
