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

    private func deliver(_ number: Int32) {
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            if state.received == nil { state.received = number }
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume(returning: number) }
    }
}
