import Engine
import Testing
import TestSupport

@Suite("Backoff with full jitter")
struct BackoffTests {
    @Test func ceilingsDoubleFromTheBaseUpToTheCap() {
        let backoff = Backoff(base: .seconds(2), cap: .seconds(30))
        #expect((1...7).map { backoff.ceiling(afterFailure: $0) } == [2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        #expect(backoff.ceiling(afterFailure: 1000) == .seconds(30), "no overflow for long outages")
    }

    @Test(arguments: [1, 2, 3, 4, 8])
    func tenThousandDrawsStayInBoundsAndSpreadOverTheWholeInterval(_ failure: Int) {
        let backoff = Backoff()
        var random = TestRandom(seed: UInt64(failure))
        let ceiling = backoff.ceiling(afterFailure: failure)
        let ceilingMilliseconds = Double(ceiling.components.seconds * 1000)
        var buckets = [Int](repeating: 0, count: 10)
        var sum = 0.0
        for _ in 0..<10_000 {
            let delay = backoff.delay(afterFailure: failure, using: &random)
            #expect(delay >= .zero && delay <= ceiling)
            let milliseconds = Double(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
            sum += milliseconds
            buckets[min(9, Int(milliseconds / ceilingMilliseconds * 10))] += 1
        }
        // Full jitter: uniform over 0...ceiling, so the mean is about half the ceiling and every
        // tenth of the interval gets about a tenth of the draws (not a clump near the base).
        let mean = sum / 10_000
        #expect(abs(mean - ceilingMilliseconds / 2) < ceilingMilliseconds * 0.03, "mean \(mean) of \(ceilingMilliseconds)")
        #expect(buckets.allSatisfy { $0 > 850 && $0 < 1150 }, "\(buckets)")
    }
}

@Suite("Histogram")
struct HistogramTests {
    @Test func bucketsAreCumulativeAndMemoryStaysFixed() {
        var histogram = Histogram(bounds: [1, 2, 4])
        for value in [0.5, 1.5, 3.0, 10.0] { histogram.observe(value) }
        #expect(histogram.cumulative == [1, 2, 3])
        #expect(histogram.count == 4)
        #expect(histogram.sum == 15)
    }
}
