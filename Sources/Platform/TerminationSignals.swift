import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM as something a task can await.
///
/// Install it before announcing readiness: a signal that arrives after `install()` is kept until
/// someone awaits ``received()``, so a supervisor that signals right after the ready line is never missed.
public final class TerminationSignals: @unchecked Sendable {
    // The dispatch sources are created before `self` is shared and never touched again; the
    // mutable part is under the mutex. That is what the unchecked `Sendable` promises.
    private var sources: [any DispatchSourceSignal] = []
    private let state = Mutex<(received: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    /// Ignores SIGPIPE: a write to a socket whose peer left returns EPIPE instead of killing us.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts catching SIGINT and SIGTERM (their default action, ending the process, is replaced).
    public static func install() -> TerminationSignals {
        // A parent may have started us with these signals blocked (a blocked mask is inherited);
        // they would then stay pending for ever.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        let signals = TerminationSignals()
        for number in [SIGINT, SIGTERM] {
            // First ignore, then watch: libdispatch installs its own handler when the source is
            // registered, and an ignore set after that would silently replace it.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [signals] in signals.deliver(number) }
            // Registration is asynchronous; until it is done the signal would just be ignored.
            let registered = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            registered.wait()
            signals.sources.append(source)
        }
        return signals
    }

    private init() {}

    /// Suspends until SIGINT or SIGTERM has arrived (at once if one already did); returns which.
    public func received() async -> Int32 {
        await withCheckedContinuation { continuation in
            let already = state.withLock { state -> Int32? in
                if let received = state.received { return received }
                state.waiters.append(continuation)
                return nil
            }
            if let already { continuation.resume(returning: already) }
        }
    }

    /// The variable a supervisor sets to its own process id to have ``install(environment:)``
    /// also end the process with it (as ``endWithParent(_:)``): a test harness that crashes then
    /// leaves nothing running. The id, not a flag, because the parent may be gone before this
    /// process has looked.
    public static let endWithParentVariable = "LP_END_WITH_PARENT"

    /// Starts catching SIGINT and SIGTERM and, when `environment` names the parent in
    /// ``endWithParentVariable``, also takes that parent's end as a SIGTERM.
    public static func install(environment: [String: String]) -> TerminationSignals {
        let signals = install()
        if let parent = environment[endWithParentVariable].flatMap({ pid_t($0) }) { signals.endWithParent(parent) }
        return signals
    }

    /// Takes the end of `parent` as a SIGTERM: once this process is no longer its child (handed
    /// to init or a subreaper), it stops as if told to. Looked at twice a second: Linux says
    /// nothing when a parent ends, short of a death signal tied to the thread that forked.
    public func endWithParent(_ parent: pid_t) {
        guard getppid() == parent else { return deliver(SIGTERM) }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        timer.setEventHandler { [weak self] in
            guard getppid() != parent else { return }
            timer.cancel()
            self?.deliver(SIGTERM)
        }
        // The handler holds the timer, which keeps it alive until it cancels itself.
        timer.resume()
    }

    private func deliver(_ number: Int32) {
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            if state.received == nil { state.received = number }
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume(returning: number) }
    }
}
