import Foundation
import HTTPCore
import Testing
import Upstream
@testable import ChatSimulator

@Suite("Chat simulator")
struct ChatSimulatorTests {
    private func request(_ method: String, _ target: String, token: String? = nil, body: String = "",
                         headers: HTTPHeaders = [:]) -> HTTPRequest {
        var headers = headers
        headers.add("Host", "sim")
        if let token { headers.add("Authorization", "Bearer \(token)") }
        return HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8))
    }

    /// The connection every request here comes on.
    static let connection: UInt64 = 1

    private func respond(_ simulator: ChatSimulator, _ request: HTTPRequest) async throws -> HTTPResponse {
        try await SimulatorResponder(simulator: simulator).respond(
            to: request, context: RequestContext(remoteAddress: SocketAddress(host: "127.0.0.1", port: 1),
                                                 localAddress: SocketAddress(host: "127.0.0.1", port: 2), connectionID: Self.connection))
    }

    private func session(_ simulator: ChatSimulator) async throws -> UpstreamSession {
        try JSONDecoder().decode(UpstreamSession.self, from: Data(try await respond(simulator, request("POST", "/v1/session")).body))
    }

    /// Lets the poll task run until the simulator holds it (bounded, so a bug fails instead of hanging).
    private func heldPoll(_ simulator: ChatSimulator) async -> Bool {
        for _ in 0..<100_000 {
            if await simulator.stats().heldPolls > 0 { return true }
            await Task.yield()
        }
        return false
    }

    @Test func messageJSONRoundTripsEveryCharacter() throws {
        let message = UpstreamMessage(id: 7, chatId: 3, sender: "A \"quoted\" \\ name", text: "line\nnext\ttab \u{1} é 👋 </script>",
                                      sentAt: "2026-11-29T12:00:00.000Z")
        let body = AnswerJSON.answer([(user: 1, fragments: [AnswerJSON.fragment(message)][...])])
        let decoded = try JSONDecoder().decode(MessagesAnswer.self, from: Data(body))
        #expect(decoded.messages["1"] == [message])
    }

    @Test func aHeldPollWakesOnPublishAndAnswersEmptyOnTimeout() async throws {
        let simulator = ChatSimulator(configuration: SimulatorConfiguration(maxHold: .milliseconds(50)))
        let token = try await session(simulator).token
        let empty = try await respond(simulator, request("GET", "/v1/messages?primaryAfter=0&linkedAfter=0&timeout=25", token: token))
        #expect(String(decoding: empty.body, as: UTF8.self) == #"{"messages":{}}"#)

        let poll = Task { try await respond(simulator, request("GET", "/v1/messages?primaryAfter=0&timeout=1", token: token)) }
        try #require(await heldPoll(simulator))
        await simulator.publish(account: "primary", count: 2)
        let answer = try JSONDecoder().decode(MessagesAnswer.self, from: Data(try await poll.value.body))
        #expect(answer.messages["1"]?.map(\.id) == [1, 2])
    }

    @Test func aNewerPollWithTheSameTokenEndsTheOlderWith409() async throws {
        let simulator = ChatSimulator()
        let token = try await session(simulator).token
        let older = Task { try await respond(simulator, request("GET", "/v1/messages?primaryAfter=0", token: token)) }
        try #require(await heldPoll(simulator))
        let newer = Task { try await respond(simulator, request("GET", "/v1/messages?primaryAfter=0", token: token)) }
        #expect(try await older.value.status.code == 409)
        await simulator.publish(account: "primary", count: 1)
        #expect(try await newer.value.status.code == 200)
    }

    @Test func expiringTheTokenAnswersHeldPollsAndTheNextCall401() async throws {
        let simulator = ChatSimulator()
        let token = try await session(simulator).token
        let poll = Task { try await respond(simulator, request("GET", "/v1/messages?primaryAfter=0", token: token)) }
        try #require(await heldPoll(simulator))
        await simulator.expireTokens()
        #expect(try await poll.value.status.code == 401)
        #expect(try await respond(simulator, request("GET", "/v1/last-message-info", token: token)).status.code == 401)
    }

    @Test func linkingChangesTheSessionAndDetachingDropsTheLinkedStream() async throws {
        let simulator = ChatSimulator()
        #expect(try await session(simulator).linkedUserId == 2)
        await simulator.setLinked(false)
        #expect(try await session(simulator).linkedUserId == nil)
        #expect(await simulator.publish(account: "linked", count: 1) == nil)
        await simulator.setLinked(true)
        #expect(try await session(simulator).linkedUserId == 3, "a newly attached account has a new id")
    }

    @Test func purchasesAreIdempotentAndDeclinesAreNotRemembered() async throws {
        let simulator = ChatSimulator(configuration: SimulatorConfiguration(storageQuotaBytes: 1000))
        let token = try await session(simulator).token
        func buy(_ key: String?) async throws -> HTTPResponse {
            try await respond(simulator, request("POST", "/v1/storage/purchase", token: token, body: #"{"bytes":500}"#,
                                                 headers: key.map { ["Idempotency-Key": $0] } ?? [:]))
        }
        #expect(try await buy(nil).status.code == 400)
        await simulator.setFaults(FaultSettings(mode: .decline))
        #expect(try await buy("k1").status.code == 402)
        await simulator.setFaults(FaultSettings(mode: .none))
        #expect(String(decoding: try await buy("k1").body, as: UTF8.self).contains("1500"), "a retry of a declined key charges")
        #expect(String(decoding: try await buy("k1").body, as: UTF8.self).contains("1500"), "a replay does not charge again")
        #expect(await simulator.stats().purchases == 1)
    }

    @Test func controlCallsAreCommandsAndABadBodyIsRefusedWithWhatItMustBe() {
        #expect(SimulatorCommand.parse(.messages, body: Array(#"{"account": "linked", "count": 2}"#.utf8))
                == .success(.publish(account: "linked", count: 2, text: nil)))
        #expect(SimulatorCommand.parse(.faults, body: Array(#"{"mode": "slow", "delayMs": 250}"#.utf8))
                == .success(.setFaults(FaultSettings(mode: .slow, rate: 1, delay: .milliseconds(250)))))
        guard case .failure(let refusal) = SimulatorCommand.parse(.quota, body: Array(#"{"bytes": -1}"#.utf8)) else {
            Issue.record("a negative quota was taken")
            return
        }
        #expect(refusal.status == .badRequest && refusal.reason.contains("n >= 0"))
        #expect(SimulatorAction.allCases.filter { $0.method == "GET" } == [.sent, .written, .stats])
    }

    @Test(arguments: [FaultMode.error500, .offline, .malformed, .drop])
    func faultsChangeTheAnswer(_ mode: FaultMode) async throws {
        let simulator = ChatSimulator()
        let token = try await session(simulator).token
        await simulator.publish(account: "primary", count: 3)
        await simulator.setFaults(FaultSettings(mode: mode))
        let response = try await respond(simulator, request("GET", "/v1/messages?primaryAfter=0", token: token))
        switch mode {
        case .error500: #expect(response.status.code == 500)
        case .offline: #expect(simulator.wireFaults.pendingCut(on: Self.connection) == .beforeAnswer)
        case .malformed: #expect((try? JSONDecoder().decode(MessagesAnswer.self, from: Data(response.body))) == nil)
        case .drop: if case .after = simulator.wireFaults.pendingCut(on: Self.connection) {} else { Issue.record("expected a cut") }
        default: break
        }
    }

    @Test func theSameSeedRepeatsTheSameRun() async throws {
        func run() async -> [Int64] {
            let simulator = ChatSimulator(configuration: SimulatorConfiguration(seed: 42))
            await simulator.publish(account: "primary", count: 20)
            await simulator.setFaults(FaultSettings(mode: .error500, rate: 0.5))
            var struck: [Int64] = []
            for index in 0..<20 where await simulator.drawFault(isPurchase: false) == .error500 {
                struck.append(Int64(index))
            }
            return struck
        }
        #expect(await run() == run())
    }

    @Test func controlCallsValidateTheirBodies() async throws {
        let simulator = ChatSimulator()
        #expect(try await respond(simulator, request("POST", "/sim/faults", body: #"{"mode":"explode"}"#)).status.code == 400)
        #expect(try await respond(simulator, request("POST", "/sim/messages", body: #"{"account":"primary","count":0}"#)).status.code == 400)
        #expect(try await respond(simulator, request("POST", "/sim/auto", body: #"{"perSecond":-1}"#)).status.code == 400)
        #expect(try await respond(simulator, request("POST", "/sim/messages", body: #"{"account":"primary","count":2}"#)).status.code == 200)
        let sent = try JSONDecoder().decode(SentBody.self, from: Data(try await respond(simulator, request("GET", "/sim/sent")).body))
        #expect(sent == SentBody(primary: [1, 2], linked: []))
    }

    @Test func aPublishReadsItsBodyAsJSONDoesAndAnswersWithTheNewIds() async throws {
        let simulator = ChatSimulator()
        let spaced = #"{ "text" : "caf\u00e9 \"quoted\"", "extra": [1, {"a": null}], "count": 2, "account": "primary" }"#
        let answer = try await respond(simulator, request("POST", "/sim/messages", body: spaced))
        #expect(answer.status == .ok)
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"published":[1,2]}"#)
        #expect(await simulator.stats().published == 2)
        #expect(PublishBody(json: Array(#"{"account":"linked","count":1,"text":null}"#.utf8)) == PublishBody(account: "linked", count: 1))
        #expect(PublishBody(json: Array(spaced.utf8))?.text == "café \"quoted\"")
        for refused in [#"{"account":"primary"}"#, #"{"count":1}"#, #"{"account":"primary","count":1.5}"#,
                        #"{"account":1,"count":1}"#, #"{"account":"primary","count":1} x"#, #"["primary",1]"#, ""] {
            #expect(PublishBody(json: Array(refused.utf8)) == nil, "\(refused)")
            #expect(try await respond(simulator, request("POST", "/sim/messages", body: refused)).status.code == 400)
        }
        #expect(try await respond(simulator, request("POST", "/sim/messages", body: #"{"account":"nobody","count":1}"#)).status.code == 409)
        #expect(PublishBody.answer([]) == Array(#"{"published":[]}"#.utf8))
    }

    @Test func statsTellTheFaultModeAndTheBackgroundRateSoAReloadedPanelCanShowThem() async throws {
        let simulator = ChatSimulator()
        _ = try await respond(simulator, request("POST", "/sim/faults", body: #"{"mode":"error500","rate":0.5}"#))
        _ = try await respond(simulator, request("POST", "/sim/auto", body: #"{"perSecond":2.5}"#))
        let stats = try JSONDecoder().decode(SimulatorStatistics.self, from: Data(try await respond(simulator, request("GET", "/sim/stats")).body))
        #expect(stats.faultMode == .error500)
        #expect(stats.faultRate == 0.5)
        #expect(stats.autoPerSecond == 2.5)
        await simulator.setAutoRate(0)
        #expect(await simulator.stats().autoPerSecond == 0)
    }

    @Test func aWorldFileKeepsAccountsMessagesQuotaAndPurchasesAcrossARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-world-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/store.simulator.sqlite"
        let before: (linked: Int64?, quota: Int64)
        do {
            let simulator = try ChatSimulator(configuration: SimulatorConfiguration(storageQuotaBytes: 1000), dataPath: path)
            await simulator.publish(account: "primary", count: 5, text: "kept")
            await simulator.publish(account: "linked", count: 2)
            await simulator.setLinked(false)
            await simulator.setLinked(true)  // a new linked user
            let token = try await session(simulator).token
            let bought = try await respond(simulator, request("POST", "/v1/storage/purchase", token: token, body: #"{"bytes": 500}"#,
                                                              headers: ["Idempotency-Key": "k1"]))
            #expect(bought.status == .ok)
            before = (await simulator.stats().linkedUserId, await simulator.stats().quotaBytes)
            await simulator.close()
        }
        #expect(before.quota == 1500)

        let restarted = try ChatSimulator(configuration: SimulatorConfiguration(storageQuotaBytes: 1000), dataPath: path)
        #expect(await restarted.sent().primary == [1, 2, 3, 4, 5])
        #expect(await restarted.sent().linked == [], "the new linked user has no messages yet")
        #expect(await restarted.stats().linkedUserId == before.linked)
        #expect(await restarted.stats().quotaBytes == 1500, "the purchase is remembered")
        #expect(await restarted.stats().purchases == 1)
        #expect(await restarted.publish(account: "primary", count: 1) == [6], "ids go on where they stopped")
        let token = try await session(restarted).token
        let replay = try await respond(restarted, request("POST", "/v1/storage/purchase", token: token, body: #"{"bytes": 500}"#,
                                                          headers: ["Idempotency-Key": "k1"]))
        #expect(String(decoding: replay.body, as: UTF8.self).contains("1500"), "the same key buys nothing twice, even after a restart")
        let info = try await respond(restarted, request("GET", "/v1/last-message-info", token: token))
        #expect(String(decoding: info.body, as: UTF8.self).contains(#""primaryLastId":6"#))
        let page = try await respond(restarted, request("GET", "/v1/messages?primaryAfter=0&timeout=0", token: token))
        #expect(String(decoding: page.body, as: UTF8.self).contains("kept"), "the messages themselves, not only their ids")
        await restarted.close()
    }

    /// The pause is computed when the rate is set, so a rate it cannot represent would trap here.
    @Test(arguments: ["1e-300", "0.0001", "4.9e-324", "100000"])
    func anyAcceptedAutoRateRunsWithoutOverflow(_ perSecond: String) async throws {
        let simulator = ChatSimulator()
        let answer = try await respond(simulator, request("POST", "/sim/auto", body: #"{"perSecond": \#(perSecond)}"#))
        #expect(answer.status == .ok)
        _ = try await respond(simulator, request("POST", "/sim/auto", body: #"{"perSecond": 0}"#))
    }
}
