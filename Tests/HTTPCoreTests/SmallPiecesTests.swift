import Synchronization
import Testing
@testable import HTTPCore

@Suite("Percent decoding")
struct PercentDecodingTests {
    @Test func decodesEscapesAndUTF8() {
        #expect(PercentDecoding.decode("/a%20b/%C3%A9") == "/a b/é")
        #expect(PercentDecoding.decode("a+b", plusAsSpace: true) == "a b")
        #expect(PercentDecoding.decode("a+b") == "a+b")
    }

    @Test func refusesBrokenEscapes() {
        #expect(PercentDecoding.decode("%") == nil)
        #expect(PercentDecoding.decode("%2") == nil)
        #expect(PercentDecoding.decode("%zz") == nil)
        #expect(PercentDecoding.decode("%FF") == nil, "not UTF-8")
    }
}

@Suite("Static path checks")
struct StaticPathTests {
    @Test(arguments: [
        ("/", "index.html"), ("/app.js", "app.js"), ("/sub/", "sub/index.html"), ("/a/b.css", "a/b.css"),
    ])
    func servesPlainPaths(_ path: String, _ expected: String) {
        #expect(StaticFiles.safeRelativePath(path) == expected)
    }

    @Test(arguments: ["/../etc/passwd", "/a/../../x", "/..", "/a\\b", "/a\u{0}b", "//etc/passwd", "/.git/config",
                      "/a//b", "/.hidden", "relative"])
    func refusesDangerousPaths(_ path: String) {
        #expect(StaticFiles.safeRelativePath(path) == nil)
    }

    @Test func etagMatchingIsWeak() {
        #expect(StaticFiles.matches("\"abc\"", etag: "\"abc\""))
        #expect(StaticFiles.matches("W/\"abc\"", etag: "\"abc\""))
        #expect(StaticFiles.matches("\"x\", \"abc\"", etag: "\"abc\""))
        #expect(StaticFiles.matches("*", etag: "\"abc\""))
        #expect(!StaticFiles.matches("\"abd\"", etag: "\"abc\""))
    }
}

@Suite("Router")
struct RouterTests {
    private func router() -> Router {
        var router = Router()
        router.add("GET", "/api/state") { _, _, _ in .text("state") }
        router.add("POST", "/api/errors/{id}/attempts") { _, parameters, _ in .text(parameters["id"] ?? "") }
        return router
    }

    @Test func matchesLiteralsAndParameters() {
        guard case .found(_, let parameters) = router().match(method: "POST", path: "/api/errors/e%2041/attempts") else {
            Issue.record("no match")
            return
        }
        #expect(parameters["id"] == "e 41")
    }

    @Test func headFollowsGet() {
        guard case .found = router().match(method: "HEAD", path: "/api/state") else {
            Issue.record("HEAD should match GET")
            return
        }
    }

    @Test func wrongMethodListsTheAllowedOnes() {
        guard case .methodNotAllowed(let allowed) = router().match(method: "DELETE", path: "/api/state") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "HEAD"])
    }

    @Test func unknownPathIsNotFound() {
        guard case .notFound = router().match(method: "GET", path: "/api/nothing") else {
            Issue.record("expected 404")
            return
        }
        guard case .notFound = router().match(method: "POST", path: "/api/errors//attempts") else {
            Issue.record("an empty parameter must not match")
            return
        }
    }
}

@Suite("Response encoding")
struct ResponseEncoderTests {
    @Test func framingHeadersAreTheServersOwn() {
        var encoder = ResponseEncoder()
        let response = HTTPResponse(status: .ok, headers: ["Content-Length": "999", "X-Evil": "a\r\nSet-Cookie: x"], body: Array("hi".utf8))
        let bytes = encoder.encode(response, omitBody: false, close: true).flatMap { $0 }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.contains("Content-Length: 2\r\n"))
        #expect(!text.contains("999"))
        #expect(text.contains("X-Evil: aSet-Cookie: x\r\n"), "CR and LF are stripped, so no header is injected")
        #expect(text.contains("Connection: close\r\n"))
        #expect(text.hasSuffix("\r\n\r\nhi"))
    }

    @Test func headAnswersKeepTheLengthButNoBody() {
        var encoder = ResponseEncoder()
        let bytes = encoder.encode(.text("hello"), omitBody: true, close: false).flatMap { $0 }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("Content-Length: 5\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
    }

    @Test func largeBodiesTravelAsTheirOwnChunk() {
        var encoder = ResponseEncoder()
        let body = [UInt8](repeating: 65, count: 10_240)
        let chunks = encoder.encode(HTTPResponse(body: body), omitBody: false, close: false)
        #expect(chunks.count == 2)
        #expect(chunks[1] == body)
    }

    @Test func httpDateFormat() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func httpDatesReadInTheirThreeFormsAndNothingElse() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == 784_111_777)
        #expect(HTTPDate.parse(HTTPDate.format(1_800_000_000)) == 1_800_000_000)
        for junk in ["", "120", "Sun, 06 Nov 1994 08:49:37 GMT and more", "yesterday", "Sun, 32 Nov 1994 08:49:37 GMT"] {
            #expect(HTTPDate.parse(junk) == nil, "\(junk)")
        }
    }
}

@Suite("Held response")
struct HeldResponseTests {
    @Test func completionReachesTheWaiter() async {
        let held = HeldResponse()
        async let value = held.value()
        #expect(held.complete(with: .text("later")))
        #expect(await value?.body == Array("later".utf8))
        #expect(!held.complete(with: .text("again")), "only the first completion counts")
    }

    @Test func completionBeforeWaitingIsKept() async {
        let held = HeldResponse()
        held.complete(with: .text("early"))
        #expect(await held.value()?.body == Array("early".utf8))
    }

    @Test func cancellationAbandonsAndTellsTheHolder() async {
        let (abandonedEvents, continuation) = AsyncStream<Void>.makeStream()
        let reported = Mutex<HeldResponse?>(nil)
        let held = HeldResponse(onAbandoned: { abandoned in
            reported.withLock { $0 = abandoned }
            continuation.yield()
        })
        let waiter = Task { await held.value() }
        waiter.cancel()
        #expect(await waiter.value == nil)
        var iterator = abandonedEvents.makeAsyncIterator()
        _ = await iterator.next()
        #expect(held.isAbandoned)
        #expect(reported.withLock { $0 } === held, "the holder is told which response was abandoned")
        #expect(!held.complete(with: .text("too late")))
    }
}

@Suite("Descriptor table")
struct DescriptorTableTests {
    @Test func keepsValuesByDescriptorAndCountsThem() {
        var table = DescriptorTable<String>()
        table[7] = "seven"
        table[3] = "three"
        #expect(table[7] == "seven" && table[3] == "three")
        #expect(table[5] == nil && table[1000] == nil, "a slot never set, and one past the end")
        #expect(table.count == 2)
        table[7] = "seven again"
        #expect(table.count == 2, "replacing is not adding")
        table[3] = nil
        table[999] = nil
        #expect(table.count == 1 && !table.isEmpty)
        #expect(table.values == ["seven again"])
        table[7] = nil
        #expect(table.isEmpty && table.values.isEmpty)
    }
}

@Suite("Request target")
struct RequestTargetTests {
    @Test func pathAndQueryFollowTheTargetWhenItChanges() {
        var request = HTTPRequest(method: "GET", target: "/api/poll?since=3")
        #expect(request.path == "/api/poll" && request.query == "since=3")
        request.target = "/sim/messages"
        #expect(request.path == "/sim/messages" && request.query == nil)
        request.target = "/a?"
        #expect(request.path == "/a" && request.query == "")
    }
}

@Suite("HTTP whitespace")
struct HTTPWhitespaceTests {
    @Test func trimsSpacesAndTabsAtBothEndsOnly() {
        #expect(" \ta b\t ".trimmingHTTPWhitespace() == "a b")
        #expect(("x: \tv\t"[...].dropFirst(2)).trimmingHTTPWhitespace() == "v", "a slice keeps its own bounds")
        #expect(" \t ".trimmingHTTPWhitespace() == "" && "".trimmingHTTPWhitespace() == "")
        #expect("a\u{0B}".trimmingHTTPWhitespace() == "a\u{0B}", "only space and tab are HTTP whitespace")
    }
}
