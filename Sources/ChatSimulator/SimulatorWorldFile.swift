import Foundation
import SQLite
import Upstream

/// The simulator's world in a SQLite file of its own: the accounts, every message with its id,
/// the quota and the purchases. With it, a restarted simulator goes on where it stopped, as a
/// real server that stayed up would, instead of numbering messages from 1 again below the
/// dashboard's cursor. Owned by the `ChatSimulator` actor; every change is one transaction.
final class SimulatorWorldFile {
    /// What the file holds.
    struct World {
        var primaryUserId: Int64
        var linkedUserId: Int64?
        var nextUserId: Int64
        var quota: Int64
        var purchaseCount: Int
        var purchases: [String: Int64]
        var messages: [Int64: [UpstreamMessage]]
        /// What each `Idempotency-Key` of `POST /v1/messages` stored: the user and the message id.
        var sends: [String: SentKey]
    }

    /// Where a sent message went.
    struct SentKey: Equatable {
        var user: Int64
        var id: Int64
    }

    private let connection: SQLiteConnection

    private static let schema = """
        CREATE TABLE IF NOT EXISTS world (key TEXT PRIMARY KEY, value INTEGER) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS messages (
            user_id INTEGER NOT NULL,
            id      INTEGER NOT NULL,
            chat_id INTEGER NOT NULL,
            sender  TEXT NOT NULL,
            text    TEXT NOT NULL,
            sent_at TEXT NOT NULL,
            PRIMARY KEY (user_id, id)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS purchases (key TEXT PRIMARY KEY, quota INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS sends (key TEXT PRIMARY KEY, user_id INTEGER NOT NULL, id INTEGER NOT NULL) WITHOUT ROWID;
        """

    init(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        connection = try SQLiteConnection(path: path)
        try connection.execute(Self.schema)
    }

    /// The world as stored, or nil for a new file.
    func load() throws -> World? {
        guard let primary = try connection.scalarInt("SELECT value FROM world WHERE key = 'primary_user_id'") else { return nil }
        var world = World(
            primaryUserId: primary,
            linkedUserId: try connection.scalarInt("SELECT value FROM world WHERE key = 'linked_user_id'"),
            nextUserId: try connection.scalarInt("SELECT value FROM world WHERE key = 'next_user_id'") ?? primary + 1,
            quota: try connection.scalarInt("SELECT value FROM world WHERE key = 'quota'") ?? 0,
            purchaseCount: Int(try connection.scalarInt("SELECT value FROM world WHERE key = 'purchase_count'") ?? 0),
            purchases: [:],
            messages: [:],
            sends: [:]
        )
        for (key, quota) in try connection.statement("SELECT key, quota FROM purchases").query(row: { ($0.string(at: 0), $0.int64(at: 1)) }) {
            world.purchases[key] = quota
        }
        for (key, user, id) in try connection.statement("SELECT key, user_id, id FROM sends").query(row: { ($0.string(at: 0), $0.int64(at: 1), $0.int64(at: 2)) }) {
            world.sends[key] = SentKey(user: user, id: id)
        }
        let rows = try connection.statement("""
            SELECT m.user_id, m.id, m.chat_id, m.sender, m.text, m.sent_at, s.key
            FROM messages m LEFT JOIN sends s ON s.user_id = m.user_id AND s.id = m.id ORDER BY m.user_id, m.id
            """)
        _ = try rows.query { row in
            let message = UpstreamMessage(id: row.int64(at: 1), chatId: row.int64(at: 2), sender: row.string(at: 3),
                                          text: row.string(at: 4), sentAt: row.string(at: 5), chatName: ChatSimulator.chatName(row.int64(at: 2)),
                                          sendKey: row.isNull(at: 6) ? nil : row.string(at: 6))
            world.messages[row.int64(at: 0), default: []].append(message)
        }
        return world
    }

    /// Stores the accounts, quota and purchase count (everything but messages and purchase keys).
    func saveSettings(primaryUserId: Int64, linkedUserId: Int64?, nextUserId: Int64, quota: Int64, purchaseCount: Int) throws {
        try connection.transaction {
            let upsert = try connection.statement("INSERT INTO world (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            try upsert.run("primary_user_id", .integer(primaryUserId))
            try upsert.run("linked_user_id", linkedUserId.map { .integer($0) } ?? .null)
            try upsert.run("next_user_id", .integer(nextUserId))
            try upsert.run("quota", .integer(quota))
            try upsert.run("purchase_count", .integer(Int64(purchaseCount)))
        }
    }

    func append(_ messages: [UpstreamMessage], user: Int64) throws {
        try connection.transaction {
            let insert = try connection.statement("INSERT INTO messages (user_id, id, chat_id, sender, text, sent_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            for message in messages {
                try insert.run(.integer(user), .integer(message.id), .integer(message.chatId), .text(message.sender), .text(message.text),
                               .text(message.sentAt))
            }
        }
    }

    /// A message the account sent, with the key it came under, in one transaction.
    func recordSend(_ message: UpstreamMessage, key: String, user: Int64) throws {
        try connection.transaction {
            try connection.statement("INSERT INTO messages (user_id, id, chat_id, sender, text, sent_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
                .run(.integer(user), .integer(message.id), .integer(message.chatId), .text(message.sender), .text(message.text), .text(message.sentAt))
            try connection.statement("INSERT INTO sends (key, user_id, id) VALUES (?1, ?2, ?3)").run(.text(key), .integer(user), .integer(message.id))
        }
    }

    func recordPurchase(key: String, quota: Int64) throws {
        try connection.statement("INSERT OR REPLACE INTO purchases (key, quota) VALUES (?1, ?2)").run(.text(key), .integer(quota))
    }

    func close() {
        connection.close()
    }
}
