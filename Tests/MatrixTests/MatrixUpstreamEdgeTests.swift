import Foundation
import HTTPCore
import Synchronization
import Testing
import Upstream
@testable import MatrixClient

/// The transport against answers a real homeserver does not give on purpose (the scenarios it
/// does give run against Synapse in `DashboardOnSynapseTests`): a sign-in answer cut short, a
/// gateway's 502, and what is kept between runs. A scripted server on a loopback port.
@Suite("Matrix transport: answers Synapse does not give on purpose")
struct MatrixUpstreamEdgeTests {
    /// Keeps credentials in memory, as the store would.
    final class MemoryKeeper: MatrixCredentialKeeper {
        let kept = Mutex<MatrixCredentials?>(nil)
        func load() async -> MatrixCredentials? { kept.withLock { $0 } }
        func save(_ credentials: MatrixCredentials) async { kept.withLock { $0 = credentials } }
    }

    /// A homeserver that answers each path with what the test scripted, and records the requests.
    final class ScriptedHomeserver: Sendable {
        let answers: Mutex<[String: (Int, String)]>
        let requests = Mutex<[(path: String, body: String)]>([])

        init(_ answers: [String: (Int, String)]) {
            self.answers = Mutex(answers)
        }

        var responder: ClosureResponder {
            ClosureResponder { [self] request, _ in
                requests.withLock { $0.append((String(request.path), String(decoding: request.body, as: UTF8.self))) }
                let (status, body) = answers.withLock { $0[String(request.path)] } ?? (404, #"{"errcode":"M_UNRECOGNIZED"}"#)
                return HTTPResponse(status: HTTPStatus(code: status), headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            }
        }
    }

    @discardableResult
    private func withHomeserver<T>(_ homeserver: ScriptedHomeserver, password: String? = "pw", keeper: MemoryKeeper = MemoryKeeper(),
                                   _ body: (MatrixUpstream) async throws -> T) async throws -> T {
        let loop = try EventLoop(name: "matrix-edge")
        let server = try HTTPServer(configuration: HTTPServerConfiguration(port: 0), loop: loop)
        try await server.start(responder: homeserver.responder)
        let upstream = MatrixUpstream(homeserver: URL(string: "http://127.0.0.1:\(server.localAddress.port)")!,
                                      signIn: .init(user: "@alice:x", password: password, accessToken: nil), keeper: keeper, loop: loop)
        defer { Task { await server.shutdown(gracePeriod: .milliseconds(50)); await loop.shutdown() } }
        return try await body(upstream)
    }

    @Test func aSignInAnswerCutShortNeverQuotesTheTokenItHeld() async throws {
        let homeserver = ScriptedHomeserver(["/_matrix/client/v3/login": (200, #"{"user_id": "@alice:x", "access_token": "syt_SECRET_TOKEN_1234", "device_id""#)])
        let error = try await withHomeserver(homeserver) { upstream in
            await #expect(throws: UpstreamError.self) { try await upstream.createSession() }
            do throws(UpstreamError) { _ = try await upstream.createSession(); return "" } catch { return error.description }
        }
        #expect(error.hasPrefix("bad response: POST /_matrix/client/v3/login"))
        #expect(!error.contains("syt_SECRET"), "the detail goes to logs and the page's Details: \(error)")
    }

    @Test func aGatewaysErrorIsAServerErrorAndAForeignAnswerIsABadResponse() async throws {
        let homeserver = ScriptedHomeserver([
            "/_matrix/client/v3/login": (200, #"{"user_id": "@alice:x", "access_token": "t1", "device_id": "D1"}"#),
            "/_matrix/client/v3/sync": (502, "<html>Bad Gateway</html>"),
        ])
        try await withHomeserver(homeserver) { upstream in
            let session = try await upstream.createSession()
            await #expect(throws: UpstreamError.serverError(status: 502)) {
                _ = try await upstream.messages(token: session.token, after: StreamCursors(primary: "s1", includesLinked: false, linked: nil), wait: .hold(seconds: 1))
            }
            homeserver.answers.withLock { $0["/_matrix/client/v3/sync"] = (200, "<html>Sign in to this Wi-Fi</html>") }
            do throws(UpstreamError) {
                _ = try await upstream.messages(token: session.token, after: StreamCursors(primary: "s1", includesLinked: false, linked: nil), wait: .hold(seconds: 1))
                Issue.record("a captive portal's page was taken for a sync")
            } catch {
                guard case .badResponse(let detail) = error else { return #expect(Bool(false), "\(error)") }
                #expect(detail.contains("Sign in to this Wi-Fi"), "a sync answer holds no secret: its start is quoted to explain")
            }
        }
    }

    @Test func aRefusedTokenSignsInAgainAsTheSameDeviceAndKeepsTheNewToken() async throws {
        let homeserver = ScriptedHomeserver([
            "/_matrix/client/v3/account/whoami": (401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token", "soft_logout": true}"#),
            "/_matrix/client/v3/login": (200, #"{"user_id": "@alice:x", "access_token": "t2", "device_id": "DEVICE1"}"#),
        ])
        let keeper = MemoryKeeper()
        await keeper.save(MatrixCredentials(accessToken: "t1", deviceID: "DEVICE1"))
        let session = try await withHomeserver(homeserver, keeper: keeper) { try await $0.createSession() }
        #expect(session.token == "t2")
        #expect(keeper.kept.withLock { $0 } == MatrixCredentials(accessToken: "t2", deviceID: "DEVICE1"))
        let login = homeserver.requests.withLock { $0.first { $0.path.hasSuffix("/login") } }
        let body = try #require(login.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any] })
        #expect(body["device_id"] as? String == "DEVICE1", "signed in again as the device it was")
        #expect(session.storageQuotaBytes == nil && session.linkedUserId == nil)
    }

    @Test func withoutAPasswordARefusedTokenIsARefusalAndTheDeviceIsKept() async throws {
        let homeserver = ScriptedHomeserver(["/_matrix/client/v3/account/whoami": (401, #"{"errcode": "M_UNKNOWN_TOKEN"}"#)])
        let keeper = MemoryKeeper()
        await keeper.save(MatrixCredentials(accessToken: "t1", deviceID: "DEVICE1"))
        try await withHomeserver(homeserver, password: nil, keeper: keeper) { upstream in
            await #expect(throws: UpstreamError.unauthorized) { try await upstream.createSession() }
        }
        #expect(keeper.kept.withLock { $0 } == MatrixCredentials(accessToken: nil, deviceID: "DEVICE1"))
        #expect(homeserver.requests.withLock { $0.allSatisfy { !$0.path.hasSuffix("/login") } }, "no sign-in without a password")
    }
}
