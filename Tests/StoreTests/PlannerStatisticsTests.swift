import SQLite
@testable import Store
import Testing

/// The query planner's picture of the store (`PlannerStatistics`), read from a real store file:
/// every key has its figures, and the searches that scanned a whole account without them use
/// their index.
@Suite("Query planner statistics")
struct PlannerStatisticsTests {
    let folder: TemporaryFolder
    let connection: SQLiteConnection

    init() throws {
        folder = try TemporaryFolder()
        let path = folder.path + "/store.sqlite"
        _ = try MessageStore(location: .file(path))
        connection = try SQLiteConnection(path: path)
    }

    /// The plan SQLite gives `sql` for an account and an id (`?1`, `?2`, then a limit), one line per step.
    private func plan(_ sql: String) throws -> [String] {
        let parameters: [SQLiteValue] = [.integer(0), .text("$event"), .integer(50)]
        return try connection.statement("EXPLAIN QUERY PLAN " + sql).query(Array(parameters.prefix(sql.contains("?3") ? 3 : 2))) { $0.string(at: 3) }
    }

    @Test func everyKeyOfTheStoreHasFiguresForEachOfItsColumns() throws {
        let tables = try connection.statement("""
            SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'message_search%'
            """).query { $0.string(at: 0) }
        var keys: [String: Int] = [:]  // sqlite_stat1's name of each key -> its columns
        for table in tables {
            for (index, origin) in try connection.statement("SELECT name, origin FROM pragma_index_list(?1)").query([.text(table)], row: { ($0.string(at: 0), $0.string(at: 1)) }) {
                let columns = try connection.scalarInt("SELECT count(*) FROM pragma_index_info(?1)", .text(index)) ?? 0
                // A table without rowid is its primary key, and sqlite_stat1 names it by the table.
                let withoutRowid = try connection.scalarInt("SELECT count(*) FROM pragma_table_list WHERE name = ?1 AND wr = 1", .text(table)) == 1
                keys[origin == "pk" && withoutRowid ? table : index] = Int(columns)
            }
        }
        let figures = Dictionary(uniqueKeysWithValues: PlannerStatistics.rows.map { ($0.index, $0.perPrefix.count) })
        #expect(figures == keys)
        let stored = try connection.statement("SELECT idx, stat FROM sqlite_stat1").query { ($0.string(at: 0), $0.string(at: 1)) }
        #expect(Dictionary(uniqueKeysWithValues: stored) == Dictionary(uniqueKeysWithValues: PlannerStatistics.rows.map { ($0.index, $0.stat) }))
    }

    @Test func aThreadsRepliesAreFoundByTheThreadIndexNotAScanOfTheAccount() throws {
        #expect(try plan("SELECT count(*), max(sent_at) FROM messages WHERE account = ?1 AND thread_root_event = ?2")
                == ["SEARCH messages USING INDEX messages_in_thread (account=? AND thread_root_event=?)"])
    }

    @Test func everyLookupAMessageReadMakesUsesAnIndex() throws {
        let steps = try plan("""
            SELECT \(MessageQueries.columns) FROM messages m LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
            WHERE m.account = ?1 AND m.id < ?2 ORDER BY m.id DESC LIMIT ?3
            """)
        let lookups = steps.filter { $0.hasPrefix("SEARCH r ") || $0.hasPrefix("SEARCH t ") }
        #expect(lookups.count == 4)
        #expect(lookups.allSatisfy { $0.contains(" INDEX ") && $0.contains("event") }, "\(steps)")
    }

    @Test func aMessagesReactionsAndEditsAreFoundByTheirTarget() throws {
        #expect(try plan("SELECT key, sender FROM reactions WHERE account = ?1 AND target_event_id = ?2 ORDER BY sent_at, event_id").first
                == "SEARCH reactions USING INDEX reactions_by_target (account=? AND target_event_id=?)")
        #expect(try plan("SELECT text FROM message_edits WHERE account = ?1 AND target_event_id = ?2 ORDER BY sent_at").first
                == "SEARCH message_edits USING INDEX message_edits_by_target (account=? AND target_event_id=?)")
    }

    @Test func aChatsNewestMessageIsFoundInTheChatIndex() throws {
        #expect(try plan("SELECT sent_at FROM messages m WHERE m.account = ?1 AND m.chat_id = ?2 ORDER BY id DESC LIMIT 1")
                == ["SEARCH m USING INDEX messages_by_chat (account=? AND chat_id=?)"])
    }
}
