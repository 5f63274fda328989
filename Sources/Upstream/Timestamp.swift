import Foundation

/// The product's one timestamp format, ISO-8601 in UTC with milliseconds
/// (`2026-11-29T12:00:00.000Z`): the protocol's `sentAt`, the store's `receivedAt`, and every
/// date in the dashboard's API.
public enum Timestamp {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public static func string(_ date: Date) -> String {
        date.formatted(style)
    }

    /// Reads the format back; also takes whole seconds (`2026-11-29T12:00:00Z`).
    public static func date(_ text: String) -> Date? {
        (try? style.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
