import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT and SIGTERM into something a task can await, and makes SIGPIPE harmless.
public enum TerminationSignals {
    /// Ignores SIGPIPE: a write to a socket whose peer left returns EPIPE instead of killing us.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Suspends until the process receives SIGINT or SIGTERM; returns which one.
    public static func next() async -> Int32 {
        let watcher = SignalWatcher(signals: [SIGINT, SIGTERM])
        return await withCheckedContinuation { continuation in
            watcher.start(continuation)
        }
    }
}

/// The dispatch sources behind `TerminationSignals.next()`; they are only created, resumed and
/// cancelled under the lock, which is what makes the unchecked `Sendable` true.
private final class SignalWatcher: @unchecked Sendable {
    private let signals: [Int32]
    private let state = Mutex<(continuation: CheckedContinuation<Int32, Never>?, sources: [any DispatchSourceSignal])>((nil, []))

    init(signals: [Int32]) {
        self.signals = signals
    }

    func start(_ continuation: CheckedContinuation<Int32, Never>) {
        state.withLock { state in
            state.continuation = continuation
            for number in signals {
                // The default action would kill the process before the source sees the signal.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [self] in deliver(number) }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    private func deliver(_ number: Int32) {
        let continuation = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            defer {
                state.continuation = nil
                state.sources.forEach { $0.cancel() }
                state.sources = []
            }
            return state.continuation
        }
        continuation?.resume(returning: number)
    }
}
