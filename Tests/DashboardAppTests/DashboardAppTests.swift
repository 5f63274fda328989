import Foundation
import Lifecycle
import ChatServerClient
import ChatSimulator
import Engine
import HTTPCore
import Store
import Testing
import Upstream
@testable import DashboardApp

/// A temporary `Public/` folder with a page, a script, a secret outside it and a symlink to that secret.
final class PublicFixture {
    let root: URL
    let publicPath: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-test-\(UUID().uuidString)")
        let publicURL = root.appendingPathComponent("Public")
        try FileManager.default.createDirectory(at: publicURL.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Data("<!doctype html><title>t</title>".utf8).write(to: publicURL.appendingPathComponent("index.html"))
        try Data("export const x = 1;".utf8).write(to: publicURL.appendingPathComponent("app.js"))
        try Data("body{}".utf8).write(to: publicURL.appendingPathComponent("sub/style.css"))
        try Data("secret".utf8).write(to: root.appendingPathComponent("secret.txt"))
        try FileManager.default.createSymbolicLink(atPath: publicURL.appendingPathComponent("link.txt").path,
                                                   withDestinationPath: root.appendingPathComponent("secret.txt").path)
        publicPath = publicURL.path
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }
}

@Suite("Dashboard app in memory")
struct DashboardAppTests {
    static let port = 8080
    static let loop = try! EventLoop(name: "app-test")
    let fixture: PublicFixture
    let store: MessageStore
    let engine: SyncEngine
    let services: DashboardServices
    let background: ServiceGroup
    let app: DashboardApp
    let context = RequestContext(
        remoteAddress: SocketAddress(host: "127.0.0.1", port: 50000),
        localAddress: SocketAddress(host: "127.0.0.1", port: port),
        connectionID: 1
    )

    init() async throws {
        fixture = try PublicFixture()
        store = try MessageStore(location: .memory)
        let secrets = LaunchSecrets()
        let store = self.store
        // Never activated: these tests look at the HTTP face, not at syncing.
        let upstream = ChatServerUpstream(baseURL: URL(string: "http://127.0.0.1:9/")!, loop: Self.loop)
        services = await DashboardServices.assemble(store: store, reader: nil, epoch: secrets.epoch, loop: Self.loop, upstream: UpstreamAccess(upstream),
                                                    simulator: ChatSimulator()) { emit in
            SyncEngine(store: store, upstream: upstream, emit: emit)
        }
        engine = services.engine
        background = ServiceGroup(services.background)
        app = DashboardApp(port: Self.port, staticFiles: try StaticFiles(root: fixture.publicPath), services: services, secrets: secrets)
    }

    /// A request as a client with the access token sends it (`authorized: false` leaves it out).
    private func send(_ method: String, _ target: String, headers: HTTPHeaders = [:], body: String = "",
                      host: String? = "127.0.0.1:8080", authorized: Bool = true) async throws -> HTTPResponse {
        var headers = headers
        if let host, headers["Host"] == nil { headers.add("Host", host) }
        if authorized, headers["Authorization"] == nil { headers.add("Authorization", "Bearer \(app.secrets.accessToken)") }
        return try await answer(HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8)))
    }

    /// What the HTTP core would write: the responder's answer (a held one once it comes), after
    /// the responder's finishing step.
    private func answer(_ request: HTTPRequest) async throws -> HTTPResponse {
        var response = try await app.respond(to: request, context: context)
        if case .held(let held) = response.disposition {
            response = try #require(await held.value())
        }
        if response.encoded == nil { app.finishing(for: request).apply(to: &response) }
        return response
    }

    private func post(_ target: String, token: String? = nil, contentType: String? = "application/json",
                      extra: HTTPHeaders = [:]) async throws -> HTTPResponse {
        var headers = extra
        if let contentType { headers.add("Content-Type", contentType) }
        if let token { headers.add("X-CSRF-Token", token) }
        return try await send("POST", target, headers: headers, body: "{}")
    }

    private func problem(_ response: HTTPResponse) throws -> Problem {
        #expect(response.headers["Content-Type"] == "application/problem+json")
        return try JSONDecoder().decode(Problem.self, from: Data(response.body))
    }

    // MARK: Host allow-list

    @Test(arguments: ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080"])
    func ownHostsAreServed(_ host: String) async throws {
        #expect(try await send("GET", "/healthz", host: host).status == .ok)
    }

    @Test(arguments: ["evil.example:8080", "127.0.0.1:9999", "localhost", "127.0.0.1", "attacker.localhost:8080", "",
                      "[::1]:8080"])
    func foreignHostsAreRefused(_ host: String) async throws {
        let response = try await send("GET", "/api/session", host: host)
        #expect(response.status == .forbidden)
        #expect(try problem(response).type == "/problems/host-not-allowed")
    }

    @Test(arguments: [
        ("127.0.0.1", ["127.0.0.1:8080", "localhost:8080"], ["[::1]:8080", "127.0.0.2:8080"]),
        ("127.0.0.2", ["127.0.0.2:8080", "localhost:8080"], ["127.0.0.1:8080", "[::1]:8080"]),
        ("::1", ["[::1]:8080", "localhost:8080"], ["127.0.0.1:8080"]),
        ("0.0.0.0", ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"], ["192.168.1.5:8080"]),
        ("192.168.1.5", ["192.168.1.5:8080"], ["127.0.0.1:8080", "localhost:8080"]),
    ])
    func theHostNamesFollowTheAddressListenedOn(_ bound: String, _ allowed: [String], _ refused: [String]) {
        let list = HostAllowList(port: 8080, bound: SocketAddress(host: bound, port: 8080))
        for host in allowed { #expect(list.allows(host), "\(bound) allows \(host)") }
        for host in refused { #expect(!list.allows(host), "\(bound) refuses \(host)") }
    }

    @Test func theAddressPrintedIsOneABrowserCanOpen() {
        #expect(HostAllowList.openableAddress(for: SocketAddress(host: "0.0.0.0", port: 80)) == "127.0.0.1:80")
        #expect(HostAllowList.openableAddress(for: SocketAddress(host: "::", port: 80)) == "[::1]:80")
        #expect(HostAllowList.openableAddress(for: SocketAddress(host: "127.0.0.2", port: 80)) == "127.0.0.2:80")
    }

    @Test func aRequestWithoutHostIsRefused() async throws {
        #expect(try await send("GET", "/", host: nil).status == .forbidden)
    }

    @Test func anAbsoluteFormTargetIsCheckedLikeEveryOtherForm() async throws {
        var foreignHost = HTTPRequest(method: "GET", target: "/api/session", headers: ["Host": "evil.example"])
        foreignHost.absoluteFormAuthority = "127.0.0.1:8080"
        foreignHost.headers.add("Authorization", "Bearer \(app.secrets.accessToken)")
        #expect(try await app.respond(to: foreignHost, context: context).status == .forbidden, "a foreign Host field")
        #expect(app.respondOnLoop(to: foreignHost, context: context) == nil)
        var foreignAuthority = foreignHost
        foreignAuthority.headers.set("Host", "127.0.0.1:8080")
        foreignAuthority.absoluteFormAuthority = "evil.example"
        #expect(try await app.respond(to: foreignAuthority, context: context).status == .forbidden, "a foreign authority")
        var own = foreignAuthority
        own.absoluteFormAuthority = "localhost:8080"
        #expect(try await app.respond(to: own, context: context).status == .ok)
    }

    // MARK: The access token

    @Test(arguments: ["/api/state", "/api/session", "/api/messages?account=primary", "/api/poll?since=0&timeout=0", "/metrics",
                      "/api/simulator/stats", "/api/nothing"])
    func readsNeedTheAccessToken(_ target: String) async throws {
        let missing = try await send("GET", target, authorized: false)
        #expect(missing.status == .unauthorized)
        #expect(missing.headers["WWW-Authenticate"] == #"Bearer realm="dashboard""#)
        #expect(try problem(missing).type == "/problems/access-token")
        let wrong = try await send("GET", target, headers: ["Authorization": "Bearer " + String(repeating: "0", count: 64)], authorized: false)
        #expect(wrong.status == .unauthorized)
        let cookie = try await send("GET", target, headers: ["Cookie": "other=1; lp_token_8080=\(app.secrets.accessToken)"], authorized: false)
        #expect(cookie.status != .unauthorized, "the cookie the landing sets is as good as the header")
    }

    @Test func theAuthorizationHeaderIsReadAsRFC6750SaysAndNothingElsePasses() async throws {
        let token = app.secrets.accessToken
        for accepted in ["Bearer \(token)", "bearer \(token)", "BEARER  \(token)\t", "Bearer \t\(token) "] {
            #expect(try await send("GET", "/api/session", headers: ["Authorization": accepted], authorized: false).status == .ok, "\(accepted)")
        }
        for refused in ["Basic \(token)", "Bearer\(token)", "Bearer", "Bearer ", "Bearers \(token)", "Bearer \(token)x",
                        "Bearer \(token.dropLast())", "\(token)"] {
            #expect(try await send("GET", "/api/session", headers: ["Authorization": refused], authorized: false).status == .unauthorized,
                    "\(refused)")
        }
    }

    @Test func thePollFastPathChecksTheTokenToo() async throws {
        let request = HTTPRequest(method: "GET", target: "/api/poll?since=0&timeout=0", headers: ["Host": "127.0.0.1:8080"])
        #expect(app.respondOnLoop(to: request, context: context) == nil, "left to the async path, which answers 401")
    }

    @Test(arguments: ["/", "/app.js", "/healthz"])
    func staticFilesAndHealthStayPublic(_ target: String) async throws {
        #expect(try await send("GET", target, authorized: false).status == .ok)
    }

    @Test func openingTheTokenAddressSetsTheCookieAndTakesTheTokenOutOfTheAddress() async throws {
        let landing = try await send("GET", "/?token=\(app.secrets.accessToken)", authorized: false)
        #expect(landing.status == .seeOther)
        #expect(landing.headers["Location"] == "/")
        #expect(landing.headers["Set-Cookie"] == "lp_token_8080=\(app.secrets.accessToken); HttpOnly; SameSite=Strict; Path=/")
        let wrong = try await send("GET", "/?token=guess", authorized: false)
        #expect(wrong.status == .seeOther)
        #expect(wrong.headers["Set-Cookie"] == nil, "a wrong token sets nothing")
        let onLoop = HTTPRequest(method: "GET", target: "/?token=\(app.secrets.accessToken)", headers: ["Host": "127.0.0.1:8080"])
        #expect(app.respondOnLoop(to: onLoop, context: context) == nil, "not answered as a plain static file")
    }

    @Test func withoutAuthReadsAreOpenButWritesStillNeedTheCSRFToken() async throws {
        let open = DashboardApp(port: Self.port, staticFiles: try StaticFiles(root: fixture.publicPath), services: services,
                                secrets: app.secrets, requireAccessToken: false)
        let read = HTTPRequest(method: "GET", target: "/api/session", headers: ["Host": "127.0.0.1:8080"])
        #expect(try await open.respond(to: read, context: context).status == .ok)
        let write = HTTPRequest(method: "POST", target: "/api/engine/stop", headers: ["Host": "127.0.0.1:8080", "Content-Type": "application/json"],
                                body: Array("{}".utf8))
        #expect(try await open.respond(to: write, context: context).status == .forbidden)
    }

    // MARK: State-changing requests

    @Test func postWithoutTokenIsRefused() async throws {
        let response = try await post("/api/engine/stop")
        #expect(response.status == .forbidden)
        #expect(try problem(response).type == "/problems/csrf-token")
    }

    @Test func postWithWrongTokenIsRefused() async throws {
        var wrong = Array(app.secrets.csrfToken)
        wrong[0] = wrong[0] == "a" ? "b" : "a"
        #expect(try await post("/api/engine/stop", token: String(wrong)).status == .forbidden)
    }

    @Test(arguments: [nil, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
    func postWithoutJSONIsRefused(_ contentType: String?) async throws {
        let response = try await post("/api/engine/stop", token: app.secrets.csrfToken, contentType: contentType)
        #expect(response.status == .unsupportedMediaType)
    }

    @Test func aPostWithoutABodyNeedsNoContentTypeButStillTheCSRFToken() async throws {
        let bare = try await send("POST", "/api/engine/stop", headers: ["X-CSRF-Token": app.secrets.csrfToken])
        #expect(bare.status == .accepted)
        #expect(try await send("POST", "/api/engine/stop").status == .forbidden, "no CSRF token")
        let ignored = try await send("POST", "/api/engine/start", headers: ["X-CSRF-Token": app.secrets.csrfToken, "Content-Type": "application/json"],
                                     body: #"{"anything": [1, 2]}"#)
        #expect(ignored.status == .accepted, "a call that takes no body ignores one that is sent")
    }

    @Test(arguments: [
        ["Origin": "http://evil.example"], ["Origin": "null"], ["Origin": "http://127.0.0.1:9999"],
        ["Sec-Fetch-Site": "cross-site"], ["Sec-Fetch-Site": "same-site"],
    ] as [HTTPHeaders])
    func crossOriginPostsAreRefusedEvenWithTheToken(_ headers: HTTPHeaders) async throws {
        let response = try await post("/api/engine/stop", token: app.secrets.csrfToken, extra: headers)
        #expect(response.status == .forbidden)
        #expect(try problem(response).type == "/problems/cross-origin")
    }

    @Test func aSameOriginPostWithTheTokenPassesTheGuard() async throws {
        let response = try await post("/api/no-such-route", token: app.secrets.csrfToken,
                                      contentType: "application/json; charset=utf-8",
                                      extra: ["Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"])
        // The guard let it through; no such route exists yet, so routing answers.
        #expect(response.status == .notFound)
    }

    @Test func preflightsAreRefusedWithoutCORSHeaders() async throws {
        let response = try await send("OPTIONS", "/api/session",
                                      headers: ["Origin": "http://evil.example", "Access-Control-Request-Method": "POST"])
        #expect(response.status == .methodNotAllowed)
        let corsHeaders = response.headers.filter { $0.name.lowercased().hasPrefix("access-control-") }
        #expect(corsHeaders.isEmpty)
    }

    // MARK: API basics

    @Test func sessionHasAStrongTokenAndAnEpoch() async throws {
        let response = try await send("GET", "/api/session")
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["Cache-Control"] == "no-store")
        let session = try JSONDecoder().decode(SessionBody.self, from: Data(response.body))
        #expect(session.csrfToken == app.secrets.csrfToken)
        #expect(session.csrfToken.count * 4 >= 128, "at least 128 random bits")
        #expect(session.csrfToken.allSatisfy { $0.isHexDigit })
        #expect(!session.epoch.isEmpty)
    }

    @Test func launchSecretsDifferPerLaunch() {
        let first = LaunchSecrets(), second = LaunchSecrets()
        #expect(first.csrfToken != second.csrfToken)
        #expect(first.epoch != second.epoch)
    }

    @Test func healthz() async throws {
        let response = try await send("GET", "/healthz")
        #expect(String(decoding: response.body, as: UTF8.self) == "ok")
    }

    @Test func unknownAPIRouteIsAProblem404() async throws {
        let response = try await send("GET", "/api/nothing")
        #expect(response.status == .notFound)
        #expect(try problem(response).status == 404)
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        let response = try await post("/healthz", token: app.secrets.csrfToken)
        #expect(response.status == .methodNotAllowed)
        #expect(response.headers["Allow"] == "GET, HEAD")
        let staticResponse = try await send("DELETE", "/index.html", headers: ["Content-Type": "application/json",
                                                                                "X-CSRF-Token": app.secrets.csrfToken])
        #expect(staticResponse.status == .methodNotAllowed)
        #expect(staticResponse.headers["Allow"] == "GET, HEAD")
    }

    // MARK: Messages

    private func seed(_ ids: ClosedRange<Int64>, to account: AccountRole) async throws {
        _ = try await store.apply(ids.map {
            UpstreamMessage(id: $0, chatId: 1, sender: "Bob", text: "<b>m\($0)</b>", sentAt: "2026-11-29T12:00:00.000Z")
        }, to: account, receivedAt: "2026-11-29T12:00:01.000Z", cursor: String(ids.upperBound))
    }

    private func page(_ target: String) async throws -> (HTTPResponse, [String: Any]) {
        let response = try await send("GET", target)
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
        return (response, object)
    }

    @Test func messagesArePagedNewestFirst() async throws {
        try await seed(1...5, to: .primary)
        let (response, first) = try await page("/api/messages?account=primary&limit=2")
        #expect(response.status == .ok)
        #expect(response.headers["Cache-Control"] == "no-store")
        let messages = try #require(first["messages"] as? [[String: Any]])
        #expect(messages.compactMap { $0["id"] as? Int } == [5, 4])
        #expect(messages.first?["text"] as? String == "<b>m5</b>", "text is returned as data; the page inserts it as text")
        #expect(first["nextBefore"] as? Int == 4)
        let (_, second) = try await page("/api/messages?account=primary&before=4&limit=500")
        #expect((second["messages"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [3, 2, 1])
        #expect(second["nextBefore"] is NSNull, "null at the start of the history")
    }

    @Test func anAccountWithNothingStoredGivesAnEmptyList() async throws {
        let (response, body) = try await page("/api/messages?account=linked")
        #expect(response.status == .ok)
        #expect((body["messages"] as? [Any])?.isEmpty == true)
        #expect(body["nextBefore"] is NSNull)
    }

    @Test(arguments: ["/api/messages", "/api/messages?account=other", "/api/messages?account=primary&limit=0",
                      "/api/messages?account=primary&limit=501", "/api/messages?account=primary&before=x",
                      "/api/messages?account=primary&chat=x", "/api/chats?account=other", "/api/export?account=other",
                      "/api/export?chat=x"])
    func badQueriesAre400(_ target: String) async throws {
        let response = try await send("GET", target)
        #expect(response.status == .badRequest)
        #expect(try problem(response).status == 400)
    }

    // MARK: Search

    @Test func searchFindsStoredWordsWithSnippetsAsTextPieces() async throws {
        try await seed(1...5, to: .primary)
        let (response, body) = try await page("/api/search?q=m3&account=primary")
        #expect(response.status == .ok)
        let results = try #require(body["results"] as? [[String: Any]])
        #expect(results.count == 1)
        #expect((results.first?["message"] as? [String: Any])?["id"] as? Int == 3)
        let pieces = try #require(results.first?["snippet"] as? [[String: Any]])
        #expect(pieces.compactMap { $0["text"] as? String }.joined() == "<b>m3</b>", "the text as it is, in pieces")
        #expect(pieces.filter { $0["match"] as? Bool == true }.compactMap { $0["text"] as? String } == ["m3"])
        #expect(body["next"] is NSNull)
    }

    @Test(arguments: ["/api/search?q=%22m3", "/api/search?q=", "/api/search?q=(m3", "/api/search?q=OR", "/api/search?q=m3&account=other",
                      "/api/search?q=m3&limit=0", "/api/search?q=m3&before=x", "/api/search?q=m3&chat=x"])
    func searchesThatCannotBeReadAre400WithAPlainReason(_ target: String) async throws {
        try await seed(1...2, to: .primary)
        let response = try await send("GET", target)
        #expect(response.status == .badRequest)
        let detail = try problem(response).detail ?? ""
        #expect(!detail.isEmpty && !detail.lowercased().contains("fts5") && !detail.lowercased().contains("sqlite"), "\(detail)")
    }

    // MARK: Chats

    @Test func chatsListNewestActivityFirstAndOneChatsMessagesPage() async throws {
        _ = try await store.apply([
            UpstreamMessage(id: 1, chatId: 4, sender: "Bob", text: "a", sentAt: "2026-11-29T10:00:00.000Z", chatName: "Work"),
            UpstreamMessage(id: 2, chatId: 9, sender: "Bob", text: "b", sentAt: "2026-11-29T11:00:00.000Z"),
            UpstreamMessage(id: 3, chatId: 4, sender: "Eve", text: "c", sentAt: "2026-11-29T12:00:00.000Z"),
        ], to: .primary, receivedAt: "2026-11-29T12:00:01.000Z", cursor: "3", unread: .above(1))
        let (response, body) = try await page("/api/chats?account=primary")
        #expect(response.status == .ok)
        let chats = try #require(body["chats"] as? [[String: Any]])
        #expect(chats.map { $0["id"] as? Int } == [4, 9])
        #expect(chats[0]["name"] as? String == "Work" && chats[1]["name"] is NSNull)
        #expect(chats.map { $0["unread"] as? Int } == [1, 1])
        #expect(chats.map { $0["messageCount"] as? Int } == [2, 1])
        #expect(chats[0]["lastMessageAt"] as? String == "2026-11-29T12:00:00.000Z")
        let (_, work) = try await page("/api/messages?account=primary&chat=4")
        #expect((work["messages"] as? [[String: Any]])?.map { $0["id"] as? Int } == [3, 1])
        let (_, linked) = try await page("/api/chats?account=linked")
        #expect((linked["chats"] as? [Any])?.isEmpty == true)
    }

    @Test func markingAChatReadAnswersWithItAndTellsEveryOpenPage() async throws {
        _ = try await store.apply([UpstreamMessage(id: 1, chatId: 4, sender: "Bob", text: "a", sentAt: "2026-11-29T10:00:00.000Z")],
                                  to: .primary, receivedAt: "2026-11-29T12:00:01.000Z", cursor: "1", unread: .all)
        let response = try await post("/api/chats/4/read?account=primary", token: app.secrets.csrfToken)
        #expect(response.status == .ok)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect((body["chat"] as? [String: Any])?["unread"] as? Int == 0)
        #expect(try await store.chats(of: .primary).first?.unread == 0)
        guard case .now(let events) = await services.feed.poll(since: 0, epoch: services.feed.epoch, timeout: .zero, visible: false) else {
            Issue.record("no event published")
            return
        }
        #expect(String(decoding: events.body, as: UTF8.self).contains(#""type":"chat.read","data":{"account":"primary","chatId":4,"unread":0}"#))
        #expect(try await post("/api/chats/4/read", token: nil).status == .forbidden, "a write needs the CSRF token")
        #expect(try await post("/api/chats/77/read", token: app.secrets.csrfToken).status == .notFound)
        #expect(try await post("/api/chats/x/read", token: app.secrets.csrfToken).status == .badRequest)
        #expect(try await post("/api/chats/4/read?account=other", token: app.secrets.csrfToken).status == .badRequest)
    }

    @Test func exportingAChatThatIsNotThereIs404AndAnExportIsADownload() async throws {
        try await seed(1...2, to: .primary)
        #expect(try await send("GET", "/api/export?account=primary&chat=5").status == .notFound)
        let response = try await send("GET", "/api/export?account=primary&chat=1")
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "application/x-ndjson; charset=utf-8")
        let disposition = try #require(response.headers["Content-Disposition"])
        #expect(disposition.hasPrefix("attachment; filename=\"messages-primary-chat-1-") && disposition.hasSuffix(".jsonl\""))
        guard case .streamed = response.disposition else { Issue.record("not streamed"); return }
        #expect(try await send("GET", "/api/export?account=primary", authorized: false).status == .unauthorized)
    }

    @Test func exportFileNamesSayWhoseAndWhichChatInPlainLetters() {
        let day = Date(timeIntervalSince1970: 1_796_000_000)
        let chats = [ChatSummary(id: 3, name: "Book club: \"Émile\" ", messageCount: 1, unread: 0, lastMessageAt: nil, lastMessageId: 1)]
        #expect(ExportRoutes.fileName(account: .linked, chat: nil, chats: chats, today: day) == "messages-linked-2026-11-30.jsonl")
        #expect(ExportRoutes.fileName(account: .primary, chat: 3, chats: chats, today: day) == "messages-primary-book-club-emile-2026-11-30.jsonl")
    }

    // MARK: State and engine controls

    @Test func stateIsASnapshotWithEveryPart() async throws {
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1, linkedUserId: nil))
        try await seed(1...3, to: .primary)
        let response = try await send("GET", "/api/state")
        #expect(response.status == .ok)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(body["epoch"] as? String == app.secrets.epoch)
        let connection = try #require(body["connection"] as? [String: Any])
        #expect(connection["state"] as? String == "stopped")
        #expect(connection["activeCycles"] as? Int == 0)
        #expect(connection["retryAt"] is NSNull)
        #expect(connection["upstream"] as? String == "http://127.0.0.1:9/")
        let accounts = try #require(body["accounts"] as? [String: Any])
        #expect((accounts["primary"] as? [String: Any])?["cursor"] as? String == "3", "the upstream's cursor, as text")
        #expect(accounts["linked"] is NSNull)
        #expect(((body["messages"] as? [String: Any])?["primary"] as? [Any])?.count == 3)
        #expect((body["storage"] as? [String: Any])?["usedBytes"] as? Int ?? 0 > 0)
        #expect(body["errors"] as? [Any] != nil)
    }

    @Test(arguments: ["/api/engine/start", "/api/engine/stop", "/api/engine/retry-now"])
    func engineControlsAreAcceptedWithTheToken(_ path: String) async throws {
        #expect(try await post(path, token: app.secrets.csrfToken).status == .accepted)
        #expect(try await post(path).status == .forbidden)
    }

    @Test func stopAndStartReachTheEngine() async throws {
        _ = try await post("/api/engine/stop", token: app.secrets.csrfToken)
        await engine.activate()
        #expect(await engine.connectionStatus().activeCycles == 0, "stopped by the user, so no cycle even when active")
    }

    // MARK: Poll, attempts and the simulator proxy

    @Test func pollWithAForeignEpochGetsAResetWithTheState() async throws {
        let response = try await send("GET", "/api/poll?since=0&epoch=another-launch&timeout=0")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(body["reset"] as? Bool == true)
        #expect(body["epoch"] as? String == app.secrets.epoch)
        #expect((body["state"] as? [String: Any])?["connection"] != nil)
    }

    @Test func pollWithEventsAnswersAtOnce() async throws {
        await services.feed.publish("storage", ["usedBytes": 5])
        let response = try await send("GET", "/api/poll?since=0&epoch=\(app.secrets.epoch)&timeout=0")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect((body["events"] as? [[String: Any]])?.map { $0["type"] as? String } == ["storage"])
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test(arguments: ["/api/poll?since=-1", "/api/poll?since=x", "/api/poll?timeout=61", "/api/poll?timeout=soon",
                      "/api/poll?visible=2", "/api/poll?visible=yes", "/api/poll?visible="])
    func badPollParametersAre400(_ target: String) async throws {
        #expect(try await send("GET", target).status == .badRequest)
    }

    @Test func theSimulatorsErrorsAreProblemsAndEachActionHasItsMethod() async throws {
        let csrf: HTTPHeaders = ["Content-Type": "application/json", "X-CSRF-Token": app.secrets.csrfToken]
        let bad = try await send("POST", "/api/simulator/messages", headers: csrf, body: #"{"account":"primary","count":0}"#)
        #expect(bad.status == .badRequest)
        #expect(try problem(bad).detail?.hasPrefix("Body must be") == true)
        let noLinked = try await send("POST", "/api/simulator/linked", headers: csrf, body: #"{"linked":false}"#)
        #expect(noLinked.status == .ok)
        let conflict = try await send("POST", "/api/simulator/messages", headers: csrf, body: #"{"account":"linked","count":1}"#)
        #expect(conflict.status == .conflict)
        #expect(try problem(conflict).status == 409)
        let wrongMethod = try await send("GET", "/api/simulator/messages")
        #expect(wrongMethod.status == .methodNotAllowed)
        #expect(wrongMethod.headers["Allow"] == "POST")
        #expect(try problem(wrongMethod).status == 405)
        #expect(try await send("GET", "/api/simulator/no-such-action").status == .notFound)
    }

    @Test func attemptsNeedAKeyAndAnOpenError() async throws {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-CSRF-Token": app.secrets.csrfToken]
        let noKey = try await send("POST", "/api/errors/e1/attempts", headers: headers, body: #"{"option":"cancel"}"#)
        #expect(noKey.status == .badRequest)
        headers.add("Idempotency-Key", "k")
        let unknown = try await send("POST", "/api/errors/e1/attempts", headers: headers, body: #"{"option":"cancel"}"#)
        #expect(unknown.status == .notFound)
        let badBody = try await send("POST", "/api/errors/e1/attempts", headers: headers, body: #"{"choice":1}"#)
        #expect(badBody.status == .badRequest)
    }

    @Test func theSimulatorIsDrivenThroughTheProxyWithTheToken() async throws {
        let published = try await send("POST", "/api/simulator/messages",
                                       headers: ["Content-Type": "application/json", "X-CSRF-Token": app.secrets.csrfToken],
                                       body: #"{"account":"primary","count":2}"#)
        #expect(published.status == .ok)
        let refused = try await send("POST", "/api/simulator/faults", headers: ["Content-Type": "application/json"], body: #"{"mode":"offline"}"#)
        #expect(refused.status == .forbidden)
        let sent = try await send("GET", "/api/simulator/sent")
        #expect(String(decoding: sent.body, as: UTF8.self) == #"{"linked":[],"primary":[1,2]}"#
            || String(decoding: sent.body, as: UTF8.self) == #"{"primary":[1,2],"linked":[]}"#)
    }

    // MARK: Static files

    @Test func rootServesIndexWithTypeETagAndSecurityHeaders() async throws {
        let response = try await send("GET", "/")
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["ETag"] != nil)
        #expect(response.headers["Content-Security-Policy"] == "default-src 'self'; frame-ancestors 'none'")
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        #expect(response.headers["Cross-Origin-Resource-Policy"] == "same-origin")
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("<!doctype html>"))
    }

    @Test func scriptsAndStylesHaveTheirTypes() async throws {
        #expect(try await send("GET", "/app.js").headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(try await send("GET", "/sub/style.css").headers["Content-Type"] == "text/css; charset=utf-8")
    }

    @Test func ifNoneMatchGives304() async throws {
        let first = try await send("GET", "/app.js")
        let etag = try #require(first.headers["ETag"])
        let second = try await send("GET", "/app.js", headers: ["If-None-Match": etag])
        #expect(second.status == .notModified)
        #expect(second.body.isEmpty)
        #expect(second.headers["ETag"] == etag)
    }

    @Test func aChangedFileGetsANewETag() async throws {
        let before = try await send("GET", "/app.js").headers["ETag"]
        try Data("export const x = 22;".utf8).write(to: URL(fileURLWithPath: fixture.publicPath + "/app.js"))
        let after = try await send("GET", "/app.js")
        #expect(after.headers["ETag"] != before)
        #expect(String(decoding: after.body, as: UTF8.self) == "export const x = 22;")
    }

    @Test(arguments: [
        "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/sub/..%2f..%2fsecret.txt", "/link.txt",
        "/sub", "/a%00b", "/%5c..%5csecret.txt", "/..%5csecret.txt", "/nothing.html", "/.%2e/secret.txt",
    ])
    func pathsOutsideOrNotPlainFilesAre404(_ target: String) async throws {
        let response = try await send("GET", target)
        #expect(response.status == .notFound, "\(target)")
        #expect(!String(decoding: response.body, as: UTF8.self).contains("secret\""))
    }

    @Test func brokenPercentEncodingIs400() async throws {
        #expect(try await send("GET", "/%zz").status == .badRequest)
    }

    @Test func coreErrorsAreProblemsWithSecurityHeaders() throws {
        var response = DashboardApp.coreErrorResponse(status: .requestHeaderFieldsTooLarge, detail: "head of 20000 bytes")
        app.finishing(for: nil).apply(to: &response)  // as the core does for the errors it answers itself
        #expect(response.status.code == 431)
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers["Content-Security-Policy"] != nil)
        #expect(try problem(response).status == 431)
    }
}


@Suite("OpenAPI description")
struct OpenAPITests {
    @Test func everyAPIRouteIsDescribed() throws {
        let path = PublicDirectory.locate(explicit: nil, executablePath: "/nonexistent")! + "/openapi.json"
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect((document["openapi"] as? String)?.hasPrefix("3.") == true)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let routes: [(String, String)] = [
            ("get", "/api/session"), ("get", "/api/state"), ("get", "/api/messages"), ("get", "/api/poll"),
            ("post", "/api/errors/{id}/attempts"), ("post", "/api/engine/start"), ("post", "/api/engine/stop"),
            ("post", "/api/engine/retry-now"), ("get", "/api/search"), ("get", "/api/chats"), ("post", "/api/chats/{id}/read"),
            ("get", "/api/export"),
        ] + SimulatorAction.allCases.map { ($0.method.lowercased(), "/api/simulator/" + $0.rawValue) }
        for (method, route) in routes {
            #expect(paths[route]?[method] != nil, "\(method.uppercased()) \(route)")
        }
    }
}
