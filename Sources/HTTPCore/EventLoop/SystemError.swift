#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call and its `errno`.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    static func last(_ call: String) -> SystemError {
        SystemError(call: call, errno: Glibc.errno)
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}
