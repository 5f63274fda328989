import Foundation
import HTTPCore
import TestSupport
import Testing

@Suite("HTTP server over loopback")
struct HTTPServerTests {
    let parking = ParkingLot()

    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let (first, second) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(rawGet("/echo/1", host: "a"))
                let first = try client.readResponse()
                try client.send(rawGet("/echo/2", host: "a"))
                return (first, try client.readResponse())
            }
            #expect(first.text == "GET /echo/1 ")
            #expect(second.text == "GET /echo/2 ")
            #expect(first.header("X-Connection") == second.header("X-Connection"))
            #expect(first.header("Connection") == nil)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrderEvenWhenTheFirstIsHeld() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let client = try RawClient(port: port)
            try client.send(rawGet("/hold/first", host: "a") + rawGet("/echo/2", host: "a")
                + "POST /echo/3 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody")
            let held = await parking.held("/hold/first")
            #expect(!client.hasPendingBytes(), "nothing may overtake the held first request")
            held.complete(with: .text("first"))
            let texts = try await RawClient.run { try (0..<3).map { _ in try client.readResponse().text } }
            #expect(texts == ["first", "GET /echo/2 ", "POST /echo/3 body"])
        }
    }

    @Test func answersAreCountedByStatus() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(rawGet("/echo/1", host: "a") + rawGet("/echo/2", host: "a"))
                _ = (try client.readResponse(), try client.readResponse())
                let bad = try RawClient(port: port)
                try bad.send("GET /x HTTP/1.1\r\nHost : a\r\n\r\n")
                _ = (try bad.readResponse(), bad.waitForClose())
            }
            #expect(server.statistics.responsesByStatus == [200: 2, 400: 1])
        }
    }

    @Test func aHeldRequestIsCompletedLaterFromAnotherTask() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let client = try RawClient(port: port)
            try client.send(rawGet("/hold/poll", host: "a"))
            let held = await parking.held("/hold/poll")
            Task.detached { held.complete(with: .text("event 1")) }
            let response = try await RawClient.run { try client.readResponse() }
            #expect(response.status == 200)
            #expect(response.text == "event 1")
        }
    }

    @Test func everyAnswerTakesTheFinishingStepHeldAndCoreErrorsIncluded() async throws {
        try await withServer(responder: FinishingResponder(inner: TestResponder(parking: parking))) { server in
            let port = server.localAddress.port
            let client = try RawClient(port: port)
            try client.send(rawGet("/echo/1", host: "a") + rawGet("/hold/poll", host: "a") + rawGet("/park/poll", host: "a"))
            (await parking.held("/hold/poll")).complete(with: .text("event 1"))
            (await parking.held("/park/poll")).complete(with: .text("event 2"))
            let (plain, awaited, parked) = try await RawClient.run {
                (try client.readResponse(), try client.readResponse(), try client.readResponse())
            }
            #expect(plain.header("X-Finished") == "/echo/1")
            #expect(awaited.text == "event 1" && awaited.header("X-Finished") == "/hold/poll")
            #expect(parked.text == "event 2" && parked.header("X-Finished") == "/park/poll", "held by the connection")
            let (malformed, _) = try await RawClient.run {
                let bad = try RawClient(port: port)
                try bad.send("GET /x HTTP/1.1\r\nHost : a\r\n\r\n")
                return (try bad.readResponse(), bad.waitForClose())
            }
            #expect(malformed.status == 400 && malformed.header("X-Finished") == "core")
        }
    }

    @Test func theHolderLearnsWhenTheClientGoesAway() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let client = try RawClient(port: server.localAddress.port)
            try client.send(rawGet("/hold/gone", host: "a"))
            let held = await parking.held("/hold/gone")
            client.disconnect()
            await parking.waitUntilAbandoned("/hold/gone")
            #expect(held.isAbandoned)
            #expect(!held.complete(with: .text("too late")))
        }
    }

    @Test(arguments: ["/echo", "/slow", "/echo/one", "/slow/two"])
    func aClientThatHalfClosesStillGetsItsAnswer(_ path: String) async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            for round in 0..<5 {
                let (response, closed) = try await RawClient.run {
                    let client = try RawClient(port: port)
                    try client.send(rawGet(path, host: "a"))
                    client.finishSending()
                    return (try client.readResponse(), client.waitForClose())
                }
                #expect(response.status == 200, "round \(round)")
                #expect(closed, "then the server closes: nothing more can come")
            }
        }
    }

    @Test func pipelinedRequestsBeforeAHalfCloseAreAllAnswered() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let texts = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(rawGet("/slow/1", host: "a") + rawGet("/echo/2", host: "a") + rawGet("/slow/3", host: "a"))
                client.finishSending()
                return try (0..<3).map { _ in try client.readResponse().text }
            }
            #expect(texts == ["slow answer", "GET /echo/2 ", "slow answer"])
        }
    }

    @Test func aHeldRequestOfAHalfClosedClientIsAbandoned() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let client = try RawClient(port: server.localAddress.port)
            try client.send(rawGet("/hold/half", host: "a"))
            let held = await parking.held("/hold/half")
            client.finishSending()
            await parking.waitUntilAbandoned("/hold/half")
            #expect(held.isAbandoned, "only a held request may be given up when its client stops sending")
        }
    }

    @Test func headAnswersCarryNoBody() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let (head, next) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send("HEAD /echo HTTP/1.1\r\nHost: a\r\n\r\n" + rawGet("/echo/after", host: "a"))
                return (try client.readResponse(bodyExpected: false), try client.readResponse())
            }
            #expect(head.header("Content-Length") == "11", "the length of \"HEAD /echo \"")
            #expect(next.text == "GET /echo/after ", "the next response starts right after the head")
        }
    }

    @Test func expectContinueGetsAnInterimResponse() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let (interim, final) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
                let interim = try client.readResponse()
                try client.send("abc")
                return (interim, try client.readResponse())
            }
            #expect(interim.status == 100)
            #expect(final.text == "POST /echo abc")
        }
    }

    @Test func connectionCloseIsHonoured() async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let (response, closed) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(rawGet("/echo", host: "a", extraHeaders: "Connection: close\r\n"))
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.header("Connection") == "close")
            #expect(closed)
        }
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A : b\r\n\r\n", 400),
        ("GET / HTTP/1.1\nHost: a\n\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 411),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n", 413),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "x", count: 20_000) + "\r\n\r\n", 431),
        ("GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505),
    ])
    func malformedRequestsGetTheirStatusAndTheConnectionCloses(_ text: String, _ status: Int) async throws {
        try await withServer(responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let (response, closed) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(text)
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == status)
            #expect(response.header("Connection") == "close")
            #expect(closed)
        }
    }

    @Test func aHeadThatNeverFinishesGets408() async throws {
        let configuration = HTTPServerConfiguration(headTimeout: .milliseconds(300), timerResolution: .milliseconds(50))
        try await withServer(configuration, responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let (response, closed) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send("GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ")
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == 408)
            #expect(closed)
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosed() async throws {
        let configuration = HTTPServerConfiguration(idleTimeout: .milliseconds(300), timerResolution: .milliseconds(50))
        try await withServer(configuration, responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let (response, closed) = try await RawClient.run {
                let client = try RawClient(port: port)
                try client.send(rawGet("/echo", host: "a"))
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == 200)
            #expect(closed, "closed without a response once idle")
        }
    }

    @Test func connectionsBeyondTheLimitGet503() async throws {
        let configuration = HTTPServerConfiguration(maxConnections: 2)
        try await withServer(configuration, responder: TestResponder(parking: parking)) { server in
            let port = server.localAddress.port
            let first = try RawClient(port: port), second = try RawClient(port: port)
            try first.send(rawGet("/hold/a", host: "a"))
            try second.send(rawGet("/hold/b", host: "a"))
            _ = await parking.held("/hold/a")
            _ = await parking.held("/hold/b")
            let refused = try await RawClient.run {
                let third = try RawClient(port: port)
                return try third.readResponse()
            }
            #expect(refused.status == 503)
            #expect(server.statistics.connectionsRefused == 1)
        }
    }

    @Test func gracefulShutdownFinishesInFlightRequestsAndStopsAccepting() async throws {
        let loop = try EventLoop(name: "test-http")
        let server = try HTTPServer(configuration: HTTPServerConfiguration(port: 0), loop: loop)
        try await server.start(responder: TestResponder(parking: parking))
        let port = server.localAddress.port

        let idle = try RawClient(port: port)
        try idle.send(rawGet("/echo", host: "a"))
        _ = try await RawClient.run { try idle.readResponse() }
        let busy = try RawClient(port: port)
        try busy.send(rawGet("/hold/busy", host: "a"))
        let held = await parking.held("/hold/busy")

        let stopped = Task { await server.shutdown(gracePeriod: .seconds(30)) }
        #expect(try await RawClient.run { idle.waitForClose() }, "an idle connection is closed at once")
        held.complete(with: .text("finished"))
        let response = try await RawClient.run { try busy.readResponse() }
        #expect(response.text == "finished")
        #expect(response.header("Connection") == "close")
        await stopped.value
        #expect(throws: RawClient.ClientError.self) { try RawClient(port: port) }
        await loop.shutdown()
    }

    @Test func shutdownCancelsHeldRequestsAfterTheGracePeriod() async throws {
        let loop = try EventLoop(name: "test-http")
        let server = try HTTPServer(configuration: HTTPServerConfiguration(port: 0), loop: loop)
        try await server.start(responder: TestResponder(parking: parking))
        let client = try RawClient(port: server.localAddress.port)
        try client.send(rawGet("/hold/forever", host: "a"))
        _ = await parking.held("/hold/forever")
        await server.shutdown(gracePeriod: .milliseconds(50))
        let response = try await RawClient.run { try client.readResponse() }
        #expect(response.status == 503, "the holder saw cancellation and answered")
        await loop.shutdown()
    }
}
