import CSQLite

/// `SQLITE_TRANSIENT`: SQLite copies bound text before the call returns. The C macro is not imported.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// A value to bind or read, for the convenience APIs; hot paths bind typed values directly.
public enum SQLiteValue: Sendable, Equatable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case null

    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(nilLiteral: ()) { self = .null }
}

/// A compiled statement. Parameter and column indexes are SQLite's: parameters from 1, columns from 0.
public final class SQLiteStatement {
    private unowned let connection: SQLiteConnection
    let handle: OpaquePointer
    public let sql: String

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        self.connection = connection
        self.sql = sql
        var handle: OpaquePointer?
        let status = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard status == SQLITE_OK, let handle else {
            throw connection.error(status, sql: sql)
        }
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Binding

    public func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    public func bind(_ value: Int, at index: Int32) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    public func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, value)
    }

    public func bind(_ value: String, at index: Int32) {
        var value = value
        value.withUTF8 { bytes in
            _ = sqlite3_bind_text(handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                                  Int32(bytes.count), transient)
        }
    }

    public func bind(_ value: [UInt8], at index: Int32) {
        value.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), transient)
        }
    }

    public func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    public func bind(_ value: SQLiteValue, at index: Int32) {
        switch value {
        case .integer(let integer): bind(integer, at: index)
        case .real(let real): bind(real, at: index)
        case .text(let text): bind(text, at: index)
        case .blob(let blob): bind(blob, at: index)
        case .null: bindNull(at: index)
        }
    }

    /// Binds `values` to parameters 1, 2, ...
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        guard values.count == Int(sqlite3_bind_parameter_count(handle)) else {
            throw SQLiteError(code: SQLITE_RANGE, message: "\(values.count) values for \(sqlite3_bind_parameter_count(handle)) parameters", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            bind(value, at: Int32(offset + 1))
        }
    }

    // MARK: Stepping

    /// Advances to the next row; false when the statement is done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(status, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Ready to run again; bindings are cleared too unless the caller rebinds every parameter anyway.
    public func reset(clearingBindings: Bool = true) {
        sqlite3_reset(handle)
        if clearingBindings { sqlite3_clear_bindings(handle) }
    }

    /// Binds, runs to completion and resets: for statements that return no rows.
    public func run(_ values: SQLiteValue...) throws(SQLiteError) {
        try bind(values)
        defer { reset() }
        while try step() {}
    }

    /// Binds, then maps every row with `row`.
    public func query<T>(_ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> T) throws -> [T] {
        try bind(values)
        defer { reset() }
        var rows: [T] = []
        while try step() {
            rows.append(try row(self))
        }
        return rows
    }

    // MARK: Columns

    public func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    public func int(at column: Int32) -> Int {
        Int(sqlite3_column_int64(handle, column))
    }

    public func double(at column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    public func string(at column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    public func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }
}
