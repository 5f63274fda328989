import Foundation
import SQLite
@testable import Store
import Upstream

final class TemporaryFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("store-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Messages with the given ids, chat `id % 3`, a text of `textLength` bytes.
func messages(_ ids: [Int64], textLength: Int = 10, sentAt: String = "2026-11-29T12:00:00.000Z") -> [UpstreamMessage] {
    ids.map { UpstreamMessage(id: $0, chatId: $0 % 3, sender: "s\($0 % 2)", text: String(repeating: "x", count: textLength), sentAt: sentAt) }
}

func messages(_ ids: ClosedRange<Int64>, textLength: Int = 10) -> [UpstreamMessage] {
    messages(Array(ids), textLength: textLength)
}

let now = "2026-11-29T12:00:01.000Z"

extension MessageStore {
    /// A batch with the cursor this project's protocol gives: its newest id.
    func apply(_ batch: [UpstreamMessage], to account: AccountRole, receivedAt: String) throws(StoreError) -> [StoredMessage] {
        try apply(batch, to: account, receivedAt: receivedAt, cursor: batch.map(\.id).max().map(String.init))
    }
}

extension MessageStore {
    /// Every stored id of `account`, ascending, read through the paging API.
    func allIDs(_ account: AccountRole) async throws -> [Int64] {
        try messages(of: account, limit: 1_000_000).messages.map(\.id).reversed()
    }

    /// Usage recomputed with a table scan, to check the incremental figure.
    func scannedUsage() throws -> Int64 {
        try scalarForTesting("""
            SELECT (SELECT coalesce(sum(size), 0) FROM messages) + (SELECT coalesce(sum(size), 0) FROM archived_messages)
                 + (SELECT coalesce(sum(size), 0) FROM reactions)
            """) ?? 0
    }
}
