import Engine
import Foundation
import HTTPCore
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
        return StateSnapshot(
            epoch: services.feed.epoch,
            seq: seq,
            connection: await engine.connectionStatus(),
            accounts: accounts,
            storage: StorageBody(usage),
            errors: await services.registry.openErrors().map(ErrorBody.init),
            messages: messages
        )
    }
}

/// The JSON shape of `GET /api/state`.
struct StateSnapshot: Encodable, Sendable {
    struct Account: Encodable, Sendable {
        var userId: Int64
        var cursor: Int64?

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
    var messages: [String: [MessagePageBody.Message]]
}

