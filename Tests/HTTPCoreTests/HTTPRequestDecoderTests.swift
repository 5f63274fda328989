import Testing
@testable import HTTPCore

@Suite("Request decoder")
struct HTTPRequestDecoderTests {
    private func decodeAll(_ text: String, limits: HTTPLimits = HTTPLimits()) throws -> [HTTPRequest] {
        var decoder = HTTPRequestDecoder(limits: limits)
        decoder.append(Array(text.utf8))
        var requests: [HTTPRequest] = []
        while let event = try decoder.next() {
            if case .request(let request) = event { requests.append(request) }
        }
        return requests
    }

    private func parseError(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HTTPParseError? {
        do {
            _ = try decodeAll(text, limits: limits)
            return nil
        } catch let error as HTTPParseError {
            return error
        } catch {
            return nil
        }
    }

    @Test func simpleGet() throws {
        let requests = try decodeAll("GET /index.html?x=1&y=a%20b HTTP/1.1\r\nHost: localhost:8080\r\nAccept: */*\r\n\r\n")
        let request = try #require(requests.first)
        #expect(requests.count == 1)
        #expect(request.method == "GET")
        #expect(request.path == "/index.html")
        #expect(request.queryValue("y") == "a b")
        #expect(request.headers["host"] == "localhost:8080")
        #expect(request.version == .http1_1)
        #expect(request.keepAlive)
        #expect(request.body.isEmpty)
    }

    @Test(arguments: [
        ("x=1&y=2", "y", "2"), ("y=1&y=2", "y", "1"), ("%79=a+b%21", "y", "a b!"), ("a+b=1", "a b", "1"),
        ("y", "y", ""), ("y=", "y", ""), ("&&y=3&", "y", "3"), ("yy=1&x=2", "y", nil), ("x=1", "y", nil), ("y=%zz", "y", nil),
    ] as [(String, String, String?)])
    func queryValues(_ query: String, _ name: String, _ expected: String?) throws {
        let request = try #require(try decodeAll("GET /p?\(query) HTTP/1.1\r\nHost: a\r\n\r\n").first)
        #expect(request.queryValue(name) == expected)
        // The one-pass walk finds the same first value (and the same nil for a bad encoding).
        var walked: String??
        request.forEachQueryParameter { key, value in
            guard key == name else { return true }
            walked = .some(value)
            return false
        }
        #expect((walked ?? nil) == expected)
    }

    @Test func queryWalkGivesEveryParameterInOrderUntilTold() throws {
        let request = try #require(try decodeAll("GET /p?a=1&b&%63=x+y&d=%zz&e=5 HTTP/1.1\r\nHost: a\r\n\r\n").first)
        var seen: [String] = []
        request.forEachQueryParameter { name, value in
            seen.append("\(name)=\(value ?? "<bad>")")
            return name != "d"
        }
        #expect(seen == ["a=1", "b=", "c=x y", "d=<bad>"])
        var none = 0
        try #require(try decodeAll("GET /p HTTP/1.1\r\nHost: a\r\n\r\n").first).forEachQueryParameter { _, _ in none += 1; return true }
        #expect(none == 0)
    }

    @Test func bodyWithContentLength() throws {
        let requests = try decodeAll("POST /api/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
        #expect(requests.first?.body == Array("hello".utf8))
    }

    @Test func pipelinedRequestsComeOutInOrder() throws {
        let text = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nokGET /3 HTTP/1.1\r\nHost: a\r\n\r\n"
        let requests = try decodeAll(text)
        #expect(requests.map(\.target) == ["/1", "/2", "/3"])
        #expect(requests[1].body == Array("ok".utf8))
    }

    @Test func bytesArrivingOneAtATime() throws {
        let text = Array("GET /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET /next HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        var decoder = HTTPRequestDecoder()
        var targets: [String] = []
        for byte in text {
            decoder.append([byte])
            while let event = try decoder.next() {
                if case .request(let request) = event { targets.append(request.target) }
            }
        }
        #expect(targets == ["/slow", "/next"])
        #expect(!decoder.hasPartialRequest)
    }

    @Test func leadingEmptyLineIsIgnored() throws {
        #expect(try decodeAll("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n").count == 1)
    }

    @Test func absoluteFormTargetKeepsItsAuthorityBesideTheHostField() throws {
        let request = try #require(try decodeAll("GET http://127.0.0.1:8080/api/state?x=1 HTTP/1.1\r\nHost: evil\r\n\r\n").first)
        #expect(request.target == "/api/state?x=1")
        #expect(request.absoluteFormAuthority == "127.0.0.1:8080")
        #expect(request.headers["Host"] == "evil", "both are there for the server to check")
        #expect(throws: HTTPParseError.self, "HTTP/1.1 needs Host in every form") {
            _ = try decodeAll("GET http://127.0.0.1:8080/api/state HTTP/1.1\r\n\r\n")
        }
    }

    @Test func http10DefaultsToClose() throws {
        let requests = try decodeAll("GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(requests.map(\.keepAlive) == [false, true])
        #expect(try decodeAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").first?.keepAlive == false)
    }

    @Test func expectContinueIsSignalledBeforeTheBody() throws {
        var decoder = HTTPRequestDecoder()
        decoder.append(Array("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        guard case .continueExpected = try decoder.next() else {
            Issue.record("expected 100-continue")
            return
        }
        #expect(try decoder.next() == nil)
        decoder.append(Array("hi".utf8))
        guard case .request(let request) = try decoder.next() else {
            Issue.record("expected the request")
            return
        }
        #expect(request.body == Array("hi".utf8))
    }

    @Test func headerValuesKeepInnerSpacesAndLoseOuterOnes() throws {
        let request = try #require(try decodeAll("GET / HTTP/1.1\r\nHost: a\r\nX-Thing: \t one  two \t\r\n\r\n").first)
        #expect(request.headers["x-thing"] == "one  two")
    }

    @Test func headAtTheLimitIsAccepted() throws {
        let base = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \r\n\r\n"
        let padding = String(repeating: "p", count: 16 * 1024 - base.utf8.count)
        let text = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \(padding)\r\n\r\n"
        #expect(text.utf8.count == 16 * 1024)
        #expect(try decodeAll(text).count == 1)
        #expect(parseError("GET / HTTP/1.1\r\nHost: a\r\nX-Pad: p\(padding)\r\n\r\n")?.status == .requestHeaderFieldsTooLarge)
    }

    /// Each case: a name, the bytes, and the status the client must get.
    static let malformedCorpus: [(String, String, Int)] = [
        ("blank request line", "   \r\nHost: a\r\n\r\n", 400),
        ("missing version", "GET /\r\nHost: a\r\n\r\n", 400),
        ("extra space in request line", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("four parts", "GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n", 400),
        ("lowercase version", "GET / http/1.1\r\nHost: a\r\n\r\n", 400),
        ("garbage version", "GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400),
        ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("HTTP/0.9 style", "GET /\r\n\r\n", 400),
        ("non-token method", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("method with NUL", "GE\u{0}T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("target not origin form", "GET index.html HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("control byte in target", "GET /a\u{1}b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("non-ASCII target", "GET /caf\u{e9} HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("header without colon", "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400),
        ("space before colon", "GET / HTTP/1.1\r\nHost: a\r\nX-A : b\r\n\r\n", 400),
        ("empty header name", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", 400),
        ("obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", 400),
        ("obs-fold with tab", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\tc\r\n\r\n", 400),
        ("NUL in header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{0}c\r\n\r\n", 400),
        ("control byte in header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{7}c\r\n\r\n", 400),
        ("DEL in header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{7f}c\r\n\r\n", 400),
        ("bare LF line ending", "GET / HTTP/1.1\nHost: a\r\n\r\n", 400),
        ("bare CR in header", "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400),
        ("missing Host in HTTP/1.1", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
        ("two Host fields", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("negative Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("signed Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello", 400),
        ("non-numeric Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: five\r\n\r\n", 400),
        ("empty Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400),
        ("list Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello", 400),
        ("huge Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400),
        ("duplicate Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400),
        ("conflicting Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
        ("Transfer-Encoding with Content-Length",
         "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("chunked body", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411),
        ("unknown transfer coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("body over the limit", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n", 413),
        ("unknown expectation", "POST / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx", 417),
        ("too many header fields",
         "GET / HTTP/1.1\r\nHost: a\r\n" + (0..<101).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431),
        ("oversized head without an end", "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "a", count: 17_000), 431),
    ]

    @Test(arguments: malformedCorpus)
    func malformedInputIsRefused(_ name: String, _ text: String, _ status: Int) {
        let error = parseError(text)
        #expect(error?.status.code == status, "\(name): got \(String(describing: error))")
    }

    @Test func decoderDoesNotRescanAHeadThatTricklesIn() throws {
        // A slow client sending a large head byte by byte must not cost quadratic time: the scan
        // position is kept between calls. Checked structurally: 16 KiB one byte at a time finishes.
        var decoder = HTTPRequestDecoder()
        let head = Array(("GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "a", count: 16_000) + "\r\n\r\n").utf8)
        var produced = 0
        for byte in head {
            decoder.append([byte])
            if case .request = try decoder.next() { produced += 1 }
        }
        #expect(produced == 1)
    }
}
