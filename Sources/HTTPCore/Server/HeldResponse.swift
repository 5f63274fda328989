import Synchronization

/// A response that someone else will supply later, from any task or actor.
///
/// The responder awaits ``value()``; whoever holds the object calls ``complete(with:)``. If the
/// client goes away first, the server cancels the responder's task: ``value()`` then returns nil,
/// ``isAbandoned`` turns true and `onAbandoned` runs, so a registry of held requests can drop it at
/// once or in its next sweep.
///
/// ```swift
/// let held = HeldResponse()
/// registry.park(held)                       // someone calls held.complete(with:) later
/// return await held.value() ?? .text("gone")
/// ```
public final class HeldResponse: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<HTTPResponse?, Never>)
        case completed(HTTPResponse)
        case delivered
        case abandoned
    }

    private let state = Mutex<State>(.pending)
    private let onAbandoned: (@Sendable () -> Void)?

    public init(onAbandoned: (@Sendable () -> Void)? = nil) {
        self.onAbandoned = onAbandoned
    }

    /// True once the waiting task was cancelled: the client is gone and nobody will read a response.
    public var isAbandoned: Bool {
        state.withLock { if case .abandoned = $0 { true } else { false } }
    }

    /// Supplies the response. Returns false when it came too late (already completed or abandoned).
    @discardableResult
    public func complete(with response: HTTPResponse) -> Bool {
        let (accepted, continuation): (Bool, CheckedContinuation<HTTPResponse?, Never>?) = state.withLock { state in
            switch state {
            case .pending:
                state = .completed(response)
                return (true, nil)
            case .waiting(let continuation):
                state = .delivered
                return (true, continuation)
            case .completed, .delivered, .abandoned:
                return (false, nil)
            }
        }
        continuation?.resume(returning: response)
        return accepted
    }

    /// Suspends until a response is supplied; nil when the task is cancelled (the client went away).
    public func value() async -> HTTPResponse? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<HTTPResponse?, Never>) in
                let immediate: HTTPResponse?? = state.withLock { state in
                    switch state {
                    case .pending:
                        // A task cancelled before this point already ran `abandon()`.
                        state = .waiting(continuation)
                        return nil
                    case .completed(let response):
                        state = .delivered
                        return .some(response)
                    case .waiting, .delivered, .abandoned:
                        return .some(nil)
                    }
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                }
            }
        } onCancel: {
            abandon()
        }
    }

    private func abandon() {
        let (continuation, becameAbandoned): (CheckedContinuation<HTTPResponse?, Never>?, Bool) = state.withLock { state in
            switch state {
            case .waiting(let continuation):
                state = .abandoned
                return (continuation, true)
            case .pending:
                state = .abandoned
                return (nil, true)
            case .completed, .delivered, .abandoned:
                return (nil, false)
            }
        }
        continuation?.resume(returning: nil)
        if becameAbandoned { onAbandoned?() }
    }
}
