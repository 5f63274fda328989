import Foundation

/// One HTTP/1.1 connection kept open for many requests, one at a time: what a client that sends
/// message after message does. Answers must carry `Content-Length` (both servers measured here do).
final class KeepAliveConnection {
    struct Answer {
        var status: Int
        var body: Data
    }

    private let fd: Int32
    private let port: Int
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        self.port = port
        fd = try connectLoopback(port: port)
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// Sends one request (`headers`: name and value pairs) and reads its whole answer.
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil) throws -> Answer {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)" } else { text += "\r\n" }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw BenchError("send to port \(port): \(String(cString: strerror(errno)))") }
            written += count
        }
        return try readAnswer()
    }

    private func readAnswer() throws -> Answer {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while true {
            if headEnd == nil, let found = firstIndex(of: separator) { headEnd = found }
            if let headEnd {
                let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
                let lines = head.split(separator: "\r\n")
                guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
                    throw BenchError("no status line from port \(port)")
                }
                let length = lines.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
                // 1xx, 204 and 304 carry no body and no Content-Length (RFC 9110).
                let bodiless = (100..<200).contains(status) || status == 204 || status == 304
                guard let length = length ?? (bodiless ? 0 : nil) else { throw BenchError("an answer from port \(port) without Content-Length") }
                let bodyStart = headEnd + separator.count
                if buffer.count >= bodyStart + length {
                    let body = Data(buffer[bodyStart..<(bodyStart + length)])
                    buffer.removeFirst(bodyStart + length)
                    return Answer(status: status, body: body)
                }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw BenchError("port \(port) closed the connection") }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    private func firstIndex(of pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for start in 0...(buffer.count - pattern.count) where buffer[start] == pattern[0] {
            if Array(buffer[start..<(start + pattern.count)]) == pattern { return start }
        }
        return nil
    }
}
