import Foundation
import Testing
@testable import Upstream

@Suite("Timestamp")
struct TimestampTests {
    private static let foundation = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    @Test func knownInstantsAreWrittenInTheProductsFormat() {
        #expect(Timestamp.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.string(Date(timeIntervalSince1970: 1_795_953_600.5)) == "2026-11-29T12:00:00.500Z")
        #expect(Timestamp.string(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp.string(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    /// Every instant written by hand reads as Foundation's ISO-8601 style writes it, and reads back.
    @Test func agreesWithFoundationsStyleOverFourCenturies() {
        var generator = SystemRandomNumberGenerator()
        var instants: [Double] = [0, -1, 86_399.999, 86_400, 4_102_444_799.9999, 946_684_800, 951_868_799.9995]
        for _ in 0..<20_000 {
            instants.append(Double.random(in: -9_000_000_000...12_000_000_000, using: &generator))
            // Whole milliseconds too, and the instants just below them, where truncation shows.
            let whole = Double(Int64.random(in: -9_000_000_000_000...12_000_000_000_000, using: &generator)) / 1000
            instants.append(whole)
            instants.append(whole.nextDown)
        }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: seconds)
            let ours = Timestamp.string(date)
            #expect(ours == date.formatted(Self.foundation), "\(seconds)")
            // Milliseconds are truncated, so what reads back is at most a millisecond earlier.
            #expect(Timestamp.date(ours).map { abs($0.timeIntervalSince1970 - seconds) < 0.0015 } == true, "\(seconds)")
        }
    }

    @Test func civilDatesAroundLeapDaysAndCenturies() {
        #expect(Timestamp.civilDate(daysSince1970: 0) == (1970, 1, 1))
        #expect(Timestamp.civilDate(daysSince1970: 11_016) == (2000, 2, 29))
        #expect(Timestamp.civilDate(daysSince1970: 47_541) == (2100, 3, 1))
        #expect(Timestamp.civilDate(daysSince1970: -1) == (1969, 12, 31))
    }
}
