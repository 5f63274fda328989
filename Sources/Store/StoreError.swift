import SQLite

/// What can go wrong in the store, typed so the recovery layer can offer the right options.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The batch does not fit: into the quota, or onto the disk (SQLITE_FULL). Nothing was written.
    case outOfSpace(usedBytes: Int64, quotaBytes: Int64?, neededBytes: Int64, diskFull: Bool)
    /// The database file is damaged or is not a database.
    case corrupt(SQLiteError)
    /// The operating system failed a read or write.
    case ioFailure(SQLiteError)
    /// Any other SQLite failure.
    case database(SQLiteError)
    /// The file was written by a newer version of this program.
    case newerSchema(found: Int, supported: Int)

    public var description: String {
        switch self {
        case let .outOfSpace(used, quota, needed, diskFull):
            diskFull
                ? "the disk is full (\(needed) bytes needed, \(used) used)"
                : "the batch needs \(needed) bytes but only \(max(0, (quota ?? 0) - used)) of \(quota ?? 0) are free"
        case .corrupt(let error): "the database is damaged: \(error)"
        case .ioFailure(let error): "an I/O error: \(error)"
        case .database(let error): "\(error)"
        case let .newerSchema(found, supported): "schema version \(found) is newer than \(supported)"
        }
    }
}
