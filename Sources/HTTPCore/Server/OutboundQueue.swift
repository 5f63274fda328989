import CShims
#if canImport(Glibc)
import Glibc
#endif

/// Bytes waiting to be written to one socket, kept as the chunks they were made in: a response
/// body is written straight from its array (one `sendmsg` with the head), never copied into a buffer.
struct OutboundQueue {
    enum WriteResult {
        case done
        case wouldBlock
        case failed
    }

    private var chunks: [[UInt8]] = []
    /// Bytes of `chunks[0]` already written.
    private var offset = 0
    private(set) var byteCount = 0

    /// The most chunks one `sendmsg` takes.
    private static let maxVectors = 16

    var isEmpty: Bool { byteCount == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        byteCount += bytes.count
    }

    /// Writes until everything is out or the socket is full. Never raises SIGPIPE.
    mutating func write(to fd: Int32) -> WriteResult {
        while !chunks.isEmpty {
            let sent = chunks.count == 1 ? sendOnlyChunk(to: fd) : sendBatch(to: fd)
            if sent < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed
            }
            consume(sent)
        }
        return .done
    }

    /// The usual case (a shared answer, or a head and body encoded together): one `send` from
    /// the array itself, with no vector list to build.
    private func sendOnlyChunk(to fd: Int32) -> Int {
        chunks[0].withUnsafeBytes { bytes in
            send(fd, bytes.baseAddress! + offset, bytes.count - offset, CSHIMS_MSG_NOSIGNAL)
        }
    }

    /// Up to `maxVectors` chunks in one `sendmsg`.
    private func sendBatch(to fd: Int32) -> Int {
        let batch = chunks.prefix(Self.maxVectors)
        var vectors: [iovec] = []
        vectors.reserveCapacity(batch.count)
        return Self.withVectors(batch, firstOffset: offset, &vectors) { vectors in
            var message = msghdr()
            return vectors.withUnsafeMutableBufferPointer { buffer in
                message.msg_iov = buffer.baseAddress
                message.msg_iovlen = buffer.count
                return sendmsg(fd, &message, CSHIMS_MSG_NOSIGNAL)
            }
        }
    }

    private mutating func consume(_ count: Int) {
        var remaining = count
        byteCount -= count
        while remaining > 0, let first = chunks.first {
            let left = first.count - offset
            if remaining >= left {
                remaining -= left
                chunks.removeFirst()
                offset = 0
            } else {
                offset += remaining
                remaining = 0
            }
        }
    }

    /// Pins each chunk's storage while `body` runs with one iovec per chunk.
    private static func withVectors<R>(_ chunks: ArraySlice<[UInt8]>, firstOffset: Int, _ vectors: inout [iovec],
                                       _ body: (inout [iovec]) -> R) -> R {
        guard let first = chunks.first else { return body(&vectors) }
        return first.withUnsafeBytes { bytes in
            vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + firstOffset),
                                 iov_len: bytes.count - firstOffset))
            return withVectors(chunks.dropFirst(), firstOffset: 0, &vectors, body)
        }
    }
}
