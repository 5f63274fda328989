import Foundation
import Synchronization

/// One of the package's executables (built next to the test bundle) run as a child process, with
/// its stdout lines and its exit available as events to await.
public final class ChildProcess: Sendable {
    public struct Exit: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var timedOut: Bool
    }

    private let process: Process
    private let stdoutLines: AsyncStream<String>
    private let stdoutDone: AsyncStream<String>
    private let stderrDone: AsyncStream<String>
    private let status: AsyncStream<Int32>

    /// The path of the package executable `name` in the folder the tests were built into.
    public static func binaryPath(_ name: String) -> String {
        var folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        // Bundle layout: .build/<triple>/debug/<Package>PackageTests.xctest
        if folder.lastPathComponent.hasSuffix(".xctest") { folder.deleteLastPathComponent() }
        return folder.appendingPathComponent(name).path
    }

    /// `environment` entries are added to (or replace) this process's environment.
    public convenience init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(path: Self.binaryPath(executable), arguments, environment: environment)
    }

    /// Runs any program, e.g. `/usr/bin/prlimit` wrapping one of ours.
    public init(path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var inherited = ProcessInfo.processInfo.environment
        // Ours end with this test process even when it crashes or is killed: none is left behind.
        inherited["LP_END_WITH_PARENT"] = String(getpid())
        process.environment = inherited.merging(environment) { $1 }
        let stdoutPipe = Pipe(), stderrPipe = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        let (lines, lineSink) = AsyncStream<String>.makeStream()
        let (stdoutDone, stdoutSink) = AsyncStream<String>.makeStream()
        let (stderrDone, stderrSink) = AsyncStream<String>.makeStream()
        let (status, statusSink) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { statusSink.yield($0.terminationStatus) }
        try process.run()
        Self.drain(stdoutPipe.fileHandleForReading, lines: lineSink, done: stdoutSink)
        Self.drain(stderrPipe.fileHandleForReading, lines: nil, done: stderrSink)
        self.process = process
        self.stdoutLines = lines
        self.stdoutDone = stdoutDone
        self.stderrDone = stderrDone
        self.status = status
    }

    /// Reads a pipe on its own thread until end of file (the child exited or closed it).
    private static func drain(_ handle: FileHandle, lines: AsyncStream<String>.Continuation?,
                              done: AsyncStream<String>.Continuation) {
        let thread = Thread {
            var all = "", partial = ""
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                let text = String(decoding: data, as: UTF8.self)
                all += text
                partial += text
                var split = partial.components(separatedBy: "\n")
                partial = split.removeLast()
                split.forEach { lines?.yield($0) }
            }
            lines?.finish()
            done.yield(all)
            done.finish()
        }
        thread.start()
    }

    /// A child still running when the test lets go of it (a `#require` that threw before the
    /// test's own stop) is killed: no process outlives its test.
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    public var pid: Int32 { process.processIdentifier }

    /// Whether it has not exited yet (a pid is not signalled after its process is gone).
    public var isRunning: Bool { process.isRunning }

    /// The next line the process writes to stdout, or nil when stdout closed first.
    public func nextLine() async -> String? {
        for await line in stdoutLines { return line }
        return nil
    }

    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the exit. A watchdog kills the process after `limit` so a hang fails the test
    /// (`timedOut`) instead of blocking the suite; it is a safety net, not a measurement.
    public func waitForExit(limit: Duration = .seconds(20)) async -> Exit {
        let fired = Atomic<Bool>(false)
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: limit)
            fired.store(true, ordering: .relaxed)
            kill(pid, SIGKILL)
        }
        var exitStatus: Int32 = -1
        for await value in status {
            exitStatus = value
            break
        }
        watchdog.cancel()
        var stdout = "", stderr = ""
        for await text in stdoutDone { stdout = text }
        for await text in stderrDone { stderr = text }
        return Exit(status: exitStatus, stdout: stdout, stderr: stderr, timedOut: fired.load(ordering: .relaxed))
    }

    /// Runs the executable to completion.
    public static func run(_ executable: String, _ arguments: [String]) async throws -> Exit {
        try await ChildProcess(executable, arguments).waitForExit()
    }
}

/// Runs a program to its end without holding a thread of the cooperative pool (a test that
/// blocked one while a browser or a script runs for a minute would starve the tests beside it):
/// the output is read on a thread of its own. Returns the exit status and everything printed.
public func runToCompletion(_ executable: String, _ arguments: [String], in folder: URL? = nil) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let folder { process.currentDirectoryURL = folder }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output: String = await withCheckedContinuation { continuation in
        Thread {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            continuation.resume(returning: String(decoding: data, as: UTF8.self))
        }.start()
    }
    let status: Int32 = await withCheckedContinuation { continuation in
        Thread {
            process.waitUntilExit()
            continuation.resume(returning: process.terminationStatus)
        }.start()
    }
    return (status, output)
}
