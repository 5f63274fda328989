import JSONText

extension JSONWriter {
    /// The fields of a message object of the protocol (CONTRACT section 3), without the braces:
    /// `"id","chatId","sender","text","sentAt"`, then `"chatName"` when the chat has one. The
    /// simulator's answers, the page's `messages` events and the export all start a message so;
    /// each writes what it adds after them.
    public mutating func messageFields(id: Int64, chatId: Int64, sender: String, text: String, sentAt: String, chatName: String?) {
        raw(#""id":"#)
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
    }
}
