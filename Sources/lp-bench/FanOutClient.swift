import CShims
import Foundation
import JSONText

/// The fan-out client: N keep-alive connections with one long poll parked on each, one message
/// published, and each connection's time from the publish to its whole answer read; then every
/// poll armed again, round after round.
///
/// One thread on epoll, with nothing of Foundation on the path of an answer: the answer's head is
/// scanned for the few headers needed, its body is parsed whole with the project's own
/// `JSONReader` (the same work for either server), and the round's token is looked for in it. Its
/// own CPU time per answer is measured, so a report can show that the client costs less per
/// answer than the servers it measures.
struct FanOutClient {
    enum Peer {
        /// The dashboard: `GET /api/poll?since=<seq>&timeout=30&visible=1`, the message published
        /// through the built-in simulator (`POST /api/simulator/messages`), so a round is the whole
        /// pipeline: simulator, engine, SQLite, feed, every poll.
        case dashboard(port: Int, token: String?)
        /// nginx + Nchan: `GET /sub?id=<channel>`, armed again with `If-Modified-Since` and
        /// `If-None-Match` from the last answer, the message published with `POST /pub?id=<channel>`.
        case nchan(port: Int, channel: String)

        var port: Int {
            switch self {
            case .dashboard(let port, _), .nchan(let port, _): port
            }
        }
    }

    struct Result {
        var p50: Double
        var p99: Double
        /// This client's CPU time per answer read (warm-up rounds included), and the part of it
        /// spent in the kernel (on loopback, a send also runs the receiving side's TCP input).
        var clientMicrosPerAnswer: Double
        var clientKernelMicrosPerAnswer: Double
        /// The server's CPU time per answer, over the same stretch.
        var serverMicrosPerAnswer: Double
    }

    let peer: Peer
    let subscribers: Int
    let rounds: Int
    var warmupRounds = 1
    /// How long the polls are given to park after the last is on the wire, before the server's
    /// own count of them is asked.
    var settleMilliseconds = 100
    /// The server's processes, whose CPU time is read before and after.
    let serverProcesses: () -> [Int32]

    private struct Subscriber {
        var fd: Int32
        var input: [UInt8] = []
        /// Where the search for the end of the head goes on from.
        var scanned = 0
        var cursor: Int64 = 0
        /// Nchan's `Last-Modified` and `Etag` of the last answer, as sent back with the next poll.
        var lastModified: [UInt8] = []
        var etag: [UInt8] = []
        /// Whether a poll is on the wire now.
        var armed = false
        /// When the round's message was read in full (ns, monotonic), 0 before.
        var deliveredAt: UInt64 = 0
    }

    /// What the loop works on: the connections, their epoll set, the answers read so far, and
    /// the buffers `epoll_wait` and `recv` fill, made once for the whole run.
    private struct Loop {
        var connections: [Subscriber]
        let poller: Int32
        var answers = 0
        var events = [UInt32](repeating: 0, count: 256)
        var data = [UInt64](repeating: 0, count: 256)
        var chunk = [UInt8](repeating: 0, count: 16_384)
        /// The poll request as it goes out, its fixed parts made once: nothing is allocated to arm a poll.
        let pollHead: [UInt8]
        let pollTail: [UInt8]
        var request: [UInt8] = []
    }

    /// An answer's head: what re-arming needs.
    private struct Head {
        var status: Int
        var contentLength: Int
        var lastModified: ArraySlice<UInt8>?
        var etag: ArraySlice<UInt8>?
    }

    func run() throws -> Result {
        let poller = cshims_epoll_create()
        guard poller >= 0 else { throw BenchError("epoll_create: \(String(cString: strerror(errno)))") }
        let (pollHead, pollTail) = pollRequestParts()
        var loop = Loop(connections: [], poller: poller, pollHead: pollHead, pollTail: pollTail)
        loop.request.reserveCapacity(pollHead.count + pollTail.count + 256)
        defer {
            close(poller)
            for connection in loop.connections { close(connection.fd) }
        }
        for index in 0..<subscribers {
            loop.connections.append(Subscriber(fd: try Self.connect(port: peer.port)))
            guard cshims_epoll_ctl(poller, CSHIMS_EPOLL_CTL_ADD, loop.connections[index].fd, CSHIMS_EPOLLIN, UInt64(index)) == 0 else {
                throw BenchError("epoll_ctl: \(String(cString: strerror(errno)))")
            }
        }
        let startCursor = try initialCursor()
        let csrf = try csrfToken()
        for index in loop.connections.indices { loop.connections[index].cursor = startCursor }

        var latencies: [Double] = []
        latencies.reserveCapacity(subscribers * rounds)
        let serverBefore = try serverTicks()
        let clientBefore = Self.threadCPU()
        let runID = UInt64.random(in: 0...UInt64.max)
        for round in 0..<(warmupRounds + rounds) {
            for index in loop.connections.indices where !loop.connections[index].armed { try arm(index, in: &loop) }
            try waitUntilParked(&loop)
            let token = "lp-fanout-\(String(runID, radix: 36))-\(round)"
            let publisher = try Self.connect(port: peer.port, blocking: true)
            defer { close(publisher) }
            let publishedAt = Self.now()
            try Self.write(publishRequest(token: token, csrf: csrf), to: publisher)
            try collect(token: Array(token.utf8), in: &loop)
            try Self.readWholeAnswer(publisher)
            if round >= warmupRounds {
                for connection in loop.connections { latencies.append(Double(connection.deliveredAt - publishedAt) / 1e6) }
            }
            for index in loop.connections.indices { loop.connections[index].deliveredAt = 0 }
        }
        let clientAfter = Self.threadCPU()
        let serverSeconds = Double(try serverTicks() - serverBefore) / ProcessStats.ticksPerSecond
        let answers = Double(max(loop.answers, 1))
        return Result(p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99),
                      clientMicrosPerAnswer: (clientAfter.user + clientAfter.kernel - clientBefore.user - clientBefore.kernel) / answers,
                      clientKernelMicrosPerAnswer: (clientAfter.kernel - clientBefore.kernel) / answers,
                      serverMicrosPerAnswer: serverSeconds * 1e6 / answers)
    }

    // MARK: The protocols

    /// The poll request's fixed parts: before the cursor and after it (the dashboard), or before
    /// the conditional headers and after them (Nchan).
    private func pollRequestParts() -> (head: [UInt8], tail: [UInt8]) {
        switch peer {
        case .dashboard(let port, let token):
            (Array("GET /api/poll?since=".utf8),
             Array("&timeout=30&visible=1 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(Self.authorization(token))Accept: application/json\r\n\r\n".utf8))
        case .nchan(let port, let channel):
            (Array("GET /sub?id=\(channel) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: */*\r\n".utf8), Array("\r\n".utf8))
        }
    }

    private static let ifModifiedSince = Array("If-Modified-Since: ".utf8)
    private static let ifNoneMatch = Array("\r\nIf-None-Match: ".utf8)
    private static let lineEnd = Array("\r\n".utf8)

    /// Writes the poll request for `connection` into `request`.
    private func pollRequest(_ connection: Subscriber, into request: inout [UInt8], head: [UInt8], tail: [UInt8]) {
        request.removeAll(keepingCapacity: true)
        request += head
        switch peer {
        case .dashboard:
            Self.appendDecimal(connection.cursor, to: &request)
        case .nchan:
            if !connection.etag.isEmpty {
                request += Self.ifModifiedSince
                request += connection.lastModified
                request += Self.ifNoneMatch
                request += connection.etag
                request += Self.lineEnd
            }
        }
        request += tail
    }

    private func publishRequest(token: String, csrf: String) -> [UInt8] {
        let body: String, head: String
        switch peer {
        case .dashboard(let port, let bearer):
            body = #"{"account":"primary","count":1,"text":"\#(token)"}"#
            head = "POST /api/simulator/messages HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(Self.authorization(bearer))X-CSRF-Token: \(csrf)\r\n"
        case .nchan(let port, let channel):
            // A body the shape of the dashboard's answer, so both clients parse alike.
            body = #"{"epoch":"fanout","seq":1,"events":[{"seq":1,"type":"messages","data":{"account":"primary","messages":[{"id":1,"chatId":1,"sender":"bench","text":"\#(token)"}]}}]}"#
            head = "POST /pub?id=\(channel) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/json\r\n"
        }
        return Array((head + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8)
    }

    /// The dashboard's cursor now (a poll that answers at once); Nchan's subscribers start at the newest.
    private func initialCursor() throws -> Int64 {
        guard case .dashboard(let port, let token) = peer else { return 0 }
        let body = try httpGet(port: port, path: "/api/poll?since=0&timeout=0", headers: Self.authorization(token))
        var cursor: Int64 = 0
        var reader = JSONReader(Array(body))
        try reader.readObject { reader, key in
            if key == "seq" { cursor = try reader.readInt64() } else { try reader.skipValue() }
        }
        return cursor
    }

    /// The dashboard's per-launch token for state-changing requests.
    private func csrfToken() throws -> String {
        guard case .dashboard(let port, let token) = peer else { return "" }
        var csrf = ""
        var reader = JSONReader(Array(try httpGet(port: port, path: "/api/session", headers: Self.authorization(token))))
        try reader.readObject { reader, key in
            if key == "csrfToken" { csrf = try reader.readString() } else { try reader.skipValue() }
        }
        return csrf
    }

    /// What the server says is parked now.
    private func parkedOnTheServer() throws -> Int {
        switch peer {
        case .dashboard(let port, let token):
            let text = String(decoding: try httpGet(port: port, path: "/metrics", headers: Self.authorization(token)), as: UTF8.self)
            let line = text.split(separator: "\n").first { $0.hasPrefix("lp_feed_parked_polls ") } ?? ""
            return Int(Double(line.split(separator: " ").last ?? "") ?? 0)
        case .nchan(let port, let channel):
            // Exact with one worker, which is how this benchmark runs it.
            let body = try httpGet(port: port, path: "/pub?id=\(channel)", headers: "Accept: text/json\r\n")
            var count = 0
            var reader = JSONReader(Array(body))
            try? reader.readObject { reader, key in
                if key == "subscribers" { count = Int(try reader.readInt64()) } else { try reader.skipValue() }
            }
            return count
        }
    }

    // MARK: The loop

    private func arm(_ index: Int, in loop: inout Loop) throws {
        pollRequest(loop.connections[index], into: &loop.request, head: loop.pollHead, tail: loop.pollTail)
        try Self.write(loop.request, to: loop.connections[index].fd)
        loop.connections[index].armed = true
    }

    /// Lets the polls park (`settleMilliseconds`, then until the server counts them all),
    /// answering early answers (a backlog, a state change) by arming again.
    private func waitUntilParked(_ loop: inout Loop) throws {
        let settleEnd = Self.now() + UInt64(settleMilliseconds) * 1_000_000
        while Self.now() < settleEnd {
            _ = try pump(&loop, timeoutMilliseconds: 5, token: nil)
        }
        let deadline = Self.now() + 20_000_000_000
        while try parkedOnTheServer() < subscribers {
            guard Self.now() < deadline else { throw BenchError("the server counts fewer than \(subscribers) parked polls after 20 s") }
            _ = try pump(&loop, timeoutMilliseconds: 2, token: nil)
        }
    }

    /// Reads until every connection has had the answer carrying `token`.
    private func collect(token: [UInt8], in loop: inout Loop) throws {
        let deadline = Self.now() + 30_000_000_000
        var delivered = 0
        while delivered < subscribers {
            guard Self.now() < deadline else {
                throw BenchError("\(subscribers - delivered) of \(subscribers) polls had no answer with the message after 30 s")
            }
            delivered += try pump(&loop, timeoutMilliseconds: 100, token: token)
        }
    }

    /// One `epoll_wait` and the reads it calls for. An answer is handled as soon as it is whole;
    /// one without the round's message arms its poll again at once. How many had the message.
    private func pump(_ loop: inout Loop, timeoutMilliseconds: Int32, token: [UInt8]?) throws -> Int {
        let ready = cshims_epoll_wait(loop.poller, &loop.events, &loop.data, Int32(loop.events.count), timeoutMilliseconds)
        guard ready >= 0 else {
            if errno == EINTR { return 0 }
            throw BenchError("epoll_wait: \(String(cString: strerror(errno)))")
        }
        var delivered = 0
        for slot in 0..<Int(ready) {
            let index = Int(loop.data[slot])
            while true {
                let fd = loop.connections[index].fd
                let count = loop.chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    loop.connections[index].input.append(contentsOf: loop.chunk[0..<count])
                    // Less than asked for: nothing more is waiting (epoll says so again if more comes),
                    // so no second call only to hear EAGAIN.
                    if count < loop.chunk.count { break }
                    continue
                }
                if count == 0 { throw BenchError("the server closed poll connection \(index)") }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                if errno == EINTR { continue }
                throw BenchError("recv: \(String(cString: strerror(errno)))")
            }
            while let (head, body) = try Self.takeAnswer(&loop.connections[index]) {
                loop.answers += 1
                loop.connections[index].armed = false
                if try handle(head, body: body, of: &loop.connections[index], token: token) {
                    loop.connections[index].deliveredAt = Self.now()
                    delivered += 1
                } else {
                    try arm(index, in: &loop)
                }
            }
        }
        return delivered
    }

    /// Takes what re-arming needs from an answer; whether it carries the round's message.
    private func handle(_ head: Head, body: ArraySlice<UInt8>, of connection: inout Subscriber, token: [UInt8]?) throws -> Bool {
        switch peer {
        case .dashboard:
            guard head.status == 200 else { throw BenchError("a poll was answered \(head.status)") }
            var reader = JSONReader(Array(body))
            var cursor = connection.cursor
            try reader.readObject { reader, key in
                if key == "seq" { cursor = try reader.readInt64() } else { try reader.skipValue() }
            }
            connection.cursor = cursor
        case .nchan:
            if let lastModified = head.lastModified, let etag = head.etag {
                connection.lastModified.removeAll(keepingCapacity: true)
                connection.lastModified += lastModified
                connection.etag.removeAll(keepingCapacity: true)
                connection.etag += etag
            }
            guard head.status == 200 else {
                guard head.status == 304 || head.status == 408 else { throw BenchError("a subscriber was answered \(head.status)") }
                return false
            }
            var reader = JSONReader(Array(body))
            try reader.skipValue()
        }
        guard let token else { return false }
        return Self.contains(body, token)
    }

    /// The first whole answer in the connection's input, taken out of it.
    private static func takeAnswer(_ connection: inout Subscriber) throws -> (Head, ArraySlice<UInt8>)? {
        let count = connection.input.count
        guard count >= 4 else { return nil }
        var end = -1
        var index = max(connection.scanned, 3)
        connection.input.withUnsafeBufferPointer { input in
            while index < count {
                if input[index] == 10, input[index - 1] == 13, input[index - 2] == 10, input[index - 3] == 13 {
                    end = index + 1
                    return
                }
                index += 1
            }
        }
        guard end > 0 else {
            connection.scanned = count
            return nil
        }
        let head = try parseHead(connection.input[0..<end])
        guard count >= end + head.contentLength else {
            connection.scanned = end - 1
            return nil
        }
        let body = connection.input[end..<(end + head.contentLength)]
        if count == end + head.contentLength {
            connection.input.removeAll(keepingCapacity: true)
        } else {
            connection.input.removeFirst(end + head.contentLength)
        }
        connection.scanned = 0
        return (head, body)
    }

    private static let contentLength = Array("content-length".utf8)
    private static let lastModified = Array("last-modified".utf8)
    private static let etag = Array("etag".utf8)
    private static let transferEncoding = Array("transfer-encoding".utf8)

    /// The status and the few headers needed, read in place: names compared without allocating,
    /// the values kept as slices of the answer.
    private static func parseHead(_ bytes: ArraySlice<UInt8>) throws -> Head {
        guard bytes.count > 12 else { throw BenchError("not an HTTP answer") }
        let start = bytes.startIndex
        let digits = bytes[(start + 9)..<(start + 12)]
        guard digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { throw BenchError("not an HTTP answer") }
        var head = Head(status: digits.reduce(0) { $0 * 10 + Int($1 - 48) }, contentLength: 0)
        var lineStart = start
        var index = start
        while index < bytes.endIndex {
            if bytes[index] == 10 {
                try header(bytes[lineStart..<index], into: &head)
                lineStart = index + 1
            }
            index += 1
        }
        return head
    }

    private static func header(_ line: ArraySlice<UInt8>, into head: inout Head) throws {
        guard let colon = line.firstIndex(of: 58) else { return }
        func named(_ name: [UInt8]) -> Bool {
            colon - line.startIndex == name.count && zip(line[line.startIndex..<colon], name).allSatisfy { $0 | 0x20 == $1 }
        }
        var valueStart = colon + 1
        var valueEnd = line.endIndex
        while valueStart < valueEnd, line[valueStart] == 32 { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == 13 || line[valueEnd - 1] == 32 { valueEnd -= 1 }
        let value = line[valueStart..<valueEnd]
        if named(contentLength) {
            head.contentLength = value.reduce(0) { $0 * 10 + Int($1 &- 48) }
        } else if named(lastModified) {
            head.lastModified = value
        } else if named(etag) {
            head.etag = value
        } else if named(transferEncoding) {
            throw BenchError("a chunked answer: this client reads Content-Length answers only")
        }
    }

    // MARK: Small pieces

    private static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(45) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(48 + rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    private static func authorization(_ token: String?) -> String {
        token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
    }

    private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    private static func connect(port: Int, blocking: Bool = false) throws -> Int32 {
        let fd = try connectLoopback(port: port)
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        if !blocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return fd
    }

    /// Writes all of `bytes` (a request is small: a full socket buffer is waited out).
    private static func write(_ bytes: [UInt8], to fd: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, CSHIMS_MSG_NOSIGNAL) }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EAGAIN || errno == EINTR {
                usleep(100)
            } else {
                throw BenchError("send: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Reads a `Connection: close` answer to its end.
    private static func readWholeAnswer(_ fd: Int32) throws {
        var chunk = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { total += count; continue }
            if count < 0, errno == EINTR { continue }
            break
        }
        guard total > 0 else { throw BenchError("the publish had no answer") }
    }

    private func serverTicks() throws -> Int {
        try serverProcesses().reduce(0) { $0 + (try ProcessStats.read(pid: $1).cpuTicks) }
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// This thread's CPU time so far, in microseconds: in user space and in the kernel.
    private static func threadCPU() -> (user: Double, kernel: Double) {
        var usage = rusage()
        // RUSAGE_THREAD (1): Linux's, which Glibc only declares under _GNU_SOURCE, so not to Swift.
        getrusage(__rusage_who_t(1), &usage)
        func micros(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }
        return (micros(usage.ru_utime), micros(usage.ru_stime))
    }
}
