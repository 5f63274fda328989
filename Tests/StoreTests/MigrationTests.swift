import Foundation
import SQLite
import Testing
@testable import Store

@Suite("Schema migrations")
struct MigrationTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    @Test func anEmptyFileIsBroughtToTheLatestVersion() async throws {
        let path = folder.path + "/empty.sqlite"
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let store = try MessageStore(location: .file(path))
        #expect(try await store.scalarForTesting("PRAGMA user_version") == Int64(Migrations.latestVersion))
        #expect(try await store.integrityCheck())
    }

    /// A file left at `version` with two messages per account in it, as that version would have stored them.
    private func file(atVersion version: Int) throws -> String {
        let path = folder.path + "/v\(version).sqlite"
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, to: version)
        if version >= 1 {
            for (account, id) in [(0, 1), (0, 2), (1, 10), (1, 11)] as [(Int64, Int64)] {
                try connection.statement("""
                    INSERT INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size)
                    VALUES (?, ?, 5, 'old', 'from an older version', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', 100)
                    """).run(.integer(account), .integer(id))
            }
            if version >= 5 {
                try connection.statement("INSERT INTO cursors (account, position, newest_id) VALUES (0, '2', 2), (1, '11', 11)").run()
            } else {
                try connection.statement("INSERT INTO cursors (account, last_id) VALUES (0, 2), (1, 11)").run()
            }
        }
        if version >= 8 {
            try connection.statement("""
                INSERT INTO chats (account, chat_id, message_count, last_message_id, last_message_at)
                VALUES (0, 5, 2, 2, '2026-01-01T00:00:00.000Z'), (1, 5, 2, 11, '2026-01-01T00:00:00.000Z')
                """).run()
        } else if version >= 2 {
            try connection.statement("INSERT INTO chats (account, chat_id, message_count, last_message_id) VALUES (0, 5, 2, 2), (1, 5, 2, 11)").run()
        }
        if version >= 3 {
            try connection.execute("UPDATE settings SET value = 400 WHERE key = 'used_bytes'")  // kept incrementally from version 3 on
        }
        connection.close()
        return path
    }

    @Test(arguments: Array(1..<Migrations.latestVersion))
    func anOlderVersionIsUpgradedWithItsDataIntact(_ version: Int) async throws {
        let store = try MessageStore(location: .file(try file(atVersion: version)))
        #expect(try await store.scalarForTesting("PRAGMA user_version") == Int64(Migrations.latestVersion))
        #expect(try await store.allIDs(.primary) == [1, 2])
        #expect(try await store.allIDs(.linked) == [10, 11])
        #expect(await store.cursor(for: .linked) == "11", "an integer cursor becomes its text")
        #expect(try await store.scalarForTesting("SELECT count(*) FROM messages WHERE event_id IS NOT NULL") == 0)
        #expect(await store.newestID(for: .linked) == 11)
        let chats = try await store.chats(of: .primary)
        #expect(chats.count == 1 && chats[0].messageCount == 2 && chats[0].lastMessageId == 2, "chats filled from the messages")
        #expect(chats[0].lastMessageAt == "2026-01-01T00:00:00.000Z" && chats[0].unread == 0, "old messages are not news")
        #expect(await store.storageUsage() == StorageUsage(usedBytes: 400, quotaBytes: nil), "usage counted from the messages")
        #expect(try await store.apply(messages([3]), to: .primary, receivedAt: now).count == 1)
        #expect(try await store.integrityCheck())
    }

    /// A store the dashboard itself wrote before cursors were opaque (schema 4): 12 primary and 7
    /// linked messages synced from the built-in simulator, then a clean stop.
    @Test func aStoreMadeByTheVersionWithIntegerCursorsOpensUpgradedInPlace() async throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/store-v4-made-by-0c83f30.sqlite").path
        let path = folder.path + "/store.sqlite"
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        let before = try SQLiteConnection(path: path)
        #expect(try Migrations.version(of: before) == 4)
        before.close()

        let store = try MessageStore(location: .file(path))
        #expect(try await store.scalarForTesting("PRAGMA user_version") == Int64(Migrations.latestVersion))
        #expect(await store.cursor(for: .primary) == "12")
        #expect(await store.cursor(for: .linked) == "7")
        #expect(await store.newestID(for: .primary) == 12)
        #expect(try await store.allIDs(.primary) == Array(1...12))
        #expect(try await store.allIDs(.linked) == Array(1...7))
        #expect(await store.storageUsage().usedBytes == (try await store.scannedUsage()))
        #expect(try await store.integrityCheck())
        // And it goes on from there, with a cursor the upstream gives.
        #expect(try await store.apply(messages([13]), to: .primary, receivedAt: now, cursor: "13").count == 1)
        await store.close()
        let reopened = try MessageStore(location: .file(path))
        #expect(await reopened.cursor(for: .primary) == "13")
        #expect(try await reopened.allIDs(.primary) == Array(1...13))
    }

    @Test func aFileFromANewerVersionIsRefused() throws {
        let path = folder.path + "/future.sqlite"
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA user_version = \(Migrations.latestVersion + 1)")
        connection.close()
        #expect(throws: StoreError.newerSchema(found: Migrations.latestVersion + 1, supported: Migrations.latestVersion)) {
            _ = try MessageStore(location: .file(path))
        }
    }

    @Test func aFailedStepChangesNothing() throws {
        let path = folder.path + "/half.sqlite"
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, to: 1)
        // Something already called `chats` makes step 2 fail; the file must stay at version 1.
        try connection.execute("CREATE TABLE chats (x INTEGER)")
        #expect(throws: (any Error).self) { try Migrations.migrate(connection) }
        #expect(try Migrations.version(of: connection) == 1)
    }
}
