import JSONText

/// `POST /sim/messages`: `{"account": "primary"|"linked", "count": n, "text"?: s}`, and its
/// answer `{"published": [ids]}`. Read and written by hand rather than through `Codable`: a
/// publish is the first step of every message's trip in the fan-out benchmark, and
/// `JSONDecoder` + `JSONEncoder` were a tenth of the server's CPU for it (perf, N = 1).
struct PublishBody: Equatable {
    var account: String
    var count: Int
    var text: String?

    /// Nil when the body is not such an object (unknown keys are skipped, as `Decodable` would).
    init?(json bytes: [UInt8]) {
        var reader = JSONReader(bytes)
        var account: String?, count: Int64?, text: String?
        do {
            try reader.readObject { reader, key in
                switch key {
                case "account": account = try reader.readString()
                case "count": count = try reader.readInt64()
                case "text": text = reader.readNullIfPresent() ? nil : try reader.readString()
                default: try reader.skipValue()
                }
            }
            try reader.finish()
        } catch {
            return nil
        }
        guard let account, let count, let countAsInt = Int(exactly: count) else { return nil }
        self.init(account: account, count: countAsInt, text: text)
    }

    init(account: String, count: Int, text: String? = nil) {
        self.account = account
        self.count = count
        self.text = text
    }

    static func answer(_ ids: [Int64]) -> [UInt8] {
        var json = JSONWriter(capacity: 16 + ids.count * 8)
        json.raw(#"{"published":["#)
        for (index, id) in ids.enumerated() {
            if index > 0 { json.raw(",") }
            json.number(id)
        }
        json.raw("]}")
        return json.bytes
    }
}
