import CShims
#if canImport(Glibc)
import Glibc
#endif

/// One client connection: reads requests, runs them one at a time through the responder, and
/// writes the answers in order (pipelined requests wait in the decoder). Lives on the loop thread.
///
/// What it does when is `ConnectionState`'s to decide; this class holds the socket, the decoder,
/// the output queue and the tasks, and performs the decisions.
final class Connection: EventLoopHandler {
    let fd: Int32
    let id: UInt64
    let peer: SocketAddress
    private unowned let server: HTTPServer
    private var decoder: HTTPRequestDecoder
    private var outbound = OutboundQueue()
    private var state: ConnectionState
    private var interest: UInt32 = 0
    /// The responder's task while `state.phase` is `.answering`.
    private var inFlight: Task<Void, Never>?
    /// What the task in flight is doing, as far as a client that stops sending is concerned.
    private var inFlightRequest: RequestInFlight?
    /// The request's answer will come through this while `state.phase` is `.held`.
    private var held: HeldResponse?
    /// The finishing step of the request being answered (`HTTPResponder.finishing(for:)`).
    private var finishing = ResponseFinishing.none
    /// The producer of a streamed body while `state.phase` is `.streaming` (``StreamedBody``), and
    /// its write that waits for the client to catch up.
    private var streaming: Task<Void, Never>?
    private var streamWaiter: CheckedContinuation<Void, any Error>?
    private var streamWaiterCounted = false

    /// Stop parsing ahead once this much output waits for a slow reader.
    private static let outboundHighWater = 256 * 1024
    /// A streamed body's producer waits while this much of it is not yet taken by the client.
    private static let streamHighWater = 256 * 1024

    init(fd: Int32, id: UInt64, peer: SocketAddress, server: HTTPServer) {
        self.fd = fd
        self.id = id
        self.peer = peer
        self.server = server
        self.decoder = HTTPRequestDecoder(limits: server.configuration.limits)
        let configuration = server.configuration
        state = ConnectionState(timeouts: .init(head: configuration.headTimeout, idle: configuration.idleTimeout, write: configuration.writeTimeout),
                                acceptedAt: configuration.clock())
    }

    var hasRequestInFlight: Bool { state.hasRequestInFlight }

    private var now: MonotonicTime { server.configuration.clock() }

    func start() throws {
        interest = CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP
        try server.loop.register(fd, events: interest, handler: self)
    }

    // MARK: Events

    func handleEvents(_ events: UInt32) {
        if events & CSHIMS_EPOLLERR != 0 {
            abort()
            return
        }
        if events & (CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP | CSHIMS_EPOLLHUP) != 0 {
            readAvailable()
        }
        if state.phase != .closed && events & CSHIMS_EPOLLOUT != 0 {
            flush()
        }
    }

    private func readAvailable() {
        var total = 0
        while state.phase != .closed {
            let (count, filled) = server.loop.withReadBuffer { buffer in
                // `recv`, not `read`: a socket needs none of the file layer `read` passes through (2 % of
                // the CPU per answer under 5,000 polls, perf), as nginx does.
                let count = Glibc.recv(fd, buffer.baseAddress, buffer.count, 0)
                if count > 0 && state.isOpen {
                    decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                }
                return (count, count == buffer.count)
            }
            if count > 0 {
                total += count
                // Be fair to other connections, and stop pulling bytes a slow request cannot use yet.
                if total >= 256 * 1024 || decoder.bufferedByteCount > pipelineLimit { break }
                // A short read drained the socket; epoll is level-triggered and reports anything
                // that arrives later (or the end of stream), so skip the read that would say EAGAIN.
                if !filled { break }
                continue
            }
            if count == 0 {
                guard state.isOpen else {
                    abort()
                    return
                }
                peerFinished()
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: break
            default:
                abort()
                return
            }
            break
        }
        if state.isOpen {
            processInput()
        }
    }

    /// End of stream from the client. A request it sent in full is answered (a client that shuts
    /// its sending side, as `printf ... | nc -N` does, still reads); a held request (a parked poll)
    /// is abandoned, so its holder learns the client is gone.
    private func peerFinished() {
        // Asked only while answering: the responder learns the client stopped sending.
        let needsClient = state.phase == .answering && inFlightRequest?.clientFinishedSending() == true
        if state.peerFinished(requestNeedsClient: needsClient) {
            abort()
            return
        }
        processInput()
    }

    private var pipelineLimit: Int {
        server.configuration.limits.maxHeadBytes + server.configuration.limits.maxBodyBytes
    }

    /// Starts the next buffered request if none is being answered.
    private func processInput() {
        while state.canStartRequest(outputBelowHighWater: outbound.byteCount < Self.outboundHighWater) {
            let event: HTTPRequestDecoder.Event?
            do {
                event = try decoder.next()
            } catch {
                server.log.debug("\(peer): \(error)")
                respondAndClose(server.configuration.errorResponse(error.status, error.detail), linger: true)
                return
            }
            guard let event else {
                if state.inputExhausted() {
                    flush()
                    return
                }
                break
            }
            switch event {
            case .continueExpected:
                outbound.append(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                flush()
            case .request(let request):
                dispatch(request)
            }
        }
        updateDeadline()
        updateInterest()
    }

    private func dispatch(_ request: HTTPRequest) {
        state.requestStarted(isHead: request.method == "HEAD")
        finishing = server.responder.finishing(for: request)
        let keepAlive = request.keepAlive
        let isHTTP10 = request.version == .http1_0
        let responder = server.responder
        let context = RequestContext(remoteAddress: peer, localAddress: server.localAddress, connectionID: id)
        if let immediate = responder.respondOnLoop(to: request, context: context) {
            answer(immediate, keepAlive: keepAlive, isHTTP10: isHTTP10)
            return
        }
        let server = self.server
        let fd = self.fd, id = self.id
        let requestInFlight = RequestInFlight()
        inFlightRequest = requestInFlight
        inFlight = Task(executorPreference: server.loop) {
            let response: HTTPResponse
            do {
                response = try await RequestInFlight.$current.withValue(requestInFlight) {
                    try await responder.respond(to: request, context: context)
                }
            } catch {
                // The path only: a query may carry a secret (the dashboard's ?token=).
                server.log.error("responder failed for \(request.method) \(request.path): \(error)")
                response = server.configuration.errorResponse(.internalServerError, "\(error)")
            }
            server.loop.execute {
                server.connection(fd: fd, id: id)?.finish(response, keepAlive: keepAlive, isHTTP10: isHTTP10)
            }
        }
    }

    /// Called on the loop thread when the responder has answered the request in flight.
    private func finish(_ response: HTTPResponse, keepAlive: Bool, isHTTP10: Bool) {
        guard state.phase == .answering, inFlight != nil else { return }
        inFlight = nil
        inFlightRequest = nil
        answer(response, keepAlive: keepAlive, isHTTP10: isHTTP10)
    }

    /// Writes the answer to the current request, or waits for it when it is held.
    private func answer(_ response: HTTPResponse, keepAlive: Bool, isHTTP10: Bool) {
        if case .held(let heldResponse) = response.disposition {
            guard state.answerHeld() else {
                // Nobody is left to hear it later: the holder learns so now.
                heldResponse.abandon()
                abort()
                return
            }
            held = heldResponse
            let server = self.server, fd = self.fd, id = self.id
            let attached = heldResponse.attach { answer in
                // Completed on the loop thread (a wake pass answering thousands of polls): written
                // right away, with no closure made per answer for `execute`.
                guard server.loop.inEventLoop else {
                    server.loop.execute {
                        server.connection(fd: fd, id: id)?.deliverHeld(answer, keepAlive: keepAlive, isHTTP10: isHTTP10)
                    }
                    return
                }
                server.connection(fd: fd, id: id)?.deliverHeld(answer, keepAlive: keepAlive, isHTTP10: isHTTP10)
            }
            if !attached {
                held = nil
                abort()
            }
            return
        }
        write(response, keepAlive: keepAlive, isHTTP10: isHTTP10)
    }

    /// The answer to a held request has come.
    private func deliverHeld(_ answer: HTTPResponse, keepAlive: Bool, isHTTP10: Bool) {
        guard state.phase == .held, held != nil else { return }
        held = nil
        var answer = answer
        if case .held = answer.disposition {
            answer = HTTPResponse(status: .internalServerError)  // a held answer cannot be held again
        }
        write(answer, keepAlive: keepAlive, isHTTP10: isHTTP10)
    }

    private func write(_ response: HTTPResponse, keepAlive: Bool, isHTTP10: Bool) {
        var response = response
        if response.encoded == nil { finishing.apply(to: &response) }
        finishing = .none
        let omitBody = state.answeringHead
        switch server.configuration.wireFaults?.takeCut(on: id) {
        case nil:
            break
        case .beforeAnswer:
            abort()
            return
        case .after(let bytes):
            let encoded = server.encoder.encode(response, omitBody: omitBody, close: true).flatMap { $0 }
            outbound.append(Array(encoded.prefix(max(0, bytes))))
            state.answerQueued(close: true)
            flush()
            return
        }
        switch response.disposition {
        case .normal, .held:
            break
        case .streamed(let body):
            startStreaming(response, body, keepAlive: keepAlive, isHTTP10: isHTTP10)
            return
        }
        let close = !keepAlive || server.isShuttingDown
        server.recordResponse(status: response.status.code)
        if let encoded = response.encoded, !close, !isHTTP10, !omitBody {
            outbound.append(encoded)  // shared bytes: nothing is encoded or copied per connection
        } else {
            for chunk in server.encoder.encode(response, omitBody: omitBody, close: close,
                                               http10KeepAlive: isHTTP10 && !close) {
                outbound.append(chunk)
            }
        }
        state.answerQueued(close: close)
        flush()
        processInput()
    }

    // MARK: Streamed bodies

    /// Writes the head, then runs the body's producer in a task; the next request waits until it ends.
    private func startStreaming(_ response: HTTPResponse, _ body: StreamedBody, keepAlive: Bool, isHTTP10: Bool) {
        // An HTTP/1.0 client has no chunked coding: the body ends with the connection.
        let close = !keepAlive || server.isShuttingDown || isHTTP10
        server.recordResponse(status: response.status.code)
        var head: [UInt8] = []
        let bodyFollows = server.encoder.encodeStreamedHead(response, chunked: !isHTTP10, close: close, into: &head) && !state.answeringHead
        outbound.append(head)
        guard bodyFollows else {
            state.answerQueued(close: close)
            flush()
            processInput()
            return
        }
        state.streamStarted(chunked: !isHTTP10, close: close)
        let writer = BodyWriter(server: server, fd: fd, connectionID: id)
        let server = self.server, fd = self.fd, id = self.id
        streaming = Task(executorPreference: server.loop) {
            var failure: (any Error)?
            do {
                try await body.produce(writer)
            } catch {
                failure = error
            }
            server.loop.execute { [failure] in
                server.connection(fd: fd, id: id)?.streamEnded(failure: failure)
            }
        }
        flush()
    }

    /// A piece of the streamed body from its producer (on the loop thread). The producer goes on
    /// when little of the body is left waiting for the client.
    func appendStreamed(_ bytes: [UInt8], resumeWhenReady waiter: CheckedContinuation<Void, any Error>) {
        guard case .streaming(let chunked) = state.phase, streaming != nil, streamWaiter == nil else {
            waiter.resume(throwing: BodyWriterClosed())
            return
        }
        if chunked {
            outbound.append(ResponseEncoder.chunkHeader(bytes.count))
            outbound.append(bytes)
            outbound.append(ResponseEncoder.chunkTrailer)
        } else {
            outbound.append(bytes)
        }
        streamWaiter = waiter
        flush()
        if streamWaiter != nil {
            server.streamWaiting(true)
            streamWaiterCounted = true
        }
    }

    private func resumeStreamIfReady() {
        guard streamWaiter != nil, outbound.byteCount < Self.streamHighWater else { return }
        releaseStreamWaiter()?.resume()
    }

    private func releaseStreamWaiter() -> CheckedContinuation<Void, any Error>? {
        if streamWaiterCounted {
            server.streamWaiting(false)
            streamWaiterCounted = false
        }
        defer { streamWaiter = nil }
        return streamWaiter
    }

    /// The producer returned (the body is complete) or threw (it is cut off: the client must not
    /// take a part for the whole).
    private func streamEnded(failure: (any Error)?) {
        guard case .streaming(let chunked) = state.phase, streaming != nil else { return }
        streaming = nil
        state.streamEnded()
        if let failure {
            if !(failure is BodyWriterClosed || failure is CancellationError) {
                server.log.error("\(peer): a streamed body failed: \(failure)")
            }
            abort()
            return
        }
        if chunked { outbound.append(ResponseEncoder.lastChunk) }
        flush()
        processInput()
    }

    /// Stops a streamed body's producer: its pending or next write throws.
    private func stopStreaming() {
        streaming?.cancel()
        streaming = nil
        releaseStreamWaiter()?.resume(throwing: BodyWriterClosed())
    }

    /// Answers with `response` and closes once it is written; used for errors the core answers itself.
    func respondAndClose(_ response: HTTPResponse, linger: Bool) {
        guard state.isOpen else { return }
        var response = response
        server.responder.finishing(for: nil).apply(to: &response)
        inFlight?.cancel()
        inFlight = nil
        held?.abandon()
        held = nil
        stopStreaming()
        server.recordResponse(status: response.status.code)
        for chunk in server.encoder.encode(response, omitBody: false, close: true) {
            outbound.append(chunk)
        }
        state.respondedAndClosing(linger: linger)
        flush()
    }

    // MARK: Writing

    private func flush() {
        let waiting = outbound.byteCount
        switch outbound.write(to: fd) {
        case .done:
            break
        case .wouldBlock:
            state.outputBlocked(progressed: outbound.byteCount != waiting, now: now)
            resumeStreamIfReady()
            updateInterest()
            return
        case .failed:
            abort()
            return
        }
        resumeStreamIfReady()
        switch state.outputWritten() {
        case .carryOn:
            updateDeadline()
            updateInterest()
        case .close:
            close()
        case .startLingering:
            state.startLingering(now: now)
            shutdown(fd, Int32(SHUT_WR))
            updateInterest()
        }
    }

    // MARK: Deadlines and interest

    private func updateDeadline() {
        state.updateDeadline(now: now, outputPending: !outbound.isEmpty, partialRequest: decoder.hasPartialRequest)
    }

    private func updateInterest() {
        guard state.phase != .closed else { return }
        let wanted = state.interest(outputPending: !outbound.isEmpty, inputBelowPipelineLimit: decoder.bufferedByteCount <= pipelineLimit)
        var events: UInt32 = 0
        if wanted.read { events |= CSHIMS_EPOLLIN }
        if wanted.peerHangUp { events |= CSHIMS_EPOLLRDHUP }
        if wanted.write { events |= CSHIMS_EPOLLOUT }
        if events != interest {
            interest = events
            server.loop.modify(fd, events: events)
        }
    }

    /// Called by the server's periodic sweep.
    func checkDeadline(now: MonotonicTime) {
        switch state.expiry(now: now) {
        case nil:
            return
        case .requestTimeout:
            server.log.debug("\(peer): request head timed out")
            respondAndClose(server.configuration.errorResponse(.requestTimeout, "the request did not arrive in time"),
                            linger: true)
        case .close:
            close()
        case .abort:
            abort()
        }
    }

    // MARK: Closing

    /// Closes gracefully during shutdown: now if idle, otherwise after the response in flight.
    func closeWhenIdle() {
        if state.closeWhenIdle(outputPending: !outbound.isEmpty) {
            close()
        }
    }

    /// Cancels the request in flight: its responder sees task cancellation, a holder sees abandonment.
    func cancelInFlight() {
        inFlight?.cancel()
        held?.abandon()
        if streaming != nil { abort() }  // a body half sent cannot be finished any other way
    }

    /// The client is gone or misbehaved: cancel any request in flight and close at once.
    func abort() {
        inFlight?.cancel()
        inFlight = nil
        held?.abandon()
        held = nil
        stopStreaming()
        close()
    }

    private func close() {
        guard state.phase != .closed else { return }
        state.closed()
        stopStreaming()
        server.configuration.wireFaults?.forget(id)
        server.loop.deregister(fd)
        Glibc.close(fd)
        server.connectionClosed(self)
    }
}
