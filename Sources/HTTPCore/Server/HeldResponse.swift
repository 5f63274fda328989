import Synchronization

/// A request being answered, as its connection and the task answering it both see it: whether
/// the task now waits on a ``HeldResponse`` (a long-poll), and whether the client stopped sending
/// meanwhile. Set for each request's task as a task-local.
final class RequestInFlight: Sendable {
    @TaskLocal static var current: RequestInFlight?

    private struct State {
        var waitingOnHeld = false
        var clientFinished = false
    }

    private let state = Mutex(State())

    /// Marks the wait; false when the client had already stopped sending (then nobody will
    /// read what this wait would bring).
    func startWaitingOnHeld() -> Bool {
        state.withLock { state in
            state.waitingOnHeld = true
            return !state.clientFinished
        }
    }

    func stopWaitingOnHeld() {
        state.withLock { $0.waitingOnHeld = false }
    }

    /// The client stopped sending; returns whether the task waits on a held response now.
    func clientFinishedSending() -> Bool {
        state.withLock { state in
            state.clientFinished = true
            return state.waitingOnHeld
        }
    }
}

/// A response that someone else will supply later, from any task or actor.
///
/// Two ways to wait for it:
/// - a responder awaits ``value()``; if the client goes away first the server cancels that task,
///   `value()` returns nil, ``isAbandoned`` turns true and `onAbandoned` runs;
/// - or a responder returns ``HTTPResponse/held(_:)``: its task ends at once and the connection
///   itself waits, so a long-poll costs no suspended task. When the holder completes it on the
///   event loop's thread (an actor running on the loop), the answer is written right there.
///
/// Either way, a registry of held requests can drop abandoned ones at once or in its next sweep.
///
/// ```swift
/// let held = HeldResponse()
/// registry.park(held)                       // someone calls held.complete(with:) later
/// return .held(held)
/// ```
public final class HeldResponse: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<HTTPResponse?, Never>)
        /// A connection waits; the closure writes the answer on it.
        case attached(@Sendable (HTTPResponse) -> Void)
        case completed(HTTPResponse)
        case delivered
        case abandoned
    }

    private let state = Mutex<State>(.pending)
    private let onAbandoned: (@Sendable (HeldResponse) -> Void)?

    /// - Parameter onAbandoned: called with this response when its client goes away, so one
    ///   handler can serve every response a holder parks (no closure made per response).
    public init(onAbandoned: (@Sendable (HeldResponse) -> Void)? = nil) {
        self.onAbandoned = onAbandoned
    }

    /// True once the client is known to be gone: nobody will read a response.
    public var isAbandoned: Bool {
        state.withLock { if case .abandoned = $0 { true } else { false } }
    }

    /// Supplies the response. Returns false when it came too late (already completed or abandoned).
    @discardableResult
    public func complete(with response: HTTPResponse) -> Bool {
        enum Delivery {
            case none
            case resume(CheckedContinuation<HTTPResponse?, Never>)
            case write(@Sendable (HTTPResponse) -> Void)
        }
        let (accepted, delivery): (Bool, Delivery) = state.withLock { state in
            switch state {
            case .pending:
                state = .completed(response)
                return (true, .none)
            case .waiting(let continuation):
                state = .delivered
                return (true, .resume(continuation))
            case .attached(let writer):
                state = .delivered
                return (true, .write(writer))
            case .completed, .delivered, .abandoned:
                return (false, .none)
            }
        }
        switch delivery {
        case .none: break
        case .resume(let continuation): continuation.resume(returning: response)
        case .write(let writer): writer(response)
        }
        return accepted
    }

    /// Suspends until a response is supplied; nil when the task is cancelled (the client went away).
    public func value() async -> HTTPResponse? {
        // The connection must know its request now waits on someone else: a client that stops
        // sending then is gone for good, and this wait is what gets cancelled (see `RequestInFlight`).
        let request = RequestInFlight.current
        if request?.startWaitingOnHeld() == false {
            abandon()
            request?.stopWaitingOnHeld()
            return nil
        }
        defer { request?.stopWaitingOnHeld() }
        return await withTaskCancellationHandler {
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
                    case .waiting, .attached, .delivered, .abandoned:
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

    /// The server's side of ``HTTPResponse/held(_:)``: `writer` is called with the response
    /// (at once if it is already there). Returns false when it was abandoned or taken already.
    @discardableResult
    func attach(_ writer: @escaping @Sendable (HTTPResponse) -> Void) -> Bool {
        let (attached, ready): (Bool, HTTPResponse?) = state.withLock { state in
            switch state {
            case .pending:
                state = .attached(writer)
                return (true, nil)
            case .completed(let response):
                state = .delivered
                return (true, response)
            case .waiting, .attached, .delivered, .abandoned:
                return (false, nil)
            }
        }
        if let ready { writer(ready) }
        return attached
    }

    /// The client went away (task cancelled, or the waiting connection closed).
    func abandon() {
        let (continuation, becameAbandoned): (CheckedContinuation<HTTPResponse?, Never>?, Bool) = state.withLock { state in
            switch state {
            case .waiting(let continuation):
                state = .abandoned
                return (continuation, true)
            case .pending, .attached:
                state = .abandoned
                return (nil, true)
            case .completed, .delivered, .abandoned:
                return (nil, false)
            }
        }
        continuation?.resume(returning: nil)
        if becameAbandoned { onAbandoned?(self) }
    }
}
