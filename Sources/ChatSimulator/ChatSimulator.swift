import Foundation
import HTTPCore
import Logging
import Upstream

/// A chat server for demos and tests: CONTRACT section 3 plus the `/sim/*` control API.
/// An actor: accounts, tokens, held polls and faults change only here, one call at a time.
public actor ChatSimulator {
    /// The simulated account's chats, by id from 1: every message goes to one of them, and its
    /// answers carry the name (`chatName`), so the dashboard's chat list reads like a person's.
    public static let chatNames = DemoWorld.chats.map(\.name)

    public static func chatName(_ chatId: Int64) -> String? {
        DemoWorld.name(of: chatId)
    }

    /// What an upstream call turns into: an answer now, or a poll to hold.
    enum Outcome: Sendable {
        case respond(HTTPResponse)
        case hold(HeldResponse)
    }

    private struct HeldPoll {
        var token: String
        var primaryAfter: Int64
        var linkedAfter: Int64?
        var held: HeldResponse
        /// The connection it came on, cut when the simulated network goes offline.
        var connection: UInt64
        /// When it is answered with nothing (`{}`) if no message came.
        var deadline: ContinuousClock.Instant
    }

    public let configuration: SimulatorConfiguration
    /// The answers its faults cut (`offline`, `drop`), for the server it answers on.
    public nonisolated let wireFaults = WireFaults()
    private var random: SeededGenerator
    private let primaryUserId: Int64
    private let log = Logger("simulator")
    private(set) var linkedUserId: Int64?
    private var nextUserId: Int64
    private var messagesByUser: [Int64: [UpstreamMessage]] = [:]
    /// The JSON of each message, made once at publish time, in the same order as `messagesByUser`.
    private var fragmentsByUser: [Int64: [[UInt8]]] = [:]
    private var tokens: Set<String> = []
    private var polls: [UInt64: HeldPoll] = [:]
    /// One task ends the held polls whose hold is over, sleeping until the earliest deadline: a
    /// timer task per poll, made and cancelled for every message, was 6 % of the CPU per message.
    private var holdExpiry: (task: Task<Void, Never>, at: ContinuousClock.Instant)?
    private var nextPollID: UInt64 = 1
    private(set) var faults = FaultSettings()
    private(set) var quota: Int64
    private var purchases: [String: Int64] = [:]
    private var purchaseCount = 0
    /// Every `Idempotency-Key` of `POST /v1/messages` and what it stored, kept with the world, so
    /// the same key again answers the same id, across restarts too.
    private var sends: [String: SimulatorWorldFile.SentKey] = [:]
    private var autoTask: Task<Void, Never>?
    private var autoRate: Double = 0
    private var statistics = SimulatorStatistics()
    /// Where the world is kept across restarts; nil keeps it in memory only.
    private let worldFile: SimulatorWorldFile?
    /// Told whenever a setting changes (faults, the automatic rate, the linked account, the quota),
    /// so every window of the dashboard shows the simulator as it is.
    private let settingsSink: AsyncStream<SimulatorStatistics>.Continuation

    public init(configuration: SimulatorConfiguration = SimulatorConfiguration()) {
        self.configuration = configuration
        (settingsChanges, settingsSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        random = SeededGenerator(seed: configuration.seed)
        primaryUserId = configuration.primaryUserId
        nextUserId = configuration.primaryUserId + 1
        quota = configuration.storageQuotaBytes
        worldFile = nil
        if configuration.linkedAtStart {
            linkedUserId = nextUserId
            nextUserId += 1
        }
    }

    /// A simulator whose world lives in the SQLite file at `dataPath`: a new file starts from
    /// `configuration`; an existing one goes on with its accounts, messages, quota and purchases.
    public init(configuration: SimulatorConfiguration = SimulatorConfiguration(), dataPath: String) throws {
        let file = try SimulatorWorldFile(path: dataPath)
        self.configuration = configuration
        (settingsChanges, settingsSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        random = SeededGenerator(seed: configuration.seed)
        worldFile = file
        if let world = try file.load() {
            primaryUserId = world.primaryUserId
            linkedUserId = world.linkedUserId
            nextUserId = world.nextUserId
            quota = world.quota
            purchases = world.purchases
            sends = world.sends
            purchaseCount = world.purchaseCount
            for (user, messages) in world.messages {
                messagesByUser[user] = messages
                fragmentsByUser[user] = messages.map(AnswerJSON.fragment)
            }
        } else {
            primaryUserId = configuration.primaryUserId
            nextUserId = configuration.primaryUserId + 1
            quota = configuration.storageQuotaBytes
            if configuration.linkedAtStart {
                linkedUserId = nextUserId
                nextUserId += 1
            }
            try file.saveSettings(primaryUserId: primaryUserId, linkedUserId: linkedUserId, nextUserId: nextUserId, quota: quota,
                                  purchaseCount: purchaseCount)
            if configuration.demo {
                // A new demo world has a short history in its chats, as an account someone uses would.
                for user in [primaryUserId, linkedUserId].compactMap({ $0 }) {
                    let history = DemoWorld.history(endingAt: Date(), using: &random)
                    try file.append(history, user: user)
                    messagesByUser[user] = history
                    fragmentsByUser[user] = history.map(AnswerJSON.fragment)
                }
            }
        }
    }

    /// With `configuration.demo`, a message now and then by itself (`DemoWorld.messagesPerSecond`).
    public func startDemo() {
        guard configuration.demo, autoRate == 0 else { return }
        setAutoRate(DemoWorld.messagesPerSecond)
    }

    /// The simulator's settings after every change, in order; one who reads late gets the newest
    /// (each is whole, so a skipped one is never missed). For one reader.
    public nonisolated let settingsChanges: AsyncStream<SimulatorStatistics>

    private func settingsChanged() {
        settingsSink.yield(stats())
    }

    /// Writes the accounts, quota and purchase count to the world file, if there is one.
    private func keepSettings() {
        do {
            try worldFile?.saveSettings(primaryUserId: primaryUserId, linkedUserId: linkedUserId, nextUserId: nextUserId, quota: quota,
                                        purchaseCount: purchaseCount)
        } catch {
            log.error("cannot keep the simulator's settings: \(error)")
        }
    }

    /// Closes the world file (everything is committed already).
    public func close() {
        settingsSink.finish()
        worldFile?.close()
    }

    // MARK: Faults

    /// Decides, with the seeded generator, whether the current fault strikes this upstream call
    /// (counted in `upstreamCalls`, whatever the answer).
    func drawFault(isPurchase: Bool, isSend: Bool = false, path: Substring = "") -> FaultMode {
        statistics.upstreamCalls += 1
        guard faults.mode != .none else { return .none }
        if faults.mode == .decline && !isPurchase { return .none }
        if faults.mode == .refuseSend && !isSend { return .none }
        if faults.mode == .unauthorized && path == "/v1/session" { return .none }
        if faults.mode == .conflict && (path != "/v1/messages" || isSend) { return .none }
        guard Double.random(in: 0..<1, using: &random) < faults.rate else { return .none }
        statistics.faultsInjected += 1
        return faults.mode
    }

    /// How long the `slow` fault delays an answer now.
    var slowDelay: Duration {
        faults.delay ?? configuration.slowDelay
    }

    func truncationPoint(for response: HTTPResponse) -> Int {
        Int.random(in: 1...max(1, response.body.count + 60), using: &random)
    }

    func useMalformedPage() -> Bool {
        Bool.random(using: &random)
    }

    // MARK: Upstream calls (`/v1/...`)

    /// Answers an upstream call. With `mayHold` false a poll with nothing new is answered at
    /// once instead of held: a fault that spoils answers shows on the next poll, not at the end
    /// of a 25-second hold.
    func upstream(_ request: HTTPRequest, connection: UInt64, mayHold: Bool = true) -> Outcome {
        switch (request.method, String(request.path)) {
        case ("POST", "/v1/session"):
            return .respond(createSession())
        case ("GET", "/v1/last-message-info"):
            guard authorized(request) != nil else { return .respond(Self.error(.unauthorized, "token expired")) }
            return .respond(Self.json(LastMessageInfo(primaryLastId: lastID(of: primaryUserId),
                                                      linkedLastId: linkedUserId.map(lastID(of:)))))
        case ("GET", "/v1/messages"):
            return messages(request, connection: connection, mayHold: mayHold)
        case ("POST", "/v1/storage/purchase"):
            return .respond(purchase(request, declined: false))
        case ("POST", "/v1/messages"):
            return .respond(send(request, refused: false))
        default:
            return .respond(Self.error(.notFound, "no such upstream call"))
        }
    }

    func declinedPurchase(_ request: HTTPRequest) -> HTTPResponse {
        purchase(request, declined: true)
    }

    /// A send under the `refuse-send` fault: 403, unless the key was answered before.
    func refusedSend(_ request: HTTPRequest) -> HTTPResponse {
        send(request, refused: true)
    }

    /// The most text `POST /v1/messages` takes, in UTF-8 bytes.
    public static let maximumSentTextBytes = 32_000

    /// `POST /v1/messages` (CONTRACT section 11): `{"userId", "chatId", "text"}` under an
    /// `Idempotency-Key` -> `{"id"}`. The message goes into the user's stream as any other (its
    /// sender ``UpstreamMessage/ownSender``, its key beside it), so the next poll brings it back.
    private func send(_ request: HTTPRequest, refused: Bool) -> HTTPResponse {
        guard authorized(request) != nil else { return Self.error(.unauthorized, "token expired") }
        guard let key = request.headers["Idempotency-Key"], !key.isEmpty, key.utf8.count <= 200 else {
            return Self.error(.badRequest, "Idempotency-Key is required")
        }
        struct Body: Decodable { var userId: Int64; var chatId: Int64; var text: String }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            return Self.error(.badRequest, "body must be {\"userId\": n, \"chatId\": n, \"text\": s}")
        }
        struct Answer: Encodable { var id: Int64 }
        if let earlier = sends[key] {
            return Self.json(Answer(id: earlier.id))
        }
        if refused {
            return Self.error(HTTPStatus(code: 403), "injected: this account may not write in this chat")
        }
        guard body.userId == primaryUserId || body.userId == linkedUserId else {
            return Self.error(HTTPStatus(code: 403), "user \(body.userId) is not signed in here")
        }
        guard (1...Int64(Self.chatNames.count)).contains(body.chatId) else {
            return Self.error(HTTPStatus(code: 403), "user \(body.userId) is not in chat \(body.chatId)")
        }
        guard body.text.utf8.count <= Self.maximumSentTextBytes else {
            return Self.error(HTTPStatus(code: 413), "a message may hold at most \(Self.maximumSentTextBytes) bytes")
        }
        var list = messagesByUser.removeValue(forKey: body.userId) ?? []
        let message = UpstreamMessage(id: Int64(list.count + 1), chatId: body.chatId, sender: UpstreamMessage.ownSender, text: body.text,
                                      sentAt: Timestamp.string(Date()), chatName: Self.chatName(body.chatId), sendKey: key)
        do {
            try worldFile?.recordSend(message, key: key, user: body.userId)
        } catch {
            messagesByUser[body.userId] = list
            log.error("cannot keep a sent message: \(error)")
            return Self.error(.internalServerError, "the message could not be kept")
        }
        list.append(message)
        messagesByUser[body.userId] = list
        fragmentsByUser[body.userId, default: []].append(AnswerJSON.fragment(message))
        sends[key] = SimulatorWorldFile.SentKey(user: body.userId, id: message.id)
        statistics.sentToChats += 1
        wakePolls()
        return Self.json(Answer(id: message.id))
    }

    /// What the accounts wrote into chats through `POST /v1/messages`, in the order each
    /// account's stream has them (the panel shows the newest), each with the user it was written
    /// as; a linked account detached since is `detached`.
    public func written() -> [WrittenBody.Message] {
        let current = [primaryUserId] + (linkedUserId.map { [$0] } ?? [])
        let former = messagesByUser.keys.filter { !current.contains($0) }.sorted()
        return (current + former).flatMap { user -> [WrittenBody.Message] in
            let account = user == primaryUserId ? "primary" : user == linkedUserId ? "linked" : "detached"
            return (messagesByUser[user] ?? []).filter { $0.sendKey != nil }.map {
                WrittenBody.Message(account: account, userId: user, id: $0.id, chatId: $0.chatId, chatName: $0.chatName, text: $0.text, sentAt: $0.sentAt)
            }
        }
    }

    private func createSession() -> HTTPResponse {
        let token = String(random.next(), radix: 16) + String(random.next(), radix: 16)
        tokens.insert(token)
        statistics.sessions += 1
        return Self.json(UpstreamSession(token: token, primaryUserId: primaryUserId, linkedUserId: linkedUserId,
                                         storageQuotaBytes: quota))
    }

    private func authorized(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["Authorization"], header.hasPrefix("Bearer ") else { return nil }
        let token = String(header.dropFirst("Bearer ".count))
        return tokens.contains(token) ? token : nil
    }

    private func messages(_ request: HTTPRequest, connection: UInt64, mayHold: Bool) -> Outcome {
        guard let token = authorized(request) else { return .respond(Self.error(.unauthorized, "token expired")) }
        guard let primaryAfter = Int64(request.queryValue("primaryAfter") ?? "0") else {
            return .respond(Self.error(.badRequest, "primaryAfter must be an id"))
        }
        let linkedAfter = request.queryValue("linkedAfter").flatMap { Int64($0) }
        let holdSeconds = min(60, max(0, Int(request.queryValue("timeout") ?? "25") ?? 25))
        statistics.polls += 1

        // As Telegram's getUpdates: a newer poll with the same token ends the older one with 409.
        for (id, poll) in polls where poll.token == token {
            finishPoll(id, with: Self.error(.conflict, "another poller took over"))
        }
        if let batch = available(after: primaryAfter, linkedAfter: linkedAfter) {
            return .respond(batch)
        }
        guard mayHold else { return .respond(Self.json(MessagesAnswer(messages: [:]))) }
        let id = nextPollID
        nextPollID += 1
        let hold = min(Duration.seconds(holdSeconds), configuration.maxHold)
        let held = HeldResponse(onAbandoned: { [weak self] _ in
            Task { await self?.forgetPoll(id) }
        })
        let deadline = ContinuousClock.now + hold
        polls[id] = HeldPoll(token: token, primaryAfter: primaryAfter, linkedAfter: linkedAfter, held: held, connection: connection, deadline: deadline)
        expireHolds(at: deadline)
        return .hold(held)
    }

    /// The answer with the messages after the cursors, at most `maxBatch` per account; nil when there are none.
    private func available(after primaryAfter: Int64, linkedAfter: Int64?) -> HTTPResponse? {
        var streams: [(user: Int64, fragments: ArraySlice<[UInt8]>)] = []
        let primary = slice(of: primaryUserId, after: primaryAfter)
        if !primary.isEmpty { streams.append((primaryUserId, primary)) }
        if let linkedUserId, let linkedAfter {
            let linked = slice(of: linkedUserId, after: linkedAfter)
            if !linked.isEmpty { streams.append((linkedUserId, linked)) }
        }
        guard !streams.isEmpty else { return nil }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: AnswerJSON.answer(streams))
    }

    private func slice(of user: Int64, after: Int64) -> ArraySlice<[UInt8]> {
        let all = fragmentsByUser[user] ?? []
        // Ids are 1, 2, 3, ... per user, so the message with id n sits at index n - 1.
        let start = Int(max(0, min(after, Int64(all.count))))
        return all[start..<min(all.count, start + configuration.maxBatch)]
    }

    private func lastID(of user: Int64) -> Int64 {
        messagesByUser[user]?.last?.id ?? 0
    }

    private func finishPoll(_ id: UInt64, with response: HTTPResponse) {
        guard let poll = polls.removeValue(forKey: id) else { return }
        poll.held.complete(with: response)
    }

    private func forgetPoll(_ id: UInt64) {
        polls.removeValue(forKey: id)
    }

    /// Makes sure the expiry task wakes by `deadline` (holds are of equal length, so a new poll's
    /// deadline is seldom the earliest and the task sleeps on).
    private func expireHolds(at deadline: ContinuousClock.Instant) {
        if let current = holdExpiry, current.at <= deadline { return }
        holdExpiry?.task.cancel()
        let task = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self?.endHoldsThatAreOver()
        }
        holdExpiry = (task, deadline)
    }

    private func endHoldsThatAreOver() {
        holdExpiry = nil
        let now = ContinuousClock.now
        for (id, poll) in polls where poll.deadline <= now {
            finishPoll(id, with: Self.json(MessagesAnswer(messages: [:])))
        }
        if let next = polls.values.map(\.deadline).min() {
            expireHolds(at: next)
        }
    }

    private func wakePolls() {
        for (id, poll) in polls {
            if let batch = available(after: poll.primaryAfter, linkedAfter: poll.linkedAfter) {
                finishPoll(id, with: batch)
            }
        }
    }

    private func purchase(_ request: HTTPRequest, declined: Bool) -> HTTPResponse {
        guard authorized(request) != nil else { return Self.error(.unauthorized, "token expired") }
        guard let key = request.headers["Idempotency-Key"], !key.isEmpty else {
            return Self.error(.badRequest, "Idempotency-Key is required")
        }
        struct Body: Decodable { var bytes: Int64 }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)), body.bytes > 0 else {
            return Self.error(.badRequest, "body must be {\"bytes\": n} with n > 0")
        }
        struct Answer: Encodable { var storageQuotaBytes: Int64 }
        if let answered = purchases[key] {
            return Self.json(Answer(storageQuotaBytes: answered))
        }
        if declined {
            return Self.error(HTTPStatus(code: 402), "payment declined")
        }
        quota += body.bytes
        purchases[key] = quota
        purchaseCount += 1
        do {
            try worldFile?.recordPurchase(key: key, quota: quota)
        } catch {
            log.error("cannot keep the purchase: \(error)")
        }
        keepSettings()
        return Self.json(Answer(storageQuotaBytes: quota))
    }

    // MARK: Control (see SimulatorControl)

    /// Publishes `count` messages; nil when the account does not exist. Returns their ids.
    @discardableResult
    public func publish(account: String, count: Int, text: String? = nil) -> [Int64]? {
        let user: Int64
        switch account {
        case "primary": user = primaryUserId
        case "linked":
            guard let linkedUserId else { return nil }
            user = linkedUserId
        default: return nil
        }
        var list = messagesByUser.removeValue(forKey: user) ?? []  // taken out, so appending copies nothing
        var fragments = fragmentsByUser.removeValue(forKey: user) ?? []
        let sentAt = Timestamp.string(Date())
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        let firstNew = list.count
        for _ in 0..<count {
            let id = Int64(list.count + 1)
            let chatId = Int64.random(in: 1...Int64(Self.chatNames.count), using: &random)
            let sender = DemoWorld.sender(in: chatId, using: &random)
            // The demo says what people say; otherwise each message names itself, for tests to find.
            let words = text ?? (configuration.demo ? DemoWorld.line(in: chatId, using: &random) : "Message \(id) for \(account)")
            let message = UpstreamMessage(id: id, chatId: chatId, sender: sender, text: words, sentAt: sentAt, chatName: Self.chatName(chatId))
            list.append(message)
            fragments.append(AnswerJSON.fragment(message))
            ids.append(id)
        }
        do {
            try worldFile?.append(Array(list[firstNew...]), user: user)
        } catch {
            log.error("cannot keep \(count) published message(s): \(error)")
        }
        messagesByUser[user] = list
        fragmentsByUser[user] = fragments
        statistics.published += count
        wakePolls()
        return ids
    }

    public func setFaults(_ settings: FaultSettings) {
        faults = settings
        if settings.mode == .offline {
            for (id, poll) in polls {
                wireFaults.cutNextAnswer(on: poll.connection, .beforeAnswer)
                finishPoll(id, with: Self.json(MessagesAnswer(messages: [:])))
            }
        } else if settings.mode != .none && settings.mode != .decline {
            // A fault takes effect now, not when the held poll would have ended by itself: the
            // poll is answered with nothing new, and the next one meets the fault.
            for id in Array(polls.keys) {
                finishPoll(id, with: Self.json(MessagesAnswer(messages: [:])))
            }
        }
        settingsChanged()
    }

    /// Attaches a linked account (with a new user id) or detaches it; either way the current
    /// tokens expire, so the next session answer tells the engine at once.
    public func setLinked(_ linked: Bool) {
        if linked, linkedUserId == nil {
            linkedUserId = nextUserId
            nextUserId += 1
        } else if !linked {
            linkedUserId = nil
        }
        keepSettings()
        expireTokens()
        settingsChanged()
    }

    /// Sets the quota the next session announces; the token expires, so the engine asks at once.
    public func setQuota(_ bytes: Int64) {
        quota = bytes
        keepSettings()
        expireTokens()
        settingsChanged()
    }

    public func expireTokens() {
        tokens.removeAll()
        for id in Array(polls.keys) {
            finishPoll(id, with: Self.error(.unauthorized, "token expired"))
        }
    }

    public func setAutoRate(_ perSecond: Double) {
        autoTask?.cancel()
        autoTask = nil
        autoRate = perSecond
        settingsChanged()
        guard perSecond > 0 else { return }
        // At most one tick an hour: a rate like 1e-300 must not overflow the sleep (found by schemathesis).
        let interval = min(3600, max(0.01, 1 / perSecond))
        let perTick = max(1, Int((perSecond * interval).rounded()))
        let pause = Duration.seconds(interval)
        autoTask = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: pause)
                guard let self, !Task.isCancelled else { return }
                await self.publishAutomatically(perTick)
            }
        }
    }

    private func publishAutomatically(_ count: Int) {
        let account = linkedUserId != nil && Bool.random(using: &random) ? "linked" : "primary"
        publish(account: account, count: count)
    }

    /// Every id published so far, per account (the linked list is the current linked user's).
    public func sent() -> SentBody {
        SentBody(primary: (messagesByUser[primaryUserId] ?? []).map(\.id),
                 linked: linkedUserId.map { (messagesByUser[$0] ?? []).map(\.id) } ?? [])
    }

    public func stats() -> SimulatorStatistics {
        var snapshot = statistics
        snapshot.purchases = purchaseCount
        snapshot.quotaBytes = quota
        snapshot.heldPolls = polls.count
        snapshot.linkedUserId = linkedUserId
        snapshot.faultMode = faults.mode
        snapshot.faultRate = faults.rate
        snapshot.autoPerSecond = autoRate
        return snapshot
    }

    // MARK: JSON

    static func json<Value: Encodable>(_ value: Value, status: HTTPStatus = .ok) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let body = (try? encoder.encode(value)).map(Array.init) ?? Array("{}".utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }

    static func error(_ status: HTTPStatus, _ message: String) -> HTTPResponse {
        json(["error": message], status: status)
    }

}

/// `GET /sim/written`: `{"messages": [{"account", "userId", "id", "chatId", "chatName", "text", "sentAt"}]}`.
public struct WrittenBody: Codable, Sendable, Equatable {
    public struct Message: Codable, Sendable, Equatable {
        /// `primary`, `linked`, or `detached` (a linked account detached since).
        public var account: String
        /// The user it was written as.
        public var userId: Int64
        public var id: Int64
        public var chatId: Int64
        public var chatName: String?
        public var text: String
        public var sentAt: String
    }

    public var messages: [Message]
}

public struct SentBody: Codable, Sendable, Equatable {
    public var primary: [Int64]
    public var linked: [Int64]
}

struct FaultsBody: Codable, Sendable {
    var mode: FaultMode
    var rate: Double
    var delayMs: Int?
}

/// Counters for tests and the curious (`GET /sim/stats`).
public struct SimulatorStatistics: Codable, Sendable {
    public var sessions = 0
    /// Every `/v1/...` call received, answered or failed by a fault.
    public var upstreamCalls = 0
    public var polls = 0
    public var published = 0
    public var faultsInjected = 0
    public var purchases = 0
    /// Messages the accounts sent into chats (`POST /v1/messages`), each key counted once.
    public var sentToChats = 0
    public var quotaBytes: Int64 = 0
    public var heldPolls = 0
    public var linkedUserId: Int64?
    public var faultMode: FaultMode = .none
    public var faultRate: Double = 1
    /// Messages generated per second in the background (`/sim/auto`); 0 when off.
    public var autoPerSecond: Double = 0
}
