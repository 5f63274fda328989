#if canImport(Glibc)
import Glibc
#endif

/// A point on `CLOCK_MONOTONIC`, in nanoseconds.
public struct MonotonicTime: Sendable, Comparable, Hashable {
    public var nanoseconds: Int64

    public static var now: MonotonicTime {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicTime(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    public static func < (lhs: MonotonicTime, rhs: MonotonicTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: MonotonicTime, rhs: Duration) -> MonotonicTime {
        let (seconds, attoseconds) = rhs.components
        return MonotonicTime(nanoseconds: lhs.nanoseconds + seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
