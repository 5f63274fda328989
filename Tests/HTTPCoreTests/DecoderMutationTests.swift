import Testing
import TestSupport
@testable import HTTPCore

/// A seeded random mutator over good and malformed requests, for CI (the coverage-guided libFuzzer
/// run, `Tests/Fuzz/run.sh`, is the long version). Whatever the bytes, the decoder either yields
/// requests within the limits or an error with a 4xx/5xx status; it never traps.
@Suite("Decoders under mutation")
struct DecoderMutationTests {
    static let seeds: [[UInt8]] = [
        "GET /index.html?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n",
        "POST /api/x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
        "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET http://127.0.0.1:8080/api/state HTTP/1.1\r\nHost: evil\r\n\r\n",
    ].map { Array($0.utf8) } + HTTPRequestDecoderTests.malformedCorpus.map { Array($0.1.utf8) }

    /// One of `seeds` with one to four mutations: a byte replaced by, or one inserted from,
    /// `interesting`; a byte removed; or a run of it repeated.
    static func mutant(of seeds: [[UInt8]], using interesting: [UInt8], _ random: inout TestRandom) -> [UInt8] {
        var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
        for _ in 0...Int(random.next() % 4) {
            let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            switch random.next() % 4 {
            case 0 where !bytes.isEmpty: bytes[position] = interesting[Int(random.next() % UInt64(interesting.count))]
            case 1: bytes.insert(interesting[Int(random.next() % UInt64(interesting.count))], at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            default: bytes.insert(contentsOf: bytes[position...].prefix(Int(random.next() % 16)), at: position)
            }
        }
        return bytes
    }

    @Test func fiftyThousandMutantsNeverTrap() throws {
        var random = TestRandom(seed: 20261129)
        let interesting: [UInt8] = Array("\r\n :\t\0%/?=&HTTP/1.10Content-LengthTransfer-Encodingchunked".utf8) + [0x7F, 0x80, 0xFF]
        var requests = 0, errors = 0
        for _ in 0..<50_000 {
            let bytes = Self.mutant(of: Self.seeds, using: interesting, &random)
            let split = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            var decoder = HTTPRequestDecoder(limits: HTTPLimits(maxHeadBytes: 2048, maxBodyBytes: 4096, maxHeaderCount: 32))
            do {
                for piece in [Array(bytes[..<split]), Array(bytes[split...])] {
                    decoder.append(piece)
                    while let event = try decoder.next() {
                        if case .request(let request) = event {
                            requests += 1
                            #expect(request.body.count <= 4096)
                        }
                    }
                }
            } catch {
                errors += 1
                #expect((400...505).contains(error.status.code))
            }
        }
        #expect(requests > 1000 && errors > 1000, "the mutants cover both outcomes: \(requests) requests, \(errors) errors")
    }

    static let responseSeeds: [[UInt8]] = [
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"messages\":{}}",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n",
        "HTTP/1.0 200 OK\r\n\r\nuntil the end",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 29\r\n\r\n{\"errcode\":\"M_UNKNOWN_TOKEN\"}",
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
    ].map { Array($0.utf8) }

    /// The response decoder reads what servers we did not write send: whatever the bytes, it
    /// answers with a response within the limit or a failure, and never traps.
    @Test func fiftyThousandMutantAnswersNeverTrap() throws {
        var random = TestRandom(seed: 20261130)
        let interesting: [UInt8] = Array("\r\n :\t\0;fF7-+HTTP/1.10Content-LengthTransfer-Encodingchunked".utf8) + [0x7F, 0x80, 0xFF]
        var responses = 0, failures = 0
        for _ in 0..<50_000 {
            let bytes = Self.mutant(of: Self.responseSeeds, using: interesting, &random)
            let split = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            var decoder = HTTPResponseDecoder(maxBytes: 4096, expectsBody: random.next() % 8 != 0)
            do {
                var answered: HTTPClientResponse?
                for piece in [Array(bytes[..<split]), Array(bytes[split...])] where answered == nil {
                    answered = try piece.withUnsafeBytes { bytes throws(HTTPResponseDecoder.Failure) in try decoder.feed(bytes) }
                }
                let response = try answered ?? decoder.finish()
                responses += 1
                #expect((100...599).contains(response.status))
                #expect(response.body.count <= 4096)
            } catch {
                failures += 1
            }
        }
        #expect(responses > 1000 && failures > 1000, "the mutants cover both outcomes: \(responses) responses, \(failures) failures")
    }
}
