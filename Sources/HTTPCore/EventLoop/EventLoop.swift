import CShims
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Something the loop tells about readiness of a file descriptor it watches. Called on the loop thread.
protocol EventLoopHandler: AnyObject {
    func handleEvents(_ events: UInt32)
}

/// One thread waiting in `epoll_wait`, running file-descriptor callbacks, timers and Swift tasks.
///
/// It is also a `TaskExecutor`: a task started with `Task(executorPreference: loop)` runs its
/// non-isolated code on the loop thread, so a responder that answers without suspending never
/// leaves the thread that read the request. And it is a `SerialExecutor`: an actor that names the
/// loop as its executor (the dashboard's event feed) runs there too, so a parked poll is woken
/// without a single thread switch.
///
/// Thread confinement: `handlers` and `timers` are touched only on the loop thread (checked with
/// `assertOnLoop()` in debug builds); other threads reach the loop through `execute(_:)`, which is
/// the only state shared across threads, guarded by a mutex. That is why the class can be
/// `@unchecked Sendable`.
public final class EventLoop: TaskExecutor, SerialExecutor, @unchecked Sendable {
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let queue = Mutex<[Work]>([])
    /// Set while a wake-up is written but not yet consumed, so bursts of `execute` write once.
    private let wakePending = Atomic<Bool>(false)
    private let loopThread = Atomic<UInt>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let finished = Mutex<[CheckedContinuation<Void, Never>]?>([])

    /// Keyed by descriptor; the generation travels in the epoll data so an event for a descriptor
    /// closed earlier in the same batch never reaches the connection that reused its number.
    private var handlers = DescriptorTable<(generation: UInt32, handler: EventLoopHandler)>()
    private var nextGeneration: UInt32 = 1
    /// How many rounds of queued work may run before the sockets are looked at again.
    static let passesBetweenPolls = 16
    private var timers = TimerHeap()
    /// One buffer for every socket read on the loop thread (the server's requests, the client's
    /// responses): bytes are copied out of it before the next read, so one is enough.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// Starts a loop on a new thread.
    public init(name: String = "event-loop") throws {
        epollFD = cshims_epoll_create()
        guard epollFD >= 0 else { throw SystemError.last("epoll_create1") }
        wakeFD = cshims_eventfd()
        guard wakeFD >= 0 else {
            close(epollFD)
            throw SystemError.last("eventfd")
        }
        _ = cshims_epoll_ctl(epollFD, CSHIMS_EPOLL_CTL_ADD, wakeFD, CSHIMS_EPOLLIN, UInt64(UInt32(bitPattern: wakeFD)))
        // Named from inside: Foundation's name on a Thread not yet started does not reach the
        // system's thread, and `top -H` or a profile would tell no loop apart.
        let thread = Thread { [self] in
            cshims_name_this_thread(name)
            run()
        }
        thread.name = name
        thread.start()
    }

    deinit {
        readBuffer.deallocate()
    }

    /// True when called on the loop's own thread.
    public var inEventLoop: Bool {
        loopThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "must run on the event loop thread", file: file, line: line)
    }

    /// Runs `work` on the loop thread: at once when already there, otherwise soon.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        if inEventLoop {
            work()
        } else {
            enqueue(.closure(work))
        }
    }

    /// Runs `work` on the loop thread and returns its result to the caller.
    public func submit<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            execute { continuation.resume(with: Result { try work() }) }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` and the runtime's isolation checks ask whether we are on the loop.
    public func checkIsolated() {
        precondition(inEventLoop, "not on the event loop thread")
    }

    private func enqueue(_ work: Work) {
        queue.withLock { $0.append(work) }
        if !inEventLoop, !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
        }
    }

    /// Stops the loop after the work already queued; returns once its thread has finished.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyDone = finished.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters!.append(continuation)
                return false
            }
            if alreadyDone {
                continuation.resume()
                return
            }
            execute { [self] in stopRequested.store(true, ordering: .releasing) }
        }
    }

    // MARK: Loop-thread API

    func register(_ fd: Int32, events: UInt32, handler: EventLoopHandler) throws {
        try bind(fd, events: events, handler: handler, operation: CSHIMS_EPOLL_CTL_ADD, "epoll_ctl(ADD)")
    }

    func modify(_ fd: Int32, events: UInt32) {
        assertOnLoop()
        guard let generation = handlers[fd]?.generation else { return }
        _ = cshims_epoll_ctl(epollFD, CSHIMS_EPOLL_CTL_MOD, fd, events, Self.token(fd, generation))
    }

    /// Hands a watched `fd` to another handler with other events, in one `epoll_ctl` (a kept-alive
    /// client connection going from idle to a request and back). An event already read for the
    /// old handler is not delivered to the new one.
    func rebind(_ fd: Int32, events: UInt32, handler: EventLoopHandler) throws {
        try bind(fd, events: events, handler: handler, operation: CSHIMS_EPOLL_CTL_MOD, "epoll_ctl(MOD)")
    }

    /// Watches `fd` for `handler` under a new generation, so no event read for an earlier owner
    /// of the descriptor reaches it.
    private func bind(_ fd: Int32, events: UInt32, handler: EventLoopHandler, operation: Int32, _ call: String) throws {
        assertOnLoop()
        let generation = nextGeneration
        nextGeneration &+= 1
        guard cshims_epoll_ctl(epollFD, operation, fd, events, Self.token(fd, generation)) == 0 else {
            throw SystemError.last(call)
        }
        handlers[fd] = (generation, handler)
    }

    /// Stops watching `fd`; the caller closes it.
    func deregister(_ fd: Int32) {
        assertOnLoop()
        _ = cshims_epoll_ctl(epollFD, CSHIMS_EPOLL_CTL_DEL, fd, 0, 0)
        handlers[fd] = nil
    }

    private static func token(_ fd: Int32, _ generation: UInt32) -> UInt64 {
        UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    /// Calls `action` on the loop thread once `delay` has passed, unless cancelled first.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> TimerHeap.ID {
        assertOnLoop()
        return timers.insert(deadline: MonotonicTime.now + delay, action: action)
    }

    /// Lends the loop's read buffer to `body`, which must be done with its bytes when it returns
    /// (and must not ask for the buffer again meanwhile).
    func withReadBuffer<T>(_ body: (UnsafeMutableRawBufferPointer) throws -> T) rethrows -> T {
        assertOnLoop()
        return try body(readBuffer)
    }

    func cancelTimer(_ id: TimerHeap.ID) {
        assertOnLoop()
        timers.cancel(id)
    }

    // MARK: The loop

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        let capacity: Int32 = 256
        var events = [UInt32](repeating: 0, count: Int(capacity))
        var data = [UInt64](repeating: 0, count: Int(capacity))
        let taskExecutor = asUnownedTaskExecutor()
        let serialExecutor = asUnownedSerialExecutor()
        var batch: [Work] = []

        while !stopRequested.load(ordering: .acquiring) {
            let hasQueuedWork = queue.withLock { !$0.isEmpty }
            let timeout: Int32 = hasQueuedWork ? 0 : timers.millisecondsUntilNext(now: MonotonicTime.now)
            let count = cshims_epoll_wait(epollFD, &events, &data, capacity, timeout)
            if count < 0 && errno != EINTR {
                fatalError("epoll_wait failed: \(String(cString: strerror(errno)))")
            }
            for index in 0..<Int(max(count, 0)) {
                let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: data[index]))
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    wakePending.store(false, ordering: .releasing)
                } else if let entry = handlers[fd], UInt64(entry.generation) == data[index] >> 32 {
                    entry.handler.handleEvents(events[index])
                }
            }
            for action in timers.takeExpired(now: MonotonicTime.now) {
                action()
            }
            // What is queued now, then what that queued, a bounded number of times: a message
            // on its way through several actors on this thread queues a job per hop, and asking
            // the kernel for events between each (an `epoll_wait` per hop) cost more than the hops.
            // The bound keeps work that queues more work from starving the sockets.
            for _ in 0..<Self.passesBetweenPolls {
                // The queue and `batch` trade arrays, so neither is copied or reallocated per pass.
                queue.withLock { swap(&$0, &batch) }
                if batch.isEmpty { break }
                for work in batch {
                    switch work {
                    case .job(let job): job.runSynchronously(isolatedTo: serialExecutor, taskExecutor: taskExecutor)
                    case .closure(let closure): closure()
                    }
                }
                batch.removeAll(keepingCapacity: true)
            }
        }
        close(wakeFD)
        close(epollFD)
        let waiters = finished.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters = nil }
            return waiters ?? []
        }
        waiters.forEach { $0.resume() }
    }
}
