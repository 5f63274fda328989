import Synchronization
import Testing
@testable import Logging

final class RecordingSink: LogSink {
    let lines = Mutex<[String]>([])
    func write(_ line: String) { lines.withLock { $0.append(line) } }
}

@Suite("Logger", .serialized)
struct LoggerTests {
    @Test func levelsParseByName() {
        #expect(LogLevel(name: "WARNING") == .warning)
        #expect(LogLevel(name: "verbose") == nil)
        #expect(LogLevel.error < LogLevel.debug)
    }

    @Test func linesBelowTheLevelAreDroppedAndOthersAreLabelled() {
        let sink = RecordingSink()
        let previous = (LogConfiguration.level, LogConfiguration.sink)
        defer { (LogConfiguration.level, LogConfiguration.sink) = previous }
        LogConfiguration.sink = sink
        LogConfiguration.level = .warning
        let log = Logger("test")
        log.info("hidden")
        log.warning("shown")
        // Other suites may log through the same process-wide sink meanwhile; look at ours only.
        let lines = sink.lines.withLock { $0 }.filter { $0.contains("[test]") }
        #expect(lines.count == 1)
        #expect(lines.first?.hasSuffix("WARNING [test] shown") == true)
        #expect(lines.first?.contains("T") == true, "starts with an ISO-8601 timestamp")
    }
}
