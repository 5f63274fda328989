#if canImport(Glibc)
import Glibc
#endif

/// Writes response heads and bodies into a byte buffer. Lives on the loop thread; caches the
/// `Date` value for the current second.
struct ResponseEncoder {
    private var cachedSecond: Int = -1
    private var cachedDate: [UInt8] = []

    /// Headers the server owns; a responder's copies are dropped so the framing cannot be confused.
    private static let managed = ["Content-Length", "Transfer-Encoding", "Connection", "Date"]

    private static func isManaged(_ name: String) -> Bool {
        managed.contains { name.equalsIgnoringASCIICase($0) }
    }

    /// Bodies up to this size are copied behind the head; larger ones go out as their own chunk.
    private static let inlineBodyLimit = 2048

    /// How the client learns where a body ends.
    enum Framing {
        case length(Int)
        /// `Transfer-Encoding: chunked` (HTTP/1.1 only).
        case chunked
        /// The body ends with the connection (a streamed body to an HTTP/1.0 client).
        case untilClose
    }

    /// The head and, unless omitted, the body of `response`, as chunks ready for an `OutboundQueue`.
    mutating func encode(_ response: HTTPResponse, omitBody: Bool, close: Bool, http10KeepAlive: Bool = false) -> [[UInt8]] {
        var head: [UInt8] = []
        head.reserveCapacity(512)
        let bodyFollows = encodeHead(response, framing: .length(response.body.count), into: &head, close: close,
                                     http10KeepAlive: http10KeepAlive) && !omitBody
        guard bodyFollows, !response.body.isEmpty else { return [head] }
        if response.body.count <= Self.inlineBodyLimit {
            head.append(contentsOf: response.body)
            return [head]
        }
        return [head, response.body]
    }

    /// The head of a response whose body follows in pieces (``StreamedBody``); false when the
    /// status allows no body.
    mutating func encodeStreamedHead(_ response: HTTPResponse, chunked: Bool, close: Bool, into head: inout [UInt8]) -> Bool {
        encodeHead(response, framing: chunked ? .chunked : .untilClose, into: &head, close: close, http10KeepAlive: false)
    }

    /// One piece of a chunked body: its size in hex, the bytes, CRLF (RFC 9112 section 7.1).
    static func chunkHeader(_ count: Int) -> [UInt8] {
        Array((String(count, radix: 16) + "\r\n").utf8)
    }

    static let chunkTrailer: [UInt8] = Array("\r\n".utf8)
    /// The last chunk, with no trailer fields.
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    /// Writes the status line and headers; returns whether the status allows a body.
    private mutating func encodeHead(_ response: HTTPResponse, framing: Framing, into buffer: inout [UInt8], close: Bool,
                                     http10KeepAlive: Bool) -> Bool {
        let status = response.status
        buffer.append(contentsOf: "HTTP/1.1 \(status.code) \(Self.sanitized(status.reason))\r\n".utf8)
        for (name, value) in response.headers where !Self.isManaged(name) {
            buffer.append(contentsOf: Self.sanitized(name).utf8)
            buffer.append(contentsOf: ": ".utf8)
            buffer.append(contentsOf: Self.sanitized(value).utf8)
            buffer.append(contentsOf: "\r\n".utf8)
        }
        let hasBody = !(status.code < 200 || status.code == 204 || status.code == 304)
        if hasBody {
            switch framing {
            case .length(let count): buffer.append(contentsOf: "Content-Length: \(count)\r\n".utf8)
            case .chunked: buffer.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
            case .untilClose: break
            }
        }
        buffer.append(contentsOf: "Date: ".utf8)
        buffer.append(contentsOf: currentDate())
        buffer.append(contentsOf: "\r\n".utf8)
        if close {
            buffer.append(contentsOf: "Connection: close\r\n".utf8)
        } else if http10KeepAlive {
            buffer.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        buffer.append(contentsOf: "\r\n".utf8)
        return hasBody
    }

    /// Removes CR, LF and NUL so no value can start a new header line (response splitting).
    private static func sanitized(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { return text }
        return String(decoding: text.utf8.filter { $0 != 0x0D && $0 != 0x0A && $0 != 0 }, as: UTF8.self)
    }

    private mutating func currentDate() -> [UInt8] {
        let now = time(nil)
        if now != cachedSecond {
            cachedSecond = now
            cachedDate = Array(HTTPDate.format(now).utf8)
        }
        return cachedDate
    }
}

/// IMF-fixdate (RFC 9110 section 5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
public enum HTTPDate {
    /// The seconds since 1970 an HTTP date says, in any of the three forms a recipient must read
    /// (IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`,
    /// asctime `Sun Nov  6 08:49:37 1994`); nil for anything else.
    public static func parse(_ text: String) -> Int? {
        let words = text.split(separator: " ")
        let day: Substring, month: Substring, year: Substring, time: Substring
        switch words.count {
        case 6 where words[0].hasSuffix(",") && words[5] == "GMT":
            (day, month, year, time) = (words[1], words[2], words[3], words[4])
        case 4 where words[0].hasSuffix(",") && words[3] == "GMT":
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[2].count == 2 else { return nil }
            (day, month, year, time) = (parts[0], parts[1], parts[2], words[2])
        case 5 where !words[0].hasSuffix(","):
            (day, month, year, time) = (words[2], words[1], words[4], words[3])
        default:
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard let monthIndex = months.firstIndex(where: { $0 == month }), var yearNumber = Int(year), let dayNumber = Int(day),
              clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        // A two-digit year (RFC 850) is the one of the last hundred years it can be.
        if year.count == 2 { yearNumber += yearNumber < 70 ? 2000 : 1900 }
        let leap = yearNumber % 4 == 0 && (yearNumber % 100 != 0 || yearNumber % 400 == 0)
        let monthLengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...monthLengths[monthIndex]).contains(dayNumber) else { return nil }
        return daysSince1970(year: yearNumber, month: monthIndex + 1, day: dayNumber) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// days-from-civil).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public static func format(_ seconds: Int) -> String {
        var time = seconds
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
