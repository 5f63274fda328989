import Foundation
import HTTPCore

/// A person on the test homeserver: logs in, creates and joins rooms, sends messages, syncs,
/// pages history, logs out. It is how a test plays the other side of a conversation, not the
/// product's transport, so it is deliberately plain: Matrix client-server API v3, one request at
/// a time, JSON through `JSONSerialization` out and `Decodable` back.
///
/// A client without a session can only log in; `signIn` (or `init(port:session:)`) gives one that
/// acts as that login's user. Calls that the server refuses throw `MatrixTestClientError.refused`
/// with the status and the Matrix `errcode` (e.g. 429 `M_LIMIT_EXCEEDED`).
struct MatrixTestClient: Sendable {
    /// A login: what `POST /login` answers.
    struct Session: Sendable, Equatable {
        var accessToken: String
        var deviceId: String
        var userId: String
    }

    /// A room event as the tests look at it; the content fields are those of messages, names and
    /// memberships, nil when absent or not strings.
    struct RoomEvent: Sendable, Equatable, Decodable {
        var eventId: String
        var type: String
        var sender: String
        var stateKey: String?
        var msgtype: String?
        var body: String?
        var format: String?
        var formattedBody: String?
        var membership: String?
        var name: String?

        private enum Keys: String, CodingKey {
            case eventId = "event_id", type, sender, stateKey = "state_key", content
        }

        private enum ContentKeys: String, CodingKey {
            case msgtype, body, format, formattedBody = "formatted_body", membership, name
        }

        init(from decoder: any Decoder) throws {
            let event = try decoder.container(keyedBy: Keys.self)
            eventId = try event.decode(String.self, forKey: .eventId)
            type = try event.decode(String.self, forKey: .type)
            sender = try event.decode(String.self, forKey: .sender)
            stateKey = try? event.decodeIfPresent(String.self, forKey: .stateKey)
            let content = try? event.nestedContainer(keyedBy: ContentKeys.self, forKey: .content)
            func text(_ key: ContentKeys) -> String? { (try? content?.decodeIfPresent(String.self, forKey: key)) ?? nil }
            msgtype = text(.msgtype)
            body = text(.body)
            format = text(.format)
            formattedBody = text(.formattedBody)
            membership = text(.membership)
            name = text(.name)
        }

        /// True for an `m.room.message`.
        var isMessage: Bool { type == "m.room.message" }
    }

    /// What `GET /sync` answered, reduced to what tests look at.
    struct SyncAnswer: Sendable {
        var nextBatch: String
        /// The timeline of each joined room in this answer, oldest first.
        var joinedTimelines: [String: [RoomEvent]]
        /// Whether a joined room's timeline was cut (`limited`): older events were left out.
        var limitedRooms: Set<String>
        /// Rooms this user is invited to.
        var invitedRooms: Set<String>
        /// Each joined room's `unread_notifications`: (notification_count, highlight_count).
        var unreadCounts: [String: (notifications: Int, highlights: Int)] = [:]

        /// The timeline of `roomId` (empty when the room is not in this answer).
        func timeline(_ roomId: String) -> [RoomEvent] { joinedTimelines[roomId] ?? [] }

        /// The bodies of the messages in `roomId`'s timeline, oldest first.
        func messageBodies(_ roomId: String) -> [String] { timeline(roomId).filter(\.isMessage).compactMap(\.body) }
    }

    /// One page of `GET /rooms/{roomId}/messages`.
    struct MessagesPage: Sendable {
        /// In the order asked for: newest first when paging backwards.
        var events: [RoomEvent]
        /// The token for the next page; nil when there is no more history in that direction.
        var end: String?
    }

    /// Which way `messages` pages.
    enum Direction: String, Sendable {
        case backward = "b"
        case forward = "f"
    }

    /// The HTTP client every call of the Matrix tests' harness goes through (readiness polls too).
    static let http = HTTPClient(loop: try! EventLoop(name: "matrix-test-client"))

    let host = "127.0.0.1"
    let port: Int
    /// The login the calls act with; nil for a client that can only log in.
    let session: Session?

    init(port: Int, session: Session? = nil) {
        self.port = port
        self.session = session
    }

    init(_ server: SynapseServer, session: Session? = nil) {
        self.init(port: server.port, session: session)
    }

    /// Logs `user` in (a new device) and returns a client acting as them.
    static func signIn(_ server: SynapseServer, user: String, password: String) async throws -> MatrixTestClient {
        let anonymous = MatrixTestClient(server)
        return MatrixTestClient(port: server.port, session: try await anonymous.login(user: user, password: password))
    }

    // MARK: Account

    /// `POST /login` with a password: a new device (or `deviceId`) and its access token. This
    /// client's own session does not change. `user` is a localpart or a full user id.
    func login(user: String, password: String, deviceId: String? = nil) async throws -> Session {
        struct Answer: Decodable {
            var access_token: String
            var device_id: String
            var user_id: String
        }
        var body: [String: Any] = ["type": "m.login.password", "identifier": ["type": "m.id.user", "user": user], "password": password]
        if let deviceId { body["device_id"] = deviceId }
        let answer: Answer = try await decode(call("POST", "/login", json: body, authorized: false))
        return Session(accessToken: answer.access_token, deviceId: answer.device_id, userId: answer.user_id)
    }

    /// `POST /logout` of `accessToken` (this client's own when nil): that token stops working.
    func logout(accessToken: String? = nil) async throws {
        guard let token = accessToken ?? session?.accessToken else { throw MatrixTestClientError.notSignedIn("POST /logout") }
        try await call("POST", "/logout", json: [:], token: token)
    }

    // MARK: Rooms

    /// `POST /createRoom` (a private chat unless `preset` says otherwise); returns the room id.
    func createRoom(name: String? = nil, invite: [String] = [], preset: String? = nil, encrypted: Bool = false) async throws -> String {
        struct Answer: Decodable { var room_id: String }
        var body: [String: Any] = ["invite": invite]
        if let name { body["name"] = name }
        if let preset { body["preset"] = preset }
        // As Element makes a direct chat: end-to-end encrypted from its first event.
        if encrypted { body["initial_state"] = [["type": "m.room.encryption", "state_key": "", "content": ["algorithm": "m.megolm.v1.aes-sha2"]]] }
        let answer: Answer = try await decode(call("POST", "/createRoom", json: body))
        return answer.room_id
    }

    /// `POST /rooms/{roomId}/join`: accepts an invite (or joins a public room).
    func join(_ roomId: String) async throws {
        try await call("POST", "/rooms/\(Self.pathComponent(roomId))/join", json: [:])
    }

    /// `PUT /rooms/{roomId}/send/m.room.message/{txnId}` of an `m.text` message, with HTML as
    /// `org.matrix.custom.html` `formatted_body` when `html` is given. Returns the event id.
    func send(_ roomId: String, text: String, html: String? = nil) async throws -> String {
        try await send(roomId, text: text, html: html, transactionId: Self.newTransactionId())
    }

    /// Sends `count` messages with the bodies `"PREFIX 1"` ... `"PREFIX COUNT"`; returns their
    /// event ids in that order. With `inFlight` 1 they go one after another, so the room holds them
    /// in this order; more in flight lets the homeserver persist them in batches (much faster),
    /// and the room's order is then the order in which it took them: read it back to compare. A
    /// 429 is waited out as long as the server asks and the same transaction sent again (use
    /// `send` to see 429s).
    func sendMany(_ roomId: String, count: Int, prefix: String = "message", inFlight: Int = 1) async throws -> [String] {
        guard count > 0 else { return [] }
        var eventIds = [String](repeating: "", count: count)
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var next = 1
            func start() {
                let number = next
                next += 1
                group.addTask { (number, try await self.sendRetryingWhenLimited(roomId, text: "\(prefix) \(number)")) }
            }
            while next <= min(count, inFlight) { start() }
            while let (number, eventId) = try await group.next() {
                eventIds[number - 1] = eventId
                if next <= count { start() }
            }
        }
        return eventIds
    }

    private func sendRetryingWhenLimited(_ roomId: String, text: String) async throws -> String {
        let transactionId = Self.newTransactionId()
        while true {
            do {
                return try await send(roomId, text: text, html: nil, transactionId: transactionId)
            } catch let error as MatrixTestClientError {
                guard let wait = error.retryAfter else { throw error }
                try await Task.sleep(for: wait)
            }
        }
    }

    private func send(_ roomId: String, text: String, html: String?, transactionId: String) async throws -> String {
        struct Answer: Decodable { var event_id: String }
        var content: [String: Any] = ["msgtype": "m.text", "body": text]
        if let html {
            content["format"] = "org.matrix.custom.html"
            content["formatted_body"] = html
        }
        let path = "/rooms/\(Self.pathComponent(roomId))/send/m.room.message/\(Self.pathComponent(transactionId))"
        let answer: Answer = try await decode(call("PUT", path, json: content))
        return answer.event_id
    }

    /// Any message content sent as `m.room.message` (an edit, a reply, a broken client's event).
    func sendContent(_ roomId: String, _ content: [String: Any], type: String = "m.room.message") async throws -> String {
        struct Answer: Decodable { var event_id: String }
        let path = "/rooms/\(Self.pathComponent(roomId))/send/\(Self.pathComponent(type))/\(Self.pathComponent(Self.newTransactionId()))"
        let answer: Answer = try await decode(call("PUT", path, json: content))
        return answer.event_id
    }

    /// `POST /_matrix/media/v3/upload` of `bytes` as `contentType`; returns the `mxc://` URI.
    func upload(_ bytes: [UInt8], contentType: String, filename: String) async throws -> String {
        var request = HTTPClientRequest(method: "POST", target: "/_matrix/media/v3/upload?filename=\(Self.pathComponent(filename))", body: bytes)
        request.headers.add("Content-Type", contentType)
        guard let token = session?.accessToken else { throw MatrixTestClientError.notSignedIn("upload") }
        request.headers.add("Authorization", "Bearer \(token)")
        let response = try await Self.http.send(request, host: host, port: port, timeout: .seconds(30))
        guard (200..<300).contains(response.status) else {
            throw MatrixTestClientError.refused("upload", status: response.status, MatrixTestClientError.MatrixError(response.body))
        }
        struct Answer: Decodable { var content_uri: String }
        let answer: Answer = try decode(response.body)
        return answer.content_uri
    }

    /// An edit of `eventId` as Element sends it: a `* ` fallback body and `m.new_content`.
    func edit(_ roomId: String, _ eventId: String, to text: String) async throws -> String {
        try await sendContent(roomId, ["msgtype": "m.text", "body": "* \(text)", "m.new_content": ["msgtype": "m.text", "body": text],
                                       "m.relates_to": ["rel_type": "m.replace", "event_id": eventId]])
    }

    /// A reply to `eventId` with the quoted fallback a client adds for clients that cannot show replies.
    func reply(_ roomId: String, to eventId: String, quoting quoted: String, by author: String, text: String) async throws -> String {
        try await sendContent(roomId, ["msgtype": "m.text", "body": "> <\(author)> \(quoted)\n\n\(text)",
                                       "m.relates_to": ["m.in_reply_to": ["event_id": eventId]]])
    }

    /// A reaction as Element sends it: an `m.reaction` annotating `eventId` with `key`.
    func react(_ roomId: String, to eventId: String, _ key: String) async throws -> String {
        try await sendContent(roomId, ["m.relates_to": ["rel_type": "m.annotation", "event_id": eventId, "key": key]], type: "m.reaction")
    }

    /// The reactions `eventId` has on the homeserver now (`GET /relations/{eventId}/m.annotation`,
    /// spec v1.3), as (key, sender) pairs: what every other client shows.
    func reactions(_ roomId: String, on eventId: String) async throws -> [(key: String, sender: String)] {
        struct Answer: Decodable {
            struct Event: Decodable {
                struct Content: Decodable {
                    struct Relation: Decodable { var key: String? }
                    var relation: Relation?
                    enum CodingKeys: String, CodingKey { case relation = "m.relates_to" }
                }
                var sender: String
                var content: Content?
            }
            var chunk: [Event]
        }
        let path = "/rooms/\(Self.pathComponent(roomId))/relations/\(Self.pathComponent(eventId))/m.annotation"
        let answer: Answer = try await decode(call("GET", path, version: "v1"))
        return answer.chunk.compactMap { event in event.content?.relation?.key.map { ($0, event.sender) } }
    }

    /// A reply in the thread under `root`, as Element sends one (spec 11.37): `m.thread` with the
    /// fallback reply to `latest` (the thread's newest event) for clients without threads.
    func replyInThread(_ roomId: String, under root: String, latest: String, text: String) async throws -> String {
        try await sendContent(roomId, ["msgtype": "m.text", "body": text,
                                       "m.relates_to": ["rel_type": "m.thread", "event_id": root, "is_falling_back": true,
                                                        "m.in_reply_to": ["event_id": latest]] as [String: Any]])
    }

    /// `GET /relations/{root}/m.thread`: the bodies of the thread's replies as the homeserver
    /// holds them, newest first, with who sent each.
    func threadReplies(_ roomId: String, under root: String) async throws -> [(body: String, sender: String)] {
        struct Answer: Decodable {
            struct Event: Decodable {
                struct Content: Decodable { var body: String? }
                var sender: String
                var content: Content?
            }
            var chunk: [Event]
        }
        let path = "/rooms/\(Self.pathComponent(roomId))/relations/\(Self.pathComponent(root))/m.thread"
        let answer: Answer = try await decode(call("GET", path, version: "v1"))
        return answer.chunk.compactMap { event in event.content?.body.map { ($0, event.sender) } }
    }

    /// `PUT /profile/{userId}/displayname`: the name the user's rooms show from now on.
    func setDisplayName(_ name: String) async throws {
        guard let user = session?.userId else { throw MatrixTestClientError.notSignedIn("set display name") }
        try await call("PUT", "/profile/\(Self.pathComponent(user))/displayname", json: ["displayname": name])
    }

    /// `PUT /rooms/{roomId}/redact/{eventId}/{txnId}`: the message is deleted for everyone.
    func redact(_ roomId: String, _ eventId: String) async throws {
        let path = "/rooms/\(Self.pathComponent(roomId))/redact/\(Self.pathComponent(eventId))/\(Self.pathComponent(Self.newTransactionId()))"
        try await call("PUT", path, json: ["reason": "test"])
    }

    // MARK: Reading

    /// `GET /sync` from `since` (an initial sync when nil), holding up to `timeoutMs` for news,
    /// with up to `timelineLimit` events per room's timeline.
    func sync(since: String? = nil, timeoutMs: Int = 0, timelineLimit: Int = 100) async throws -> SyncAnswer {
        struct Answer: Decodable {
            struct Rooms: Decodable {
                struct Joined: Decodable {
                    struct Timeline: Decodable {
                        var events: [RoomEvent]?
                        var limited: Bool?
                    }
                    struct Counts: Decodable {
                        var notification_count: Int?
                        var highlight_count: Int?
                    }
                    var timeline: Timeline?
                    var unread_notifications: Counts?
                }
                struct Invited: Decodable {}
                var join: [String: Joined]?
                var invite: [String: Invited]?
            }
            var next_batch: String
            var rooms: Rooms?
        }
        var query = ["timeout": "\(timeoutMs)", "filter": #"{"room":{"timeline":{"limit":\#(timelineLimit)}}}"#]
        if let since { query["since"] = since }
        let answer: Answer = try await decode(call("GET", "/sync", query: query, timeout: .milliseconds(timeoutMs) + .seconds(30)))
        let joined = answer.rooms?.join ?? [:]
        return SyncAnswer(nextBatch: answer.next_batch,
                          joinedTimelines: joined.mapValues { $0.timeline?.events ?? [] },
                          limitedRooms: Set(joined.filter { $0.value.timeline?.limited == true }.keys),
                          invitedRooms: Set((answer.rooms?.invite ?? [:]).keys),
                          unreadCounts: joined.compactMapValues { room in
                              room.unread_notifications.map { ($0.notification_count ?? 0, $0.highlight_count ?? 0) }
                          })
    }

    /// One page of `GET /rooms/{roomId}/messages`: from `from` (the newest end when nil) in
    /// `direction`, at most `limit` events.
    func messages(_ roomId: String, from: String? = nil, direction: Direction = .backward, limit: Int = 100) async throws -> MessagesPage {
        struct Answer: Decodable {
            var chunk: [RoomEvent]
            var end: String?
        }
        var query = ["dir": direction.rawValue, "limit": "\(limit)"]
        if let from { query["from"] = from }
        let answer: Answer = try await decode(call("GET", "/rooms/\(Self.pathComponent(roomId))/messages", query: query))
        return MessagesPage(events: answer.chunk, end: answer.end)
    }

    /// Every `m.room.message` body of `roomId`, oldest first, paging back through all history.
    func allMessageBodies(_ roomId: String, pageSize: Int = 500) async throws -> [String] {
        var newestFirst: [String] = []
        var from: String?
        repeat {
            let page = try await messages(roomId, from: from, direction: .backward, limit: pageSize)
            newestFirst += page.events.filter(\.isMessage).compactMap(\.body)
            from = page.events.isEmpty ? nil : page.end
        } while from != nil
        return newestFirst.reversed()
    }

    // MARK: Plumbing

    /// Characters a path segment keeps as they are (RFC 3986 unreserved); `!`, `:`, `@`, `$` and
    /// the rest of a room id, event id or user id are percent-encoded.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `text` percent-encoded for one path segment or query value.
    static func pathComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// A transaction id no other send of this test run uses.
    static func newTransactionId() -> String { "lp-test-\(UUID().uuidString)" }

    /// One call of the client-server API (`path` is under `/_matrix/client/v3`, or the `version`
    /// given): the body of a 2xx answer, or `MatrixTestClientError` with the status and `errcode`.
    @discardableResult
    func call(_ method: String, _ path: String, query: [String: String] = [:], json: [String: Any]? = nil,
              authorized: Bool = true, token: String? = nil, timeout: Duration = .seconds(30), version: String = "v3") async throws -> [UInt8] {
        let what = "\(method) \(path)"
        var target = "/_matrix/client/\(version)" + path
        if !query.isEmpty {
            target += "?" + query.sorted { $0.key < $1.key }.map { "\(Self.pathComponent($0.key))=\(Self.pathComponent($0.value))" }
                .joined(separator: "&")
        }
        var request = HTTPClientRequest(method: method, target: target)
        request.headers.add("Accept", "application/json")
        if let json {
            request.body = Array(try JSONSerialization.data(withJSONObject: json))
            request.headers.add("Content-Type", "application/json")
        }
        if authorized {
            guard let token = token ?? session?.accessToken else { throw MatrixTestClientError.notSignedIn(what) }
            request.headers.add("Authorization", "Bearer \(token)")
        }
        let response: HTTPClientResponse
        do {
            response = try await Self.http.send(request, host: host, port: port, timeout: timeout)
        } catch {
            throw MatrixTestClientError.transport(what, error)
        }
        guard (200..<300).contains(response.status) else {
            throw MatrixTestClientError.refused(what, status: response.status, MatrixTestClientError.MatrixError(response.body))
        }
        return response.body
    }

    private func decode<Answer: Decodable>(_ body: [UInt8]) throws -> Answer {
        do {
            return try JSONDecoder().decode(Answer.self, from: Data(body))
        } catch {
            throw MatrixTestClientError.unexpectedAnswer("\(error); body starts \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
    }
}

/// Why a `MatrixTestClient` call failed.
enum MatrixTestClientError: Error, CustomStringConvertible {
    /// The standard error body of the client-server API: `{"errcode": ..., "error": ...}`.
    struct MatrixError: Sendable, Equatable {
        var errcode: String?
        var error: String?
        var retryAfterMs: Int?

        init(_ body: [UInt8]) {
            let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
            errcode = object["errcode"] as? String
            error = object["error"] as? String
            retryAfterMs = (object["retry_after_ms"] as? NSNumber)?.intValue
        }
    }

    /// A call that needs an access token on a client without a session.
    case notSignedIn(String)
    /// No answer: refused, reset, timed out.
    case transport(String, HTTPClientError)
    /// An answer other than 2xx.
    case refused(String, status: Int, MatrixError)
    /// A 2xx answer that is not the JSON expected.
    case unexpectedAnswer(String)

    /// The Matrix `errcode` of a refusal (`M_LIMIT_EXCEEDED`, `M_UNKNOWN_TOKEN`, ...).
    var errcode: String? {
        if case .refused(_, _, let error) = self { return error.errcode }
        return nil
    }

    /// The HTTP status of a refusal.
    var status: Int? {
        if case .refused(_, let status, _) = self { return status }
        return nil
    }

    /// For a 429: how long the server asks to wait (a second when it does not say).
    var retryAfter: Duration? {
        guard case .refused(_, 429, let error) = self else { return nil }
        return .milliseconds(error.retryAfterMs ?? 1000)
    }

    var description: String {
        switch self {
        case .notSignedIn(let what): "\(what) needs an access token, and this client has no session"
        case .transport(let what, let error): "\(what): \(error)"
        case .refused(let what, let status, let error):
            "\(what): \(status) \(error.errcode ?? "(no errcode)") \(error.error ?? "")"
                + (error.retryAfterMs.map { " (retry after \($0) ms)" } ?? "")
        case .unexpectedAnswer(let detail): "unexpected answer: \(detail)"
        }
    }
}
