import Synchronization

/// A long-running part of the process (the HTTP server, the engine, the feed, ...): `run()` does
/// its work until its task is cancelled, then finishes what must be finished (commits, closes,
/// answers what waits) and returns. A service that returns or throws before it is cancelled has
/// ended by itself, and the process stops.
public protocol Service: Sendable {
    /// What logs call it.
    var name: String { get }
    func run() async throws
}

/// A service written as a closure: `run` works until cancelled, then cleans up.
public struct NamedService: Service {
    public let name: String
    private let body: @Sendable () async throws -> Void

    public init(_ name: String, run body: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.body = body
    }

    public func run() async throws {
        try await body()
    }
}

/// Returns once the current task is cancelled (at once if it already is): the wait of a service
/// whose work is done by others (a server's event loop) until it is asked to stop.
public func untilCancelled() async {
    let (never, continuation) = AsyncStream<Never>.makeStream()
    // An AsyncStream's iterator ends when the task awaiting it is cancelled; the continuation is
    // kept until then, so the stream cannot end any other way.
    for await _ in never {}
    continuation.finish()
}

/// Services run together, each in a task the group owns, and stopped in the reverse order of the
/// list: each is cancelled and awaited before the one before it, so a service is stopped before
/// the ones it uses (the HTTP server before the engine, the engine before the store).
///
/// Dropping the group cancels whatever still runs.
public final class ServiceGroup: Sendable {
    /// Why the group stopped.
    public enum Ending: Sendable, Equatable {
        /// It was asked to (a signal, by its name).
        case asked(String)
        /// A service ended by itself: returned, or threw (`error`).
        case serviceEnded(name: String, error: String?)
    }

    private let names: [String]
    private let tasks: [Task<Void, Never>]
    /// Opened as each service's task ends: a wait for it that, unlike `Task.value`, can be given up.
    private let completions: [Completion]
    private let endings: AsyncStream<Ending>
    private let sink: AsyncStream<Ending>.Continuation
    private let clock: any Clock<Duration>

    /// Starts every service, each in its own task.
    public init(_ services: [any Service], clock: any Clock<Duration> = ContinuousClock()) {
        let (endings, sink) = AsyncStream.makeStream(of: Ending.self)
        self.endings = endings
        self.sink = sink
        self.clock = clock
        names = services.map(\.name)
        let completions = services.map { _ in Completion() }
        self.completions = completions
        tasks = zip(services, completions).map { service, completion in
            Task {
                defer { completion.finish() }
                let failure: String?
                do {
                    try await service.run()
                    failure = nil
                } catch {
                    failure = "\(error)"
                }
                // Ending when cancelled is what stopping asks for, not a service ending by itself.
                if !Task.isCancelled { sink.yield(.serviceEnded(name: service.name, error: failure)) }
            }
        }
    }

    deinit {
        tasks.forEach { $0.cancel() }
        sink.finish()
    }

    /// Waits until `request` returns (its answer names why, e.g. the signal) or a service ends by
    /// itself, whichever is first. Call it once.
    public func wait(orUntil request: @escaping @Sendable () async -> String) async -> Ending {
        let sink = self.sink
        let asking = Task { sink.yield(.asked(await request())) }
        defer { asking.cancel() }
        for await ending in endings { return ending }
        return .asked("the group was dropped")
    }

    /// Stops the services in reverse order, giving all of them together `budget`: one that has
    /// not finished when its share is spent is left cancelled and the next is stopped. Each still
    /// gets at least `floor`, so a quick close (the store's) is not skipped because a service
    /// before it overran. Returns the names of those that did not finish in time.
    @discardableResult
    public func stop(within budget: Duration, floor: Duration = .milliseconds(200)) async -> [String] {
        let left = Self.countdown(clock, from: budget)
        var late: [String] = []
        for index in tasks.indices.reversed() {
            tasks[index].cancel()
            if await !finished(completions[index], within: max(left(), floor)) { late.append(names[index]) }
        }
        sink.finish()
        return late
    }

    /// What is left of `budget` on `clock`, each time it is asked.
    private static func countdown<C: Clock>(_ clock: C, from budget: Duration) -> @Sendable () -> Duration where C.Duration == Duration {
        let end = clock.now.advanced(by: budget)
        return { clock.now.duration(to: end) }
    }

    /// Whether the service finished within `time` on the group's clock.
    private func finished(_ completion: Completion, within time: Duration) async -> Bool {
        let clock = self.clock
        return await withTaskGroup(of: Bool.self) { race in
            race.addTask { await completion.wait() }
            race.addTask {
                try? await clock.sleep(for: time)
                return false
            }
            let first = await race.next() ?? false
            race.cancelAll()
            return first
        }
    }
}

/// Opened once; `wait()` returns true once it is, or false when the waiting task is cancelled first.
final class Completion: Sendable {
    private struct State {
        var isDone = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    }

    private let state = Mutex(State())

    func finish() {
        let waiters = state.withLock { state in
            state.isDone = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        waiters.forEach { $0.resume(returning: true) }
    }

    func wait() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                let answerNow: Bool? = state.withLock { state in
                    if state.isDone { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = waiter
                    return nil
                }
                if let answerNow { waiter.resume(returning: answerNow) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
        }
    }
}
