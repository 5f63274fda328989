#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// How much the process says on stderr; each level includes the ones above it.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case error = 0, warning, info, debug, trace

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name.lowercased() }) else {
            return nil
        }
        self = level
    }

    public var description: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .debug: "debug"
        case .trace: "trace"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where finished log lines go; tests install a recording sink.
public protocol LogSink: Sendable {
    func write(_ line: String)
}

/// Writes each line to stderr with a single `write(2)` so lines from threads never interleave.
public struct StandardErrorSink: LogSink {
    public init() {}

    public func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// A named logger. Cheap to copy; the level and sink are shared process-wide through `LogConfiguration`.
///
/// ```swift
/// let log = Logger("http")
/// log.info("listening on \(port)")
/// ```
public struct Logger: Sendable {
    public let label: String

    public init(_ label: String) {
        self.label = label
    }

    public func isEnabled(_ level: LogLevel) -> Bool {
        level <= LogConfiguration.level
    }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        LogConfiguration.sink.write("\(Self.timestamp()) \(level.description.uppercased()) [\(label)] \(message())")
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let millis = now.tv_nsec / 1_000_000
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}

/// Process-wide logging settings, set once by the executable at start-up.
public enum LogConfiguration {
    private static let levelValue = Atomic<Int>(LogLevel.info.rawValue)
    private static let sinkValue = Mutex<any LogSink>(StandardErrorSink())

    /// Checked on every log call, so it is an atomic rather than a lock.
    public static var level: LogLevel {
        get { LogLevel(rawValue: levelValue.load(ordering: .relaxed)) ?? .info }
        set { levelValue.store(newValue.rawValue, ordering: .relaxed) }
    }

    public static var sink: any LogSink {
        get { sinkValue.withLock { $0 } }
        set { sinkValue.withLock { $0 = newValue } }
    }
}
