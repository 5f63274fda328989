import Foundation

/// The key a message carries upstream (the simulator's `Idempotency-Key`, Matrix's `txnId`):
/// unique, and ordered by when it was made.
///
/// The outbox finds an entry by this key when its echo comes back through sync, in a unique
/// index. Random keys (a UUID) scatter a run of sends over that index, and each one sent dirties
/// a page of its own in the commit that takes it out; keys that grow with time keep a run of
/// them in a few pages. The time is the first part (milliseconds since 1970, 12 hex digits, so
/// they compare as text), 80 random bits after it keep two made in the same millisecond, or on
/// two machines, apart.
enum SendKey {
    static func make(at date: Date, random: () -> UInt64) -> String {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let high = random() & 0xFFFF, low = random()
        return "lp-" + hex(milliseconds, digits: 12) + "-" + hex(high, digits: 4) + hex(low, digits: 16)
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text.suffix(digits)
    }
}
