import Foundation
import Testing
@testable import Engine

@Suite("Send keys")
struct SendKeyTests {
    @Test func keysMadeLaterSortAfterEarlierOnesAsText() {
        var seed: UInt64 = 0
        let next = { () -> UInt64 in
            seed &+= 0x9E37_79B9_7F4A_7C15
            return seed
        }
        let start = Date(timeIntervalSince1970: 1_796_000_000)
        // Five milliseconds apart: keys made within one millisecond are in no order.
        let keys = (0..<200).map { SendKey.make(at: start.addingTimeInterval(Double($0) * 0.005), random: next) }
        #expect(keys == keys.sorted())
        #expect(Set(keys).count == keys.count)
    }

    @Test func twoKeysMadeInOneMillisecondDifferAndAreSafeInAURLPath() {
        var generator = SystemRandomNumberGenerator()
        let now = Date()
        let first = SendKey.make(at: now, random: { generator.next() })
        let second = SendKey.make(at: now, random: { generator.next() })
        #expect(first != second)
        #expect(first.count == second.count)
        #expect(first.hasPrefix("lp-"))
        #expect(first.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == "-" || $0 == "l" || $0 == "p") })
    }
}
