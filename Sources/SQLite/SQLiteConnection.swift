import CSQLite

/// One SQLite connection. Not `Sendable` on purpose: it belongs to one actor, which is what
/// serialises every use (the handle is opened with `SQLITE_OPEN_NOMUTEX`).
///
/// ```swift
/// let db = try SQLiteConnection(path: "/tmp/x.sqlite")
/// try db.transaction {
///     try db.statement("INSERT INTO t(a) VALUES (?)").run(.integer(1))
/// }
/// ```
public final class SQLiteConnection {
    public struct Options: Sendable {
        public var readOnly = false
        /// How long a writer waits for another connection's lock before failing with SQLITE_BUSY.
        public var busyTimeoutMilliseconds: Int32 = 5000
        /// WAL journal and `synchronous=NORMAL`: commits survive a crash of the process (not of the
        /// machine's power) and readers never block the writer.
        public var writeAheadLog = true

        public init(readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000, writeAheadLog: Bool = true) {
            self.readOnly = readOnly
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.writeAheadLog = writeAheadLog
        }
    }

    /// The path given to `init`, or `:memory:`.
    public let path: String
    let handle: OpaquePointer
    private var cache: [String: SQLiteStatement] = [:]
    private var transactionDepth = 0
    /// After `close()`: the handle is freed, so nothing may touch it again (not even `deinit`).
    public private(set) var isClosed = false

    private static let closedError = SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed")

    public init(path: String, options: Options = Options()) throws(SQLiteError) {
        self.path = path
        var handle: OpaquePointer?
        let flags = (options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: status, message: "\(message): \(path)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds)
        do {
            if options.writeAheadLog && !options.readOnly && path != ":memory:" {
                try execute("PRAGMA journal_mode = WAL")
                try execute("PRAGMA synchronous = NORMAL")
            }
            try execute("PRAGMA foreign_keys = ON")
        } catch {
            cache.removeAll()
            sqlite3_close_v2(handle)
            throw error
        }
    }

    deinit {
        guard !isClosed else { return }
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Closes now (finalising cached statements) rather than at deinit; later calls throw
    /// `SQLITE_MISUSE` instead of touching the freed handle, and a second close does nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        guard !isClosed else { throw Self.closedError }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if status != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// A prepared statement for `sql`, compiled once per connection and reused (reset and cleared).
    public func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        guard !isClosed else { throw Self.closedError }
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    /// `BEGIN IMMEDIATE` takes the write lock up front, so a writer never fails half-way on a lock.
    /// Nested calls join the outer transaction.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if transactionDepth > 0 {
            return try body()
        }
        // Prepared once and reused: sqlite3_exec would parse BEGIN and COMMIT on every transaction.
        let begin = try statement("BEGIN IMMEDIATE")
        try begin.step()
        begin.reset()
        transactionDepth = 1
        defer { transactionDepth = 0 }
        let result: T
        do {
            result = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            let commit = try statement("COMMIT")
            try commit.step()
            commit.reset()
        } catch {
            rollback()
            throw error
        }
        return result
    }

    private func rollback() {
        // After some errors (SQLITE_FULL, IOERR) SQLite has already rolled back; then this is a no-op.
        if !isClosed && sqlite3_get_autocommit(handle) == 0 {
            _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        }
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { isClosed ? 0 : Int(sqlite3_changes64(handle)) }

    public var lastInsertRowID: Int64 { isClosed ? 0 : sqlite3_last_insert_rowid(handle) }

    /// The first column of the first row of `sql`, as an integer (nil when there is no row or it is NULL).
    public func scalarInt(_ sql: String, _ bindings: SQLiteValue...) throws(SQLiteError) -> Int64? {
        let statement = try self.statement(sql)
        try statement.bind(bindings)
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// The first column of the first row of `sql`, as text.
    public func scalarText(_ sql: String, _ bindings: SQLiteValue...) throws(SQLiteError) -> String? {
        let statement = try self.statement(sql)
        try statement.bind(bindings)
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.string(at: 0)
    }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ status: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : status,
                    message: lastErrorMessage, sql: sql)
    }
}
