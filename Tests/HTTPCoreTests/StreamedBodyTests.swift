import Foundation
import HTTPCore
import Testing
import TestSupport

/// What the producers of these tests did, awaited instead of slept on.
private actor ProducerLog {
    private(set) var producedBytes = 0
    private(set) var runs = 0
    private(set) var ending: String?
    private var endWaiters: [CheckedContinuation<String, Never>] = []

    func started() { runs += 1 }
    func produced(_ count: Int) { producedBytes += count }

    func ended(_ how: String) {
        ending = how
        endWaiters.forEach { $0.resume(returning: how) }
        endWaiters = []
    }

    /// How the producer ended: "complete", or the error its write or itself threw.
    func end() async -> String {
        if let ending { return ending }
        return await withCheckedContinuation { endWaiters.append($0) }
    }
}

/// `/stream/N/SIZE`: N pieces of SIZE bytes, piece i filled with byte i % 251. `/fail`: two
/// pieces, then the producer throws. Anything else is a short fixed answer.
private struct StreamingResponder: HTTPResponder {
    let log: ProducerLog

    struct ProducerFailed: Error {}

    static func piece(_ index: Int, size: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(index % 251), count: size)
    }

    func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        let parts = request.path.split(separator: "/")
        let log = self.log
        if parts.first == "stream", parts.count == 3, let count = Int(parts[1]), let size = Int(parts[2]) {
            return .streamed(headers: ["Content-Type": "application/octet-stream"]) { writer in
                await log.started()
                do {
                    for index in 0..<count {
                        let piece = Self.piece(index, size: size)
                        try await writer.write(piece)
                        await log.produced(piece.count)
                    }
                    await log.ended("complete")
                } catch {
                    await log.ended("\(type(of: error))")
                    throw error
                }
            }
        }
        if parts.first == "fail" {
            return .streamed(headers: [:]) { writer in
                try await writer.write(Array("one\n".utf8))
                try await writer.write(Array("two\n".utf8))
                throw ProducerFailed()
            }
        }
        return .text("next")
    }
}

@Suite struct StreamedBodyTests {
    private let log = ProducerLog()

    private var responder: StreamingResponder { StreamingResponder(log: log) }

    private static func expected(count: Int, size: Int) -> [UInt8] {
        (0..<count).flatMap { StreamingResponder.piece($0, size: size) }
    }

    @Test func aStreamedBodyArrivesWholeInChunksAndTheConnectionGoesOnToTheNextRequest() async throws {
        try await withServer(responder: responder) { server in
            let port = server.localAddress.port
            let (streamed, next) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(rawGet("/stream/100/1000", host: "a") + rawGet("/after", host: "a"))
                return (try client.readResponse(), try client.readResponse())
            }
            #expect(streamed.status == 200)
            #expect(streamed.header("Transfer-Encoding") == "chunked")
            #expect(streamed.header("Content-Length") == nil)
            #expect(streamed.body == Self.expected(count: 100, size: 1000))
            #expect(next.text == "next", "the pipelined request waits for the stream's end, then is answered")
            #expect(await log.end() == "complete")
        }
    }

    @Test func anHTTP10ClientGetsTheBodyUntilTheConnectionCloses() async throws {
        try await withServer(responder: responder) { server in
            let port = server.localAddress.port
            let (head, body) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send("GET /stream/20/333 HTTP/1.0\r\nHost: a\r\n\r\n")
                return (try client.readResponse(bodyExpected: false), try client.readUntilClose())
            }
            #expect(head.header("Transfer-Encoding") == nil && head.header("Content-Length") == nil)
            #expect(head.header("Connection") == "close")
            #expect(body == Self.expected(count: 20, size: 333))
        }
    }

    @Test func aHeadRequestGetsTheHeadAndNoProducerRuns() async throws {
        try await withServer(responder: responder) { server in
            let port = server.localAddress.port
            let (head, next) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send("HEAD /stream/10/10 HTTP/1.1\r\nHost: a\r\n\r\n" + rawGet("/after", host: "a"))
                return (try client.readResponse(bodyExpected: false), try client.readResponse())
            }
            #expect(head.status == 200 && head.header("Transfer-Encoding") == "chunked")
            #expect(next.text == "next")
            #expect(await log.runs == 0)
        }
    }

    @Test func aProducerThatFailsCutsTheConnectionSoThePartIsNotTakenForTheWhole() async throws {
        try await withServer(responder: responder) { server in
            let port = server.localAddress.port
            let outcome = try await RawClient.run { () -> String in
                let client = try RawClient(port: port)
                try client.send(rawGet("/fail", host: "a"))
                do {
                    let response = try client.readResponse()
                    return "a whole body: \(response.text.debugDescription)"
                } catch {
                    return "\(error)"
                }
            }
            #expect(outcome == "\(RawClient.ClientError.closedByPeer)")
        }
    }

    /// 64 MB to a client that reads nothing: the producer is held back (the server counts it
    /// waiting) with no more made than the server's share plus what the kernel buffers hold,
    /// then the whole body arrives once the client reads.
    @Test func aClientThatDoesNotReadHoldsTheProducerBack() async throws {
        let pieces = 1024, size = 64 * 1024
        try await withServer(responder: responder) { server in
            let client = try RawClient(port: server.localAddress.port, timeoutSeconds: 30)
            try client.send(rawGet("/stream/\(pieces)/\(size)", host: "a"))
            // Without back-pressure the producer would simply finish, queueing it all in memory.
            while server.statistics.streamsWaitingForClients == 0, await log.ending == nil {
                try await Task.sleep(for: .milliseconds(5))
            }
            let produced = await log.producedBytes
            #expect(server.statistics.streamsWaitingForClients == 1)
            let kernelBuffers = Self.largestSocketBuffer("tcp_wmem") + Self.largestSocketBuffer("tcp_rmem")
            #expect(produced <= 256 * 1024 + size + kernelBuffers, "held back at \(produced) bytes")
            #expect(produced < pieces * size)
            let response = try await RawClient.run { try client.readResponse() }
            #expect(response.body.count == pieces * size)
            #expect(response.body == Self.expected(count: pieces, size: size))
            #expect(await log.end() == "complete")
            #expect(server.statistics.streamsWaitingForClients == 0)
        }
    }

    @Test func aClientThatLeavesMidwayStopsTheProducer() async throws {
        try await withServer(responder: responder) { server in
            let client = try RawClient(port: server.localAddress.port)
            try client.send(rawGet("/stream/100000/65536", host: "a"))
            _ = try await RawClient.run { try client.discard(upTo: 1) }
            client.disconnect()
            let ending = await log.end()
            #expect(ending == "BodyWriterClosed" || ending == "CancellationError")
            #expect(await log.producedBytes < 100_000 * 65536)
        }
    }

    /// The most the kernel lets one socket buffer (`/proc/sys/net/ipv4/tcp_wmem` or `tcp_rmem`).
    private static func largestSocketBuffer(_ name: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/\(name)", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } ?? 8 * 1024 * 1024
    }
}
