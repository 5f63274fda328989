/// Exponential backoff with full jitter: after the n-th failure in a row (n = 1, 2, ...) wait a
/// uniformly random time in `0 ... min(cap, base * 2^(n-1))`. The whole interval, not "about
/// base": retries of many clients spread evenly instead of arriving together.
public struct Backoff: Sendable, Equatable {
    public var base: Duration
    public var cap: Duration

    public init(base: Duration = .seconds(2), cap: Duration = .seconds(30)) {
        self.base = base
        self.cap = max(cap, .zero)
    }

    /// The largest wait after failure `n` (n >= 1).
    public func ceiling(afterFailure n: Int) -> Duration {
        let exponent = min(max(n, 1) - 1, 40)
        let grown = base * (1 << exponent)
        return min(cap, grown)
    }

    /// A wait drawn uniformly from `0 ... ceiling(afterFailure: n)`, at millisecond resolution.
    public func delay<Generator: RandomNumberGenerator>(afterFailure n: Int, using generator: inout Generator) -> Duration {
        let ceiling = ceiling(afterFailure: n)
        let milliseconds = ceiling.components.seconds * 1000 + ceiling.components.attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return .zero }
        return .milliseconds(Int64.random(in: 0...milliseconds, using: &generator))
    }
}
