/// The rules of one client connection as a plain value: what it is doing, whether it closes once
/// its output is out, and when it gives up on the client. Events go in with the time they happen
/// at; what to do comes out. `Connection` owns the socket, the decoder, the output queue and the
/// tasks, and only performs what this decides, so the timeouts and the order of pipelined requests
/// are tested as values, in virtual time, with no socket.
///
/// One request at a time: a pipelined request waits in the decoder until the answer before it is
/// written (`canStartRequest`), which is what keeps answers in order.
struct ConnectionState: Equatable {
    enum Phase: Equatable {
        /// Waiting for a request or reading one; nothing is being answered.
        case reading
        /// The responder is working on a request.
        case answering
        /// The answer comes later through a `HeldResponse` (a parked poll); no task waits for it.
        case held
        /// A streamed body is being produced and written (`chunked`: in HTTP/1.1 chunks; else the
        /// body ends with the connection).
        case streaming(chunked: Bool)
        /// The last response is out and our side is shut; unread input is drained briefly, so the
        /// kernel does not reset the connection before the client has read that response.
        case lingering
        case closed
    }

    /// What happens once everything written so far has gone out (and a stream has ended).
    enum CloseIntent: Equatable {
        case stayOpen
        case close
        /// Close our sending side and drain the client's for a moment first (after an error the
        /// core answered itself, when the client may still be sending).
        case linger
    }

    /// When the connection gives up on the client, and how.
    enum Deadline: Equatable {
        case none
        /// A request's head (or the first request) must have arrived by then.
        case head(MonotonicTime)
        /// A connection with nothing to do is closed then.
        case idle(MonotonicTime)
        /// The client must have taken some of the output by then.
        case write(MonotonicTime)
        /// The drain after an error ends then.
        case linger(MonotonicTime)
    }

    struct Timeouts: Equatable {
        var head: Duration
        var idle: Duration
        var write: Duration
        var linger: Duration = .seconds(2)
    }

    /// What to do with the events epoll should report.
    struct Interest: Equatable {
        var read = false
        /// The client's end of stream (it half-closed or left).
        var peerHangUp = false
        var write = false
    }

    /// What a deadline that passed asks for.
    enum Expiry: Equatable {
        /// Answer 408 and close.
        case requestTimeout
        /// Close quietly: an idle connection.
        case close
        /// Close at once: a client that does not read, or a drain that went on too long.
        case abort
    }

    /// What to do after the output queue was written to the socket.
    enum AfterWrite: Equatable {
        case carryOn
        case close
        case startLingering
    }

    let timeouts: Timeouts
    private(set) var phase = Phase.reading
    private(set) var closeIntent = CloseIntent.stayOpen
    private(set) var deadline: Deadline
    /// The client has sent all it will (it half-closed, or it is gone): what it asked in full is
    /// still answered, then the connection closes. Only a held request is abandoned at once.
    private(set) var peerFinishedSending = false
    private(set) var requestsServed = 0
    /// The request being answered is a HEAD: its answer has no body.
    private(set) var answeringHead = false

    /// A client that connects means to send a request: the head timeout runs from `now`.
    init(timeouts: Timeouts, acceptedAt now: MonotonicTime) {
        self.timeouts = timeouts
        deadline = .head(now + timeouts.head)
    }

    /// Reading and answering requests (neither lingering nor closed).
    var isOpen: Bool { phase != .lingering && phase != .closed }

    /// A request is being answered, held or streamed.
    var hasRequestInFlight: Bool {
        switch phase {
        case .answering, .held, .streaming: true
        case .reading, .lingering, .closed: false
        }
    }

    var isStreaming: Bool {
        if case .streaming = phase { true } else { false }
    }

    /// Whether the next buffered request may start: none is being answered, the connection is not
    /// about to close, and not too much output is waiting for a slow reader.
    func canStartRequest(outputBelowHighWater: Bool) -> Bool {
        phase == .reading && closeIntent == .stayOpen && outputBelowHighWater
    }

    // MARK: Requests

    mutating func requestStarted(isHead: Bool) {
        phase = .answering
        answeringHead = isHead
    }

    /// The answer is held: `false` when the client has already finished sending, so nobody is
    /// left to hear it later (the holder is told so and the connection closes).
    mutating func answerHeld() -> Bool {
        guard !peerFinishedSending else { return false }
        phase = .held
        return true
    }

    /// The answer is queued for writing; `close` when the connection ends after it.
    mutating func answerQueued(close: Bool) {
        requestsServed += 1
        phase = .reading
        if close { intendToClose() }
    }

    /// A streamed answer's head is queued and its body follows.
    mutating func streamStarted(chunked: Bool, close: Bool) {
        requestsServed += 1
        phase = .streaming(chunked: chunked)
        if close { intendToClose() }
    }

    mutating func streamEnded() {
        phase = .reading
    }

    /// The core answers an error itself and closes after it; whatever was being answered is dropped.
    mutating func respondedAndClosing(linger: Bool) {
        phase = .reading
        closeIntent = linger ? .linger : .close
    }

    // MARK: The client

    /// End of stream from the client: `true` when the request in flight is to be abandoned at once
    /// (a held request, or one whose responder needs the client to go on sending).
    mutating func peerFinished(requestNeedsClient: Bool) -> Bool {
        peerFinishedSending = true
        return phase == .held || (phase == .answering && requestNeedsClient)
    }

    /// No further request is buffered: a client that has finished sending gets no more answers,
    /// so the connection closes once what is written has gone out (`true`).
    mutating func inputExhausted() -> Bool {
        guard peerFinishedSending else { return false }
        intendToClose()
        return true
    }

    // MARK: Writing and deadlines

    /// The socket took all the output.
    mutating func outputWritten() -> AfterWrite {
        guard !isStreaming else { return .carryOn }
        switch closeIntent {
        case .stayOpen: return .carryOn
        case .close: return .close
        case .linger: return .startLingering
        }
    }

    /// The socket would take no more for now; `progressed` when it took some of the output. The
    /// write timeout is for a client that reads nothing: any progress starts it again.
    mutating func outputBlocked(progressed: Bool, now: MonotonicTime) {
        if case .write = deadline, !progressed { return }
        deadline = .write(now + timeouts.write)
    }

    mutating func startLingering(now: MonotonicTime) {
        phase = .lingering
        deadline = .linger(now + timeouts.linger)
    }

    /// Sets the deadline for what the connection is doing now: writing, answering (no deadline:
    /// the responder decides), reading a request's head, or idle.
    mutating func updateDeadline(now: MonotonicTime, outputPending: Bool, partialRequest: Bool) {
        guard isOpen else { return }
        if outputPending {
            if case .write = deadline { return }
            deadline = .write(now + timeouts.write)
        } else if hasRequestInFlight {
            deadline = .none
        } else if partialRequest {
            if case .head = deadline { return }
            deadline = .head(now + timeouts.head)
        } else {
            if case .idle = deadline { return }
            // Before its first request a connection keeps the head timeout it got when it was accepted.
            if case .head = deadline, requestsServed == 0 { return }
            deadline = .idle(now + timeouts.idle)
        }
    }

    /// What a deadline that has passed by `now` asks for, if one has.
    func expiry(now: MonotonicTime) -> Expiry? {
        switch deadline {
        case .none: nil
        case .head(let time): time <= now ? .requestTimeout : nil
        case .idle(let time): time <= now ? .close : nil
        case .write(let time), .linger(let time): time <= now ? .abort : nil
        }
    }

    /// The events to hear of: the client's input while it may still send (not while too much of it
    /// is buffered behind the request being answered: back-pressure; its end of stream still
    /// tells if it leaves), and the socket's room for output while some is waiting.
    func interest(outputPending: Bool, inputBelowPipelineLimit: Bool) -> Interest {
        guard phase != .closed else { return Interest() }
        var interest = Interest()
        if !peerFinishedSending || phase == .lingering {
            interest.peerHangUp = true
            interest.read = phase == .lingering || inputBelowPipelineLimit
        }
        interest.write = outputPending
        return interest
    }

    // MARK: Closing

    /// The server is shutting down: `true` to close now (nothing to finish); otherwise the
    /// connection closes once the request in flight is answered and written.
    mutating func closeWhenIdle(outputPending: Bool) -> Bool {
        guard phase != .closed else { return false }
        intendToClose()
        switch phase {
        case .answering, .held, .streaming: return false
        case .reading, .lingering, .closed: return !outputPending
        }
    }

    /// Closes after the output, as it would anyway (a linger already asked for is kept).
    private mutating func intendToClose() {
        if closeIntent == .stayOpen { closeIntent = .close }
    }

    mutating func closed() {
        phase = .closed
        deadline = .none
    }
}
