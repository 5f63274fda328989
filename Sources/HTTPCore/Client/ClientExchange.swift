import CShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One request and its response, driven by the event loop: connect (or take a kept-alive
/// connection to the same address) -> write -> read until the response is complete -> keep the
/// connection for the next request when the response allows it, else close it.
final class ClientExchange: EventLoopHandler, @unchecked Sendable {
    // Everything below `completion` is touched on the loop thread only; `completion` is handed
    // over under the lock, so the exchange finishes exactly once, whichever of `start` and `end`
    // comes first (a cancellation on the loop thread ends it inline, before `start`).
    private let loop: EventLoop
    private let address: ResolvedAddress
    private let timeout: Duration
    private let idleConnections: IdleConnections
    private let addressKey: String
    private let request: [UInt8]
    private let expectsBody: Bool
    /// Whether the request may go out twice: a kept connection the server closed just as the
    /// request went out looks like a request lost, and such a request is sent again on a new
    /// connection. Requests that may not be repeated never take a kept connection.
    private let mayRepeat: Bool
    /// On a kept connection, and nothing of the response read yet.
    private var reused = false
    private var receivedAny = false
    private enum Completion {
        case pending
        case waiting(CheckedContinuation<HTTPClientResponse, any Error>)
        case ended(Result<HTTPClientResponse, HTTPClientError>)
    }
    private let completion = Mutex(Completion.pending)
    private var outbound = OutboundQueue()
    private var decoder: HTTPResponseDecoder
    private let maxResponseBytes: Int
    private var fd: Int32 = -1
    private var connected = false
    private var timer: TimerHeap.ID?
    private var done = false

    init(loop: EventLoop, address: ResolvedAddress, addressKey: String, idleConnections: IdleConnections,
         request: [UInt8], expectsBody: Bool, mayRepeat: Bool, timeout: Duration, maxResponseBytes: Int = 64 * 1024 * 1024) {
        self.loop = loop
        self.address = address
        self.addressKey = addressKey
        self.idleConnections = idleConnections
        self.request = request
        self.expectsBody = expectsBody
        self.mayRepeat = mayRepeat
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.decoder = HTTPResponseDecoder(maxBytes: maxResponseBytes, expectsBody: expectsBody)
        outbound.append(request)
    }

    func start(_ continuation: CheckedContinuation<HTTPClientResponse, any Error>) {
        let alreadyEnded = completion.withLock { state -> Result<HTTPClientResponse, HTTPClientError>? in
            if case .ended(let result) = state { return result }
            state = .waiting(continuation)
            return nil
        }
        if let alreadyEnded {
            continuation.resume(with: alreadyEnded.mapError { $0 as any Error })
            return
        }
        loop.execute { [self] in begin(mayReuse: mayRepeat) }
    }

    func cancel() {
        loop.execute { [self] in end(.failure(HTTPClientError.cancelled)) }
    }

    /// `mayReuse`: whether a kept connection may carry it (never for the second try of a request
    /// lost on one, which goes on a connection of its own).
    private func begin(mayReuse: Bool) {
        guard !done else { return }
        if timer == nil {
            timer = loop.schedule(after: timeout) { [self] in
                timer = nil
                end(.failure(HTTPClientError.timedOut))
            }
        }
        if mayReuse, let kept = idleConnections.take(addressKey) {
            do {
                // A kept connection is open and its send buffer empty: the request goes out at
                // once, and the socket is watched for writing only if it would not all go (one
                // `epoll_ctl` per request, not three).
                try loop.rebind(kept, events: CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP, handler: self)
                fd = kept
                connected = true
                reused = true
                writeRequest()
                return
            } catch {
                loop.deregister(kept)
                close(kept)
            }
        }
        fd = cshims_socket_nonblocking(address.family, Int32(SOCK_STREAM.rawValue))
        guard fd >= 0 else { return end(.failure(HTTPClientError.connect(SystemError.last("socket").description))) }
        var storage = address.storage
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
        }
        if result != 0 && errno != EINPROGRESS {
            return end(.failure(HTTPClientError.connect(SystemError.last("connect").description)))
        }
        connected = result == 0
        do {
            try loop.register(fd, events: CSHIMS_EPOLLOUT | CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP, handler: self)
        } catch {
            return end(.failure(HTTPClientError.connect("\(error)")))
        }
    }

    func handleEvents(_ events: UInt32) {
        guard !done else { return }
        if !connected {
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error != 0 {
                return end(.failure(HTTPClientError.connect(SystemError(call: "connect", errno: error).description)))
            }
            guard events & (CSHIMS_EPOLLOUT | CSHIMS_EPOLLERR | CSHIMS_EPOLLHUP) != 0 else { return }
            connected = true
        }
        if !outbound.isEmpty {
            switch outbound.write(to: fd) {
            case .done: loop.modify(fd, events: CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP)
            case .wouldBlock: break
            case .failed:
                // The server may have answered and closed already (an early error response): read it.
                break
            }
        }
        if events & (CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP | CSHIMS_EPOLLHUP | CSHIMS_EPOLLERR) != 0 {
            read()
        }
    }

    /// The request on a kept connection, written before any event: what does not fit now waits
    /// for the socket to be writable; a failed write is a connection the server closed, which
    /// reading tells apart (its end of stream sends the request again on a new connection).
    private func writeRequest() {
        switch outbound.write(to: fd) {
        case .done: break
        case .wouldBlock: loop.modify(fd, events: CSHIMS_EPOLLOUT | CSHIMS_EPOLLIN | CSHIMS_EPOLLRDHUP)
        case .failed: read()
        }
    }

    private func read() {
        while !done {
            // The loop's one read buffer: a response read costs no 64 KB array made and zeroed.
            var outcome: Result<HTTPClientResponse?, HTTPResponseDecoder.Failure> = .success(nil)
            let count = loop.withReadBuffer { buffer in
                let count = Glibc.recv(fd, buffer.baseAddress, buffer.count, 0)
                if count > 0 {
                    outcome = Result { () throws(HTTPResponseDecoder.Failure) in
                        try decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    }
                }
                return count
            }
            if count > 0 {
                receivedAny = true
                switch outcome {
                case .success(let response?): return end(.success(response))
                case .success(nil): continue
                case .failure(let failure): return end(.failure(clientError(failure)))
                }
            }
            if count == 0 {
                do {
                    return end(.success(try decoder.finish()))
                } catch {
                    return end(.failure(clientError(error)))
                }
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            default: return end(.failure(HTTPClientError.connectionLost(SystemError.last("read").description)))
            }
        }
    }

    /// The kept connection was closed by the server before any of the response came: the request
    /// goes again, once, on a connection of its own (within the same deadline).
    private func sendAgainOnANewConnection() {
        loop.deregister(fd)
        close(fd)
        fd = -1
        reused = false
        connected = false
        outbound = OutboundQueue()
        outbound.append(request)
        decoder = HTTPResponseDecoder(maxBytes: maxResponseBytes, expectsBody: expectsBody)
        begin(mayReuse: false)
    }

    private static func isLostConnection(_ error: any Error) -> Bool {
        switch error as? HTTPClientError {
        case .connectionLost: true
        default: false
        }
    }

    private func clientError(_ failure: HTTPResponseDecoder.Failure) -> HTTPClientError {
        switch failure {
        case .truncated: .connectionLost("closed before the response was complete")
        case .tooLarge: .tooLarge(limit: maxResponseBytes)
        case .malformed(let detail): .malformedResponse(detail)
        }
    }

    private func end(_ result: Result<HTTPClientResponse, any Error>) {
        guard !done else { return }
        if case .failure(let error) = result, reused, !receivedAny, Self.isLostConnection(error) {
            return sendAgainOnANewConnection()
        }
        done = true
        if let timer { loop.cancelTimer(timer) }
        if fd >= 0 {
            if case .success = result, decoder.leavesConnectionOpen {
                idleConnections.keep(fd, for: addressKey)
            } else {
                loop.deregister(fd)
                close(fd)
            }
            fd = -1
        }
        let outcome = result.mapError { $0 as? HTTPClientError ?? .connectionLost("\($0)") }
        let continuation = completion.withLock { state -> CheckedContinuation<HTTPClientResponse, any Error>? in
            defer { state = .ended(outcome) }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(with: outcome.mapError { $0 as any Error })
    }
}
