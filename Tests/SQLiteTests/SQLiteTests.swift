import Foundation
import Testing
@testable import SQLite

/// A temporary folder removed when the value goes away.
final class TemporaryFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

@Suite("SQLite layer")
struct SQLiteTests {
    let folder: TemporaryFolder
    init() throws { folder = try TemporaryFolder() }

    private func open(_ name: String = "db.sqlite", readOnly: Bool = false) throws -> SQLiteConnection {
        try SQLiteConnection(path: folder.path + "/" + name, options: .init(readOnly: readOnly))
    }

    @Test func opensInWALModeWithForeignKeys() throws {
        let db = try open()
        #expect(try db.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try db.scalarInt("PRAGMA synchronous") == 1, "NORMAL")
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)
    }

    @Test func memoryDatabasesWork() throws {
        let db = try SQLiteConnection(path: ":memory:")
        try db.execute("CREATE TABLE t (a INTEGER)")
        try db.statement("INSERT INTO t VALUES (?)").run(.integer(7))
        #expect(try db.scalarInt("SELECT a FROM t") == 7)
    }

    @Test func typedBindingAndColumnsRoundTrip() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)")
        try db.statement("INSERT INTO t VALUES (?, ?, ?, ?, ?)").run(.integer(Int64.max), .real(2.5), .text("héllo 👋"), .blob([0, 1, 255]), .null)
        let rows = try db.statement("SELECT i, r, s, n FROM t").query { ($0.int64(at: 0), $0.double(at: 1), $0.string(at: 2), $0.isNull(at: 3)) }
        #expect(rows.count == 1)
        #expect(rows[0].0 == Int64.max)
        #expect(rows[0].1 == 2.5)
        #expect(rows[0].2 == "héllo 👋")
        #expect(rows[0].3)
    }

    @Test func statementsAreCachedPerSQL() throws {
        let db = try open()
        #expect(try db.statement("SELECT 1") === db.statement("SELECT 1"))
    }

    @Test func transactionCommitsOrRollsBack() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a INTEGER UNIQUE)")
        try db.transaction { try db.statement("INSERT INTO t VALUES (1)").run() }
        #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.statement("INSERT INTO t VALUES (2)").run()
                try db.statement("INSERT INTO t VALUES (1)").run()
            }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 1, "the 2 was rolled back with the failing 1")
    }

    @Test func errorsCarryCodeMessageAndSQL() throws {
        let db = try open()
        do {
            _ = try db.statement("SELEC nonsense")
            Issue.record("expected a syntax error")
        } catch {
            #expect(error.primaryCode == 1)
            #expect(error.message.contains("syntax error"))
            #expect(error.sql == "SELEC nonsense")
        }
    }

    @Test func wrongParameterCountIsRefused() throws {
        let db = try open()
        #expect(throws: SQLiteError.self) { try db.statement("SELECT ?").run(.integer(1), .integer(2)) }
    }

    @Test func aReaderSeesTheLastCommitWhileAWriterIsMidTransaction() throws {
        let writer = try open()
        try writer.execute("CREATE TABLE t (a INTEGER)")
        let reader = try open(readOnly: true)
        try writer.execute("BEGIN IMMEDIATE")
        try writer.statement("INSERT INTO t VALUES (1)").run()
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 0, "uncommitted rows are invisible, and reading does not block")
        try writer.execute("COMMIT")
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 1)
    }

    @Test func aFileThatIsNotADatabaseIsReportedAsCorrupt() throws {
        let path = folder.path + "/garbage.sqlite"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        do {
            let db = try SQLiteConnection(path: path)
            _ = try db.scalarInt("SELECT count(*) FROM sqlite_master")
            Issue.record("expected SQLITE_NOTADB")
        } catch {
            #expect(error.isCorrupt)
        }
    }

    @Test func aClosedConnectionRefusesWorkAndIsFreedOnce() throws {
        // Before: close() freed the handle and deinit freed it again; a call after close used it.
        for _ in 0..<50 {
            let connection = try SQLiteConnection(path: ":memory:")
            try connection.execute("CREATE TABLE t (x)")
            _ = try connection.statement("INSERT INTO t VALUES (?)")
            connection.close()
            connection.close()
            #expect(connection.isClosed)
            #expect(throws: SQLiteError.self) { try connection.execute("SELECT 1") }
            #expect(throws: SQLiteError.self) { _ = try connection.statement("SELECT 1") }
            #expect(connection.changes == 0)
        }
    }
}
