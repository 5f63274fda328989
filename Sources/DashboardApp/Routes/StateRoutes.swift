import Engine
import Foundation
import Upstream
import HTTPCore
import Recovery
import Store

/// `GET /api/state` (the snapshot) and the engine controls `POST /api/engine/{start,stop,retry-now}`.
struct StateRoutes {
    let services: DashboardServices
    private var store: MessageStore { services.store }
    private var engine: SyncEngine { services.engine }

    /// Messages per account in the snapshot.
    static let snapshotMessages = 50

    func register(in router: inout Router) {
        router.add("GET", "/api/state") { _, _, _ in
            try JSONResponse.make(try await snapshot(), dates: true)
        }
        router.add("POST", "/api/engine/start") { _, _, _ in
            await engine.start()
            return try JSONResponse.make(["accepted": true], status: .accepted)
        }
        router.add("POST", "/api/engine/stop") { _, _, _ in
            await engine.stop()
            return try JSONResponse.make(["accepted": true], status: .accepted)
        }
        router.add("POST", "/api/engine/retry-now") { _, _, _ in
            await engine.retryNow()
            return try JSONResponse.make(["accepted": true], status: .accepted)
        }
    }

    func snapshot() async throws -> StateSnapshot {
        // The seq before the state: an event published meanwhile is then delivered again (the page
        // keys messages by id), never lost.
        let seq = await services.feed.currentSeq
        let ids = try await store.accountIDs()
        var accounts = StateSnapshot.Accounts()
        var messages: [String: [MessagePageBody.Message]] = [:]
        for role in AccountRole.allCases {
            if let userID = role == .primary ? ids.primaryUserId : ids.linkedUserId {
                let account = StateSnapshot.Account(userId: userID, cursor: await store.cursor(for: role))
                if role == .primary { accounts.primary = account } else { accounts.linked = account }
            }
            messages[role.description] = MessagePageBody(try await store.messages(of: role, limit: Self.snapshotMessages)).messages
        }
        let usage = await store.storageUsage()
        let history = try await store.historyProgress(of: .primary)
        let running = await services.registry.runningAttempts()
        let openErrors = await services.registry.openErrors()
        let outbox = OutboxEntryBody.list(await services.outboxes.asTheyStand(try await store.outbox()), openErrors: openErrors)
        return StateSnapshot(
            epoch: services.feed.epoch,
            seq: seq,
            connection: await engine.connectionStatus(),
            accounts: accounts,
            storage: StorageBody(usage),
            errors: openErrors.map { ErrorBody($0, running: running[$0.id]) },
            recentProblems: await services.registry.recentProblems().map(ProblemRecordBody.init),
            messages: messages,
            history: HistoryBody(account: .primary, progress: history ?? HistoryProgress(),
                                 // An upstream with older history has not said where it starts before its first sync.
                                 known: history != nil || services.history == nil),
            canSend: services.outboxes.canSend,
            outbox: outbox
        )
    }
}

/// The JSON shape of `GET /api/state`.
struct StateSnapshot: Encodable, Sendable {
    struct Account: Encodable, Sendable {
        var userId: Int64
        var cursor: String?

        enum CodingKeys: String, CodingKey { case userId, cursor }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(userId, forKey: .userId)
            try container.encode(cursor, forKey: .cursor)
        }
    }

    /// Both keys always present; null for an account that is not there.
    struct Accounts: Encodable, Sendable {
        var primary: Account?
        var linked: Account?

        enum CodingKeys: String, CodingKey { case primary, linked }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(primary, forKey: .primary)
            try container.encode(linked, forKey: .linked)
        }
    }

    var epoch: String
    var seq: Int
    var connection: ConnectionStatus
    var accounts: Accounts
    var storage: StorageBody
    var errors: [ErrorBody]
    var recentProblems: [ProblemRecordBody]
    var messages: [String: [MessagePageBody.Message]]
    /// How far fetching older history is (complete, and nothing fetched, for an upstream without it).
    var history: HistoryBody
    /// Whether the upstream takes messages written here (CONTRACT section 11).
    var canSend: Bool
    /// What is not sent yet, oldest first, as `GET /api/outbox` gives it.
    var outbox: [OutboxEntryBody]
}

/// An entry of the "Recent problems" list: an error, open or resolved, and its attempts.
struct ProblemRecordBody: Encodable, Sendable {
    struct Attempt: Encodable, Sendable {
        var option: String
        var title: String
        var status: String
        var at: String
        var reason: String?
        var summary: String?
    }

    var id: String
    var type: String
    var title: String
    var raisedAt: String
    var resolvedAt: String?
    var attempts: [Attempt]

    init(_ record: ProblemRecord) {
        id = record.errorID
        type = record.kind.rawValue
        title = record.title
        raisedAt = Timestamp.string(record.raisedAt)
        resolvedAt = record.resolvedAt.map(Timestamp.string)
        attempts = record.attempts.map {
            Attempt(option: $0.optionID.rawValue, title: $0.optionTitle, status: $0.status.rawValue, at: Timestamp.string($0.at), reason: $0.reason,
                    summary: $0.summary)
        }
    }

    enum CodingKeys: String, CodingKey { case id, type, title, raisedAt, resolvedAt, attempts }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(title, forKey: .title)
        try container.encode(raisedAt, forKey: .raisedAt)
        try container.encode(resolvedAt, forKey: .resolvedAt)
        try container.encode(attempts, forKey: .attempts)
    }
}

