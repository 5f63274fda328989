import CSQLite

/// A failed SQLite call: the (extended) result code, SQLite's message and the SQL involved.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code, e.g. `SQLITE_IOERR_WRITE`; `primaryCode` strips the extension.
    public let code: Int32
    public let message: String
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var primaryCode: Int32 { code & 0xFF }

    /// The disk (or `max_page_count`) has no room for the write.
    public var isFull: Bool { primaryCode == SQLITE_FULL }
    /// The file is damaged or is not a database.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    /// The operating system reported an I/O failure.
    public var isIOError: Bool { primaryCode == SQLITE_IOERR }
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    public var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }

    public var description: String {
        let name = String(cString: sqlite3_errstr(code))
        return "SQLite error \(code) (\(name)): \(message)" + (sql.map { " in `\($0)`" } ?? "")
    }
}
