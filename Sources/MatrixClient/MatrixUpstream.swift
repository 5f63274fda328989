import Foundation
import PushRules
import HTTPCore
import Logging
import Synchronization
import Upstream

/// What a restart needs to sign in as the same device: kept by the store, never shown.
public struct MatrixCredentials: Sendable, Equatable {
    /// nil once the homeserver refused it; the device is kept to sign in as it again.
    public var accessToken: String?
    public var deviceID: String?

    public init(accessToken: String?, deviceID: String?) {
        self.accessToken = accessToken
        self.deviceID = deviceID
    }
}

/// Where the transport keeps its credentials between runs (the dashboard gives it the store).
public protocol MatrixCredentialKeeper: Sendable {
    func load() async -> MatrixCredentials?
    func save(_ credentials: MatrixCredentials) async
}

/// `UpstreamAPI` for a Matrix homeserver's client-server API (CONTRACT section 8): `http://` over
/// the project's own HTTP client, `https://` through URLSession contained in a child process per
/// request (`ChildProcessTLSConnection`).
///
/// One stream (the signed-in user; Matrix has no linked account), whose cursor is the sync's
/// `next_batch`. Each answer says what it is, since Matrix has no "newest id" to compare with: the
/// first sync of an empty store is history, one asked to answer at once (the engine's catch-up
/// after a start or a reconnection) is what was missed, every other one waits and is live. A
/// `limited` timeline is a gap, filled backwards from its `prev_batch` to the previous sync's
/// position before the answer is returned, so the batch holds every event in timeline order.
///
/// Each room's earlier history, from before the first sync, is read backwards through
/// `OlderHistory` from where the room was first seen (its first `prev_batch`), by the engine's
/// history fetcher; gaps and history walk `/messages` the same way (`page(of:from:to:limit:)`).
public final class MatrixUpstream: UpstreamAPI, PasswordSignIn, OlderHistory, ReadMarkers, MediaSource, MessageSending {
    public let homeserver: URL
    public var location: String { "matrix+" + homeserver.absoluteString }
    public var features: UpstreamFeatures { UpstreamFeatures(kind: "matrix", linkedAccount: false, sellsStorage: false) }

    /// The sign-in of `--matrix-user`: a password from the environment, or a token.
    public struct SignIn: Sendable {
        public var user: String
        public var password: String?
        public var accessToken: String?

        public init(user: String, password: String?, accessToken: String?) {
            self.user = user
            self.password = password
            self.accessToken = accessToken
        }
    }

    private struct State {
        var password: String?
        /// The password the environment gave, which a typed one that fails gives way to again.
        let environmentPassword: String?
        var credentials: MatrixCredentials?
        /// The keeper's credentials are read once, at the first session.
        var loaded = false
        var names = RoomNames()
        var members = RoomMembers()
        /// A sync of this process had every room's whole state (the first sync of an empty store, or one with `full_state`).
        var knowsFullState = false
        /// Each joined room by the number the copy knows it as, for calls about a chat.
        var rooms: [Int64: String] = [:]
        /// Messages that could not be read (no text body, a body of another type) were skipped and said so once.
        var toldOfUnreadable = false
        /// The account's push rules, once read (`GET /pushrules/`, then each `m.push_rules` a sync brings).
        var pushRules: PushRuleEvaluator?
        /// Reading them failed and was said once; each sync tries again.
        var toldOfNoPushRules = false
        /// The rules whose unreadable conditions were logged.
        var toldOfRules: Set<String> = []
    }

    private let user: String
    private let connection: any HomeserverConnection
    /// How sends reach the homeserver: on their own loop's connections, or `connection`.
    private let sendConnection: any HomeserverConnection
    private let basePath: String
    private let keeper: any MatrixCredentialKeeper
    private let timelineLimit: Int
    /// The wall clock, for a `Retry-After` given as a date.
    private let nowSeconds: @Sendable () -> Int
    private let state: Mutex<State>
    private let log = Logger("matrix")

    /// - Parameters:
    ///   - homeserver: `http://host:port` or `https://host:port` (the `matrix+` of `--upstream` taken off).
    ///   - tlsHelper: the `https-fetch` executable, for `https://` (default: beside this program).
    ///   - timelineLimit: events per room in a sync; a longer stretch is a gap, filled.
    ///   - sendLoop: where sends are made and read over plain `http://`, if not on `loop` (so a
    ///     message on its way out never waits while a sync is read); `https://` sends each go
    ///     through a helper process of their own anyway.
    public init(homeserver: URL, signIn: SignIn, keeper: any MatrixCredentialKeeper, loop: EventLoop, sendLoop: EventLoop? = nil, tlsHelper: String? = nil,
                timelineLimit: Int = 50, nowSeconds: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }) {
        self.nowSeconds = nowSeconds
        self.homeserver = homeserver
        self.user = signIn.user
        let host = homeserver.host ?? "127.0.0.1"
        if homeserver.scheme == "https" {
            let authority = host.contains(":") ? "[\(host)]" : host
            connection = ChildProcessTLSConnection(origin: "https://\(authority)" + (homeserver.port.map { ":\($0)" } ?? ""),
                                                   helper: tlsHelper ?? Self.siblingHelper())
            sendConnection = connection
        } else {
            connection = PlainConnection(client: HTTPClient(loop: loop), host: host, port: homeserver.port ?? 80)
            sendConnection = sendLoop.map { PlainConnection(client: HTTPClient(loop: $0), host: host, port: homeserver.port ?? 80) } ?? connection
        }
        let path = homeserver.path
        self.basePath = path.hasSuffix("/") ? String(path.dropLast()) : path
        self.keeper = keeper
        self.timelineLimit = timelineLimit
        self.state = Mutex(State(password: signIn.password, environmentPassword: signIn.password,
                                 credentials: signIn.accessToken.map { MatrixCredentials(accessToken: $0, deviceID: nil) },
                                 loaded: signIn.accessToken != nil))
    }

    /// A password typed into the page's "Sign in again" form: used for the next sign-in only, in
    /// memory, and forgotten once that sign-in got through (or was refused: `withdrawTypedPassword`).
    public func signInAgain(password: String) {
        state.withLock { $0.password = password }
    }

    public func withdrawTypedPassword() {
        state.withLock { $0.password = $0.environmentPassword }
    }

    // MARK: UpstreamAPI

    /// The known token if the homeserver still takes it (`whoami`), else a password sign-in as the
    /// same device; a 401 when neither works (the engine then shows "Sign in again").
    public func createSession() async throws(UpstreamError) -> UpstreamSession {
        if !state.withLock({ $0.loaded }) {
            let stored = await keeper.load()
            state.withLock { $0.loaded = true; if $0.credentials == nil { $0.credentials = stored } }
        }
        let (known, password) = state.withLock { ($0.credentials, $0.password) }
        if let token = known?.accessToken {
            do {
                let me: WhoAmIResponse = try await call("GET", "/_matrix/client/v3/account/whoami", token: token)
                // A token from the environment is kept too, with its device, for the next start.
                let confirmed = MatrixCredentials(accessToken: token, deviceID: me.deviceId ?? known?.deviceID)
                if confirmed != known {
                    state.withLock { $0.credentials = confirmed }
                    await keeper.save(confirmed)
                }
                return session(token: token, userID: me.userId)
            } catch .unauthorized {
                log.info("the access token was refused; \(password == nil ? "no password to sign in with" : "signing in again")")
                let forgotten = MatrixCredentials(accessToken: nil, deviceID: known?.deviceID)
                state.withLock { $0.credentials = forgotten }
                await keeper.save(forgotten)
            }
        }
        guard let password else { throw .unauthorized }
        let login: LoginResponse = try await call("POST", "/_matrix/client/v3/login", body: loginBody(password: password, deviceID: known?.deviceID),
                                                  refusalIsUnauthorized: true, answerHoldsSecrets: true)
        let credentials = MatrixCredentials(accessToken: login.accessToken, deviceID: login.deviceId ?? known?.deviceID)
        // A typed password is used for this one sign-in and kept no longer (the page says so);
        // one from the environment is the person's own setting and stays for the next.
        state.withLock { $0.credentials = credentials; $0.password = $0.environmentPassword }
        await keeper.save(credentials)
        log.info("signed in as \(login.userId), device \(credentials.deviceID ?? "?")")
        return session(token: login.accessToken, userID: login.userId)
    }

    private func session(token: String, userID: String) -> UpstreamSession {
        UpstreamSession(token: token, primaryUserId: MatrixIdentity.number(for: userID), linkedUserId: nil, storageQuotaBytes: nil)
    }

    /// Matrix has no newest id per stream: each answer says what it is instead.
    public func lastMessageInfo(token: String) async throws(UpstreamError) -> LastMessageInfo? {
        nil
    }

    public func messages(token: String, after cursors: StreamCursors, wait: PollWait) async throws(UpstreamError) -> MessagesAnswer {
        let since = cursors.primary
        let delivery: AnswerDelivery = since == nil ? .history : wait == .catchUp ? .missed : .live
        let timeout = delivery == .live ? wait.seconds * 1000 : 0
        // Counts per thread, so that a thread read shows read (the room's counts hold the main
        // timeline's alone then; `NotificationCounts` sums them again).
        var query = "timeout=\(timeout)&filter=" + Self.encode("{\"room\":{\"timeline\":{\"limit\":\(timelineLimit),\"unread_thread_notifications\":true}}}")
        if let since {
            query += "&since=" + Self.encode(since)
            // What this process knows of members and encryption is learnt from syncs: the first
            // one after a start asks for every room's whole state, so a restart forgets nothing.
            if state.withLock({ !$0.knowsFullState }) { query += "&full_state=true" }
        }
        // Read alongside the sync rather than before it, a round trip less on a first start; the
        // sync's events are judged by them once both are in.
        async let rulesKnown: Void = loadPushRules(token: token)
        let sync: SyncResponse = try await call("GET", "/_matrix/client/v3/sync?" + query, token: token, timeout: .seconds(wait.seconds + 15))
        await rulesKnown
        state.withLock { $0.knowsFullState = true }
        // Rules changed in another client (Element's "Mute", a keyword) hold from this sync on.
        if let changed = sync.accountData?.events?.last(where: { $0.type == "m.push_rules" })?.pushRules {
            adopt(changed)
        }
        // Direct chats, as the account's clients mark them: an unnamed one is named for the other person.
        if let direct = sync.accountData?.events?.last(where: { $0.type == "m.direct" })?.direct {
            state.withLock { $0.names.learnDirect(direct) }
        }
        var messages: [UpstreamMessage] = []
        var historyStarts: [HistoryPosition] = []
        var readElsewhere: [Int64] = []
        var inChat: [Int64: Bool] = [:]
        var counts: [Int64: NotificationCounts] = [:]
        // Rooms left since the last sync bring their last events too, up to the leave; they stay as archives.
        let rooms = (sync.rooms?.join ?? [:]).map { ($0.key, $0.value, true) } + (sync.rooms?.leave ?? [:]).map { ($0.key, $0.value, false) }
        for (roomID, room, joined) in rooms.sorted(by: { $0.0 < $1.0 }) {
            let chatID = MatrixIdentity.number(for: roomID)
            inChat[chatID] = joined
            state.withLock {
                $0.names.learn(roomID, from: room)
                $0.members.learn(room.summary, of: roomID)
                $0.rooms[chatID] = roomID
            }
            // The homeserver's own counts, by the account's push rules: a muted room's messages are
            // not unread. The room's are its main timeline's; a thread's are apart (a thread left
            // out has none), and the chat counts both, as Element's room list does.
            var roomCounts: NotificationCounts?
            if joined, let main = room.unreadNotifications, main.notificationCount != nil {
                roomCounts = NotificationCounts(main, threads: room.unreadThreadNotifications)
            }
            // Read here or in another client: nothing in the room counts as unread for the account.
            if roomCounts?.notifications == 0 || !joined { readElsewhere.append(chatID) }
            if let roomCounts { counts[chatID] = roomCounts }
            var events = room.timeline?.events ?? []
            // Older history goes back from the oldest event this answer holds of the room.
            var olderFrom = room.timeline?.prevBatch
            if let since, room.timeline?.limited == true, let gapStart = room.timeline?.prevBatch {
                events = try await gap(in: roomID, from: gapStart, back: since, token: token) + events
                olderFrom = since
            }
            if let olderFrom {
                historyStarts.append(HistoryPosition(chatId: chatID, upstreamChat: roomID, token: olderFrom))
            }
            messages += state.withLock { state in
                for event in room.state?.events ?? [] { state.members.learn(event, in: roomID) }
                // In timeline order: a display name changed before a message is the one it shows.
                var translated = events.compactMap { event -> UpstreamMessage? in
                    if event.stateKey != nil { state.members.learn(event, in: roomID) }
                    guard var message = UpstreamMessage(event, roomID: roomID, roomName: nil) else {
                        if event.type == "m.room.message" || event.type == "m.reaction", !state.toldOfUnreadable {
                            // Logged once: another client's broken events can come by the thousand.
                            state.toldOfUnreadable = true
                            log.info("skipped an \(event.type) of \(roomID) that cannot be read (\(event.eventId ?? "no event id"): no text, or no reaction key and target); such messages and reactions are skipped quietly from now on")
                        }
                        return nil
                    }
                    message.senderName = state.members.name(of: message.sender, in: roomID)
                    message.byAccount = message.sender == user
                    if let rules = state.pushRules {
                        let decision = rules.evaluate(event.flattened(in: roomID), in: state.members.pushContext(of: roomID, for: user))
                        message.attention = decision.highlights ? .mention : decision.notifies ? .notify : .quiet
                    }
                    if state.members.isEncrypted(roomID) { message.chatEncrypted = true }
                    return message
                }
                // Named once the sync's members are in: an unnamed room by its people's display names.
                let members = state.members
                let name = state.names.name(of: roomID, members: members.others(in: roomID, besides: user)) { members.name(of: $0, in: roomID) }
                for index in translated.indices { translated[index].chatName = name }
                return translated
            }
        }
        let stream = String(MatrixIdentity.number(for: user))
        var answer = MessagesAnswer(messages: messages.isEmpty ? [:] : [stream: messages], cursors: [stream: sync.nextBatch], delivery: delivery,
                                    historyStarts: historyStarts.isEmpty ? [:] : [stream: historyStarts],
                                    readElsewhere: readElsewhere.isEmpty ? [:] : [stream: readElsewhere],
                                    inChat: inChat.isEmpty ? [:] : [stream: inChat])
        if !counts.isEmpty { answer.notificationCounts = [stream: counts] }
        return answer
    }

    // MARK: Push rules

    /// Reads the account's push rules unless they are known. Without them (an old homeserver, a
    /// failure) every live message is told, as before; the next sync tries again.
    private func loadPushRules(token: String) async {
        guard state.withLock({ $0.pushRules == nil }) else { return }
        do {
            let answer: GlobalPushRules = try await call("GET", "/_matrix/client/v3/pushrules/", token: token)
            adopt(answer.global ?? PushRuleSet())
        } catch {
            // Given up with the sync beside it (a stop, a failed sync): not a failure to tell.
            if Task.isCancelled { return }
            let first = state.withLock { state in defer { state.toldOfNoPushRules = true }; return !state.toldOfNoPushRules }
            if first { log.info("the account's push rules could not be read (\(error)); every new message is told until they can be") }
        }
    }

    private func adopt(_ rules: PushRuleSet) {
        let unreadable = (rules.override + rules.content + rules.room + rules.sender + rules.underride).filter { !$0.unreadable.isEmpty }
        let untold = state.withLock { state in
            state.pushRules = PushRuleEvaluator(rules: rules, userID: user)
            defer { state.toldOfRules.formUnion(unreadable.map(\.ruleID)) }
            return unreadable.filter { !state.toldOfRules.contains($0.ruleID) }
        }
        for rule in untold {
            // Each such rule never matches (the spec's word for a condition it does not know); said once.
            log.info("push rule \(rule.ruleID) never applies here: \(rule.unreadable.joined(separator: "; "))")
        }
    }

    // MARK: ReadMarkers

    /// Moves the account's fully-read marker and its private read receipt to `eventId`, as
    /// Element does when a room is read, so every client of the account shows it read (a private
    /// receipt: the others in the room are not told). That receipt is unthreaded (CONTRACT section
    /// 10), so it reads the room's threads too, up to `eventId`. A thread read (`thread`, its first
    /// message's event id) is a private receipt in that thread alone (`thread_id`, spec 11.6.2.2),
    /// as Element sends from its thread view.
    public func markRead(token: String, chatId: Int64, eventId: String, thread: String?) async throws(UpstreamError) {
        guard let roomID = state.withLock({ $0.rooms[chatId] }) else {
            throw .badResponse("chat \(chatId) is no room this process has synced")
        }
        let room = "/_matrix/client/v3/rooms/\(Self.encode(roomID))"
        if let thread {
            let receipt = (try? JSONSerialization.data(withJSONObject: ["thread_id": thread])) ?? Data()
            let _: EmptyAnswer = try await call("POST", "\(room)/receipt/m.read.private/\(Self.encode(eventId))", token: token, body: Array(receipt))
            return
        }
        let body = (try? JSONSerialization.data(withJSONObject: ["m.fully_read": eventId, "m.read.private": eventId])) ?? Data()
        let _: EmptyAnswer = try await call("POST", "\(room)/read_markers", token: token, body: Array(body))
    }

    // MARK: MessageSending

    /// `PUT /rooms/{roomId}/send/m.room.message/{txnId}` (CONTRACT section 11): the key is the
    /// transaction id, which the homeserver keeps per device, so a send whose answer was lost goes
    /// again under it and is stored once. Its echo in `/sync` carries the same id
    /// (`unsigned.transaction_id`) and the event id returned here.
    public func send(_ message: OutgoingMessage, token: String, deadline: Duration) async throws(UpstreamError) -> UpstreamMessage {
        guard let roomID = message.upstreamChat ?? state.withLock({ $0.rooms[message.chatId] }) else {
            throw .refused(SendRefusal(.chatGone, detail: "this dashboard does not know the room of chat \(message.chatId)"))
        }
        struct Sent: Decodable {
            var eventId: String
            enum CodingKeys: String, CodingKey { case eventId = "event_id" }
        }
        let room = "/_matrix/client/v3/rooms/\(Self.encode(roomID))"
        let target: String
        let content: [String: Any]
        let relation: UpstreamMessage.Relation?
        switch message.action {
        case .message:
            var fields: [String: Any] = ["msgtype": "m.text", "body": message.text]
            if let root = message.threadRoot {
                // A thread's reply (spec 11.37); the reply to the first message is the fallback
                // for clients without threads.
                fields["m.relates_to"] = ["rel_type": "m.thread", "event_id": root, "is_falling_back": true,
                                          "m.in_reply_to": ["event_id": root]] as [String: Any]
            }
            (target, content, relation) = ("\(room)/send/m.room.message/\(Self.encode(message.key))", fields, nil)
        case .react(let eventID):
            // An annotation (spec 11.32): the key goes in the relation, and the event has no body.
            let annotation: [String: Any] = ["rel_type": "m.annotation", "event_id": eventID, "key": message.text]
            (target, content, relation) = ("\(room)/send/m.reaction/\(Self.encode(message.key))", ["m.relates_to": annotation], .annotates(eventId: eventID))
        case .takeBack(let reactionID):
            // A redaction under the same transaction id rule: sent again, it is still one redaction.
            (target, content, relation) = ("\(room)/redact/\(Self.encode(reactionID))/\(Self.encode(message.key))", [:], .redacts(eventId: reactionID))
        }
        let body = (try? JSONSerialization.data(withJSONObject: content)) ?? Data()
        let sent: Sent = try await call("PUT", target, token: token, body: Array(body), timeout: deadline, refusals: true, via: sendConnection)
        var stored = UpstreamMessage(id: 0, chatId: message.chatId, sender: user, text: message.text, sentAt: message.writtenAt,
                                     eventId: sent.eventId, relation: relation, sendKey: message.key)
        stored.byAccount = true
        stored.threadRoot = message.threadRoot
        stored.senderName = state.withLock { $0.members.name(of: user, in: roomID) }
        stored.chatEncrypted = state.withLock { $0.members.isEncrypted(roomID) }
        return stored
    }

    // MARK: MediaSource

    /// Authenticated media (`/_matrix/client/v1/media/...`, spec v1.11) with the account's token:
    /// the file, or a thumbnail scaled to fit 320 x 240. The reference was checked on the way in
    /// (`MediaReference`), and each part goes into the path percent-encoded all the same.
    public func media(token: String, _ reference: MediaReference, thumbnail: Bool, maxBytes: Int) async throws(UpstreamError) -> FetchedMedia {
        let place = "\(Self.encode(reference.server))/\(Self.encode(reference.mediaID))"
        let target = thumbnail
            ? "/_matrix/client/v1/media/thumbnail/\(place)?width=320&height=240&method=scale"
            : "/_matrix/client/v1/media/download/\(place)"
        let response = try await exchange("GET", target, token: token, timeout: .seconds(60), accept: "*/*", maxBytes: maxBytes)
        // The https helper has no cap of its own: what it brought is measured here.
        guard response.body.count <= maxBytes else { throw .tooLarge(limit: maxBytes) }
        return FetchedMedia(contentType: response.headers["Content-Type"], body: response.body)
    }

    /// An answer whose content does not matter (`{}`).
    private struct EmptyAnswer: Decodable {}

    // MARK: OlderHistory

    public func olderHistory(token: String, before position: HistoryPosition, limit: Int) async throws(UpstreamError) -> OlderHistoryPage {
        let roomID = position.upstreamChat
        let page = try await page(of: roomID, from: position.token, to: nil, limit: limit, token: token)
        let chunk = page.chunk ?? []
        let translated: [UpstreamMessage] = state.withLock { state in
            // The senders' member events of this page say their names at the time; a name not
            // given is the one known now.
            var members = state.members
            for event in page.state ?? [] { members.learn(event, in: roomID) }
            let name = state.names.name(of: roomID, members: state.members.others(in: roomID, besides: user)) { members.name(of: $0, in: roomID) }
            let encrypted = state.members.isEncrypted(roomID) || chunk.contains { $0.type == "m.room.encryption" && $0.stateKey == "" }
            return chunk.compactMap { event -> UpstreamMessage? in
                guard var message = UpstreamMessage(event, roomID: roomID, roomName: name) else { return nil }
                message.senderName = members.name(of: message.sender, in: roomID)
                message.byAccount = message.sender == user
                if encrypted { message.chatEncrypted = true }
                return message
            }
        }
        let next = Self.nextPosition(after: page, from: position)
        return OlderHistoryPage(messages: translated, next: next, skipped: chunk.count - translated.count)
    }

    /// Where the page after `page` starts. The homeserver leaves `end` out at the room's first
    /// visible event; an empty page may still have an `end` (events hidden by history visibility),
    /// but one that names where it began would loop forever.
    static func nextPosition(after page: MessagesPage, from position: HistoryPosition) -> HistoryPosition? {
        guard let end = page.end, end != position.token else { return nil }
        var next = position
        next.token = end
        return next
    }

    public func purchaseStorage(token: String, bytes: Int64, idempotencyKey: String) async throws(UpstreamError) -> Int64 {
        throw .badResponse("a Matrix homeserver sells no storage")
    }

    // MARK: Gaps

    /// The events of `roomID` between `from` (a timeline's `prev_batch`) and `back` (the previous
    /// sync's position), oldest first, read backwards a page at a time.
    private func gap(in roomID: String, from: String, back: String, token: String) async throws(UpstreamError) -> [RoomEvent] {
        var newestFirst: [RoomEvent] = []
        var position = from
        while true {
            let page = try await page(of: roomID, from: position, to: back, limit: 500, token: token)
            let chunk = page.chunk ?? []
            newestFirst += chunk
            guard let end = page.end, !chunk.isEmpty, end != position else { break }
            position = end
        }
        log.info("filled a gap in \(roomID): \(newestFirst.count) event(s)")
        return newestFirst.reversed()
    }

    /// One page of `/messages` backwards from `from` (to `to`, when given): the one way gaps and
    /// history read a room. Members come lazily: those of the page's senders.
    private func page(of roomID: String, from: String, to: String?, limit: Int, token: String) async throws(UpstreamError) -> MessagesPage {
        var target = "/_matrix/client/v3/rooms/\(Self.encode(roomID))/messages?dir=b&limit=\(limit)&from=\(Self.encode(from))"
        if let to { target += "&to=" + Self.encode(to) }
        target += "&filter=" + Self.encode("{\"lazy_load_members\":true}")
        return try await call("GET", target, token: token)
    }

    // MARK: Plumbing

    private func loginBody(password: String, deviceID: String?) -> [UInt8] {
        var body: [String: Any] = [
            "type": "m.login.password",
            "identifier": ["type": "m.id.user", "user": user],
            "password": password,
            "initial_device_display_name": "Long-poll dashboard",
        ]
        if let deviceID { body["device_id"] = deviceID }
        return Array((try? JSONSerialization.data(withJSONObject: body)) ?? Data())
    }

    /// `https-fetch` in the folder of the running executable (the package's products share one).
    static func siblingHelper() -> String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("https-fetch").path
    }

    /// Percent-encodes a path segment or query value (room ids hold `!` and `:`, tokens anything).
    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// One call; every failure becomes an `UpstreamError` the engine decides on. The token travels
    /// in the header only, so the target (which is logged at trace level) never holds a secret;
    /// an answer that may hold one (a sign-in's token) is never quoted in an error's detail.
    private func call<Answer: Decodable>(_ method: String, _ target: String, token: String? = nil, body: [UInt8] = [],
                                         timeout: Duration = .seconds(15), refusalIsUnauthorized: Bool = false,
                                         answerHoldsSecrets: Bool = false, refusals: Bool = false,
                                         via connection: (any HomeserverConnection)? = nil) async throws(UpstreamError) -> Answer {
        try await call(method, target, token: token, body: body, timeout: timeout, refusalIsUnauthorized: refusalIsUnauthorized,
                       answerHoldsSecrets: answerHoldsSecrets, refusals: refusals, via: connection) { bytes in
            try JSONDecoder().decode(Answer.self, from: Data(bytes))
        }
    }

    /// A call whose answer is large (a sync, a page of history): parsed once into a JSON value.
    private func call<Answer: ReadFromJSON>(_ method: String, _ target: String, token: String? = nil,
                                            timeout: Duration = .seconds(15)) async throws(UpstreamError) -> Answer {
        try await call(method, target, token: token, timeout: timeout) { bytes in try Answer(jsonText: bytes) }
    }

    private func call<Answer>(_ method: String, _ target: String, token: String?, body: [UInt8] = [], timeout: Duration,
                              refusalIsUnauthorized: Bool = false, answerHoldsSecrets: Bool = false, refusals: Bool = false,
                              via connection: (any HomeserverConnection)? = nil,
                              reading read: ([UInt8]) throws -> Answer) async throws(UpstreamError) -> Answer {
        let response = try await exchange(method, target, token: token, body: body, timeout: timeout, refusalIsUnauthorized: refusalIsUnauthorized,
                                          refusals: refusals, via: connection)
        let path = target.prefix { $0 != "?" }
        do {
            return try read(response.body)
        } catch {
            if answerHoldsSecrets { throw .badResponse("\(method) \(path): not the JSON expected (\(response.body.count) bytes, not quoted)") }
            throw .badResponse("\(method) \(path): not the JSON expected (\(error)); body starts \(String(decoding: response.body.prefix(60), as: UTF8.self).debugDescription)")
        }
    }

    /// One request, its 2xx answer as it came; every other outcome an `UpstreamError`.
    /// `refusals`: a 403, 404 or 413 (`M_FORBIDDEN`, `M_NOT_FOUND`, `M_TOO_LARGE`) says the call
    /// will never succeed as it is (a send's refusals), in the homeserver's words.
    private func exchange(_ method: String, _ target: String, token: String?, body: [UInt8] = [], timeout: Duration,
                          refusalIsUnauthorized: Bool = false, refusals: Bool = false, accept: String = "application/json",
                          maxBytes: Int = 64 * 1024 * 1024, via connection: (any HomeserverConnection)? = nil) async throws(UpstreamError) -> HTTPClientResponse {
        var request = HTTPClientRequest(method: method, target: basePath + target, body: body, maxResponseBytes: maxBytes)
        request.headers.add("Accept", accept)
        if let token { request.headers.add("Authorization", "Bearer \(token)") }
        if !body.isEmpty { request.headers.add("Content-Type", "application/json") }
        let path = target.prefix { $0 != "?" }
        log.trace("-> \(method) \(path)")
        let response: HTTPClientResponse
        do {
            response = try await (connection ?? self.connection).send(request, timeout: timeout)
        } catch {
            log.debug("<- \(method) \(path) failed: \(error)")
            switch error {
            case .cancelled: throw .cancelled
            case .timedOut: throw .timedOut
            case .malformedResponse(let detail): throw .badResponse(detail)
            case .tooLarge(let limit): throw .tooLarge(limit: limit)
            case .resolution(let detail), .connect(let detail), .connectionLost(let detail): throw .unreachable(detail)
            }
        }
        log.trace("<- \(method) \(path) \(response.status)")
        if (200..<300).contains(response.status) { return response }
        let matrixError = try? JSONDecoder().decode(MatrixErrorBody.self, from: Data(response.body))
        let said = [matrixError?.errcode, matrixError?.error].compactMap { $0 }.joined(separator: ": ")
        switch response.status {
        case 401:
            throw .unauthorized
        case 403 where refusalIsUnauthorized:
            throw .unauthorized
        case 403 where refusals:
            throw .refused(SendRefusal(.forbidden, detail: matrixError?.error ?? said))
        case 404 where refusals:
            throw .refused(SendRefusal(.chatGone, detail: matrixError?.error ?? said))
        case 413 where refusals:
            throw .refused(SendRefusal(.tooLarge, detail: matrixError?.error ?? said))
        case 403:
            throw .forbidden("\(method) \(path)\(said.isEmpty ? "" : " (\(said))")")
        case 429:
            throw .rateLimited(retryAfter: RateLimitWait.duration(retryAfterHeader: response.headers["Retry-After"],
                                                                  retryAfterMs: matrixError?.retryAfterMs, nowSeconds: nowSeconds()))
        case 500...599:
            throw .serverError(status: response.status)
        default:
            throw .badResponse("\(method) \(path): status \(response.status)\(said.isEmpty ? "" : " (\(said))")")
        }
    }
}
