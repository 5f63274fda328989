import SQLite

/// A read-only connection to a file store, for readers (scroll-back pages) that must not wait
/// behind the writer: in WAL mode it reads the last committed state while a batch is being written.
public actor StoreReader {
    private let connection: SQLiteConnection
    var connectionForReading: SQLiteConnection { connection }

    /// Only for `.file` stores; a memory store has nothing a second connection could see.
    public init(path: String) throws(StoreError) {
        do {
            connection = try SQLiteConnection(path: path, options: .init(readOnly: true))
        } catch {
            throw MessageStore.storeError(error, usage: nil, needed: 0)
        }
    }

    public func messages(of account: AccountRole, chat: Int64? = nil, before: Int64? = nil, limit: Int = 50) throws(StoreError) -> MessagePage {
        do {
            return try MessageQueries.page(connection, account: account, chat: chat, before: before, limit: limit)
        } catch {
            throw MessageStore.storeError(error, usage: nil, needed: 0)
        }
    }

    /// The replies in the thread under the stored message `root`, newest first, ids below
    /// `before`; nil when `root` is no stored message an upstream can thread under.
    public func threadReplies(of account: AccountRole, root: Int64, before: Int64? = nil, limit: Int = 50) throws(StoreError) -> MessagePage? {
        do {
            return try ThreadQueries.replies(connection, account: account, root: root, before: before, limit: limit)
        } catch {
            throw MessageStore.storeError(error, usage: nil, needed: 0)
        }
    }

    /// The next slice of an export: `account`'s messages (one chat's, when given) with ids above
    /// `after`, oldest first.
    public func messages(of account: AccountRole, chat: Int64? = nil, after: Int64, limit: Int) throws(StoreError) -> [StoredMessage] {
        do {
            return try MessageQueries.slice(connection, account: account, chat: chat, after: after, limit: limit)
        } catch {
            throw MessageStore.storeError(error, usage: nil, needed: 0)
        }
    }

    public func count(of account: AccountRole) throws(StoreError) -> Int64 {
        do {
            return try connection.scalarInt("SELECT count(*) FROM messages WHERE account = ?", .integer(account.rawValue)) ?? 0
        } catch {
            throw MessageStore.storeError(error, usage: nil, needed: 0)
        }
    }
}
