import Foundation

/// The product's one timestamp format, ISO-8601 in UTC with milliseconds
/// (`2026-11-29T12:00:00.000Z`): the protocol's `sentAt`, the store's `receivedAt`, and every
/// date in the dashboard's API.
public enum Timestamp {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Written by hand (the civil date of the day, then the time of day): `ISO8601FormatStyle`
    /// took 1 % of the server's CPU per message, for a stamp that every message gets twice.
    public static func string(_ date: Date) -> String {
        // As Foundation does it: whole seconds since 2001 floored, the fraction truncated to
        // milliseconds (so both write the same text for every instant).
        let sinceReference = date.timeIntervalSinceReferenceDate
        guard sinceReference.isFinite, abs(sinceReference) < 2.5e11 else { return date.formatted(style) }
        let wholeSeconds = sinceReference.rounded(.down)
        let millisecond = min(999, Int64((sinceReference - wholeSeconds) * 1000))
        let secondsSince1970 = Int64(wholeSeconds) + 978_307_200
        let (days, secondOfDay) = floorDivision(secondsSince1970, 86_400)
        let millisecondOfDay = secondOfDay * 1000 + millisecond
        let (year, month, day) = civilDate(daysSince1970: days)
        guard (1000...9999).contains(year) else { return date.formatted(style) }
        var text = [UInt8]()
        text.reserveCapacity(24)
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4); text.append(UInt8(ascii: "-"))
        digits(month, 2); text.append(UInt8(ascii: "-"))
        digits(day, 2); text.append(UInt8(ascii: "T"))
        digits(millisecondOfDay / 3_600_000, 2); text.append(UInt8(ascii: ":"))
        digits(millisecondOfDay / 60_000 % 60, 2); text.append(UInt8(ascii: ":"))
        digits(millisecondOfDay / 1000 % 60, 2); text.append(UInt8(ascii: "."))
        digits(millisecondOfDay % 1000, 3); text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// Year, month, day of the proleptic Gregorian calendar for a count of days since 1970-01-01
    /// (H. Hinnant's `civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Reads the format back; also takes whole seconds (`2026-11-29T12:00:00Z`).
    public static func date(_ text: String) -> Date? {
        (try? style.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
