import JSONText

extension JSONWriter {
    /// A message object with the protocol's fields (CONTRACT section 3), which the dashboard's
    /// `messages` events carry too: `{"id","chatId","sender","text","sentAt"}`, and `"chatName"`
    /// after them when the chat has one.
    public mutating func message(id: Int64, chatId: Int64, sender: String, text: String, sentAt: String, chatName: String? = nil,
                                 editedAt: String? = nil, kind: String? = nil, senderName: String? = nil,
                                 media: (name: String, mimetype: String?, size: Int64?, url: String?)? = nil, replyTo: Int64?? = nil) {
        raw(#"{"id":"#)
        number(id)
        raw(#","chatId":"#)
        number(chatId)
        raw(#","sender":"#)
        string(sender)
        raw(#","text":"#)
        string(text)
        raw(#","sentAt":"#)
        string(sentAt)
        if let chatName {
            raw(#","chatName":"#)
            string(chatName)
        }
        if let editedAt {
            raw(#","editedAt":"#)
            string(editedAt)
        }
        if let kind {
            raw(#","kind":"#)
            string(kind)
        }
        if let senderName {
            raw(#","senderName":"#)
            string(senderName)
        }
        if let media {
            raw(#","media":{"name":"#)
            string(media.name)
            raw(#","mimetype":"#)
            if let type = media.mimetype { string(type) } else { null() }
            raw(#","size":"#)
            if let size = media.size { number(size) } else { null() }
            raw(#","url":"#)
            if let url = media.url { string(url) } else { null() }
            raw("}")
        }
        if let replyTo {
            raw(#","replyTo":"#)
            if let id = replyTo { number(id) } else { null() }
        }
        raw("}")
    }
}
