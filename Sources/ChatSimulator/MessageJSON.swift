import Upstream

/// JSON for messages, written by hand: each message is encoded once, when it is published, and a
/// `messages` answer is the concatenation of those fragments. Answers are the simulator's hot path.
enum MessageJSON {
    static func fragment(_ message: UpstreamMessage) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96 + message.text.utf8.count)
        bytes.append(contentsOf: #"{"id":"#.utf8)
        bytes.append(contentsOf: String(message.id).utf8)
        bytes.append(contentsOf: #","chatId":"#.utf8)
        bytes.append(contentsOf: String(message.chatId).utf8)
        bytes.append(contentsOf: #","sender":"#.utf8)
        appendQuoted(message.sender, to: &bytes)
        bytes.append(contentsOf: #","text":"#.utf8)
        appendQuoted(message.text, to: &bytes)
        bytes.append(contentsOf: #","sentAt":"#.utf8)
        appendQuoted(message.sentAt, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `{"messages":{"<user>":[...],...}}` from the fragments of each stream.
    static func answer(_ streams: [(user: Int64, fragments: ArraySlice<[UInt8]>)]) -> [UInt8] {
        var bytes = Array(#"{"messages":{"#.utf8)
        for (index, stream) in streams.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: "\"\(stream.user)\":[".utf8)
            for (offset, fragment) in stream.fragments.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: fragment)
            }
            bytes.append(UInt8(ascii: "]"))
        }
        bytes.append(contentsOf: "}}".utf8)
        return bytes
    }

    /// A JSON string literal (RFC 8259 section 7): quotes, backslashes and control characters escaped.
    static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
