/// Counts of values at or below each bound, plus their sum: a Prometheus histogram's data.
public struct Histogram: Sendable, Equatable {
    public let bounds: [Double]
    /// `cumulative[i]`: observations at or below `bounds[i]`.
    public private(set) var cumulative: [Int]
    public private(set) var count = 0
    public private(set) var sum = 0.0

    public init(bounds: [Double]) {
        self.bounds = bounds
        cumulative = Array(repeating: 0, count: bounds.count)
    }

    public mutating func observe(_ value: Double) {
        count += 1
        sum += value
        for index in bounds.indices where value <= bounds[index] {
            cumulative[index] += 1
        }
    }
}

extension Duration {
    /// The duration in seconds, with its fraction (for histograms and `Date` arithmetic).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
