import Foundation
import Store

/// Save to a file for the unsent messages an account left behind: one JSON Lines file per save,
/// in a folder of this computer (the store's own), readable by its owner only, written whole
/// before anything leaves the outbox.
struct UnsentExport: Sendable {
    let folder: String

    /// The folder beside the store file; a store in memory saves into the temporary folder.
    init(beside location: StoreLocation) {
        switch location {
        case .file(let path): folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        case .memory: folder = NSTemporaryDirectory()
        }
    }

    init(folder: String) {
        self.folder = folder
    }

    /// One line of the file: everything needed to write the message again elsewhere.
    struct Line: Codable, Equatable {
        var outboxId: Int64
        var account: String
        var chatId: Int64
        /// The user who wrote it.
        var writtenBy: Int64?
        var createdAt: String
        var text: String
        /// Tries that went out without an answer: more than 0, it may have reached the chat.
        var tries: Int
    }

    /// Writes `entries` to a new file named for `date`; its path.
    func write(_ entries: [OutboxEntry], at date: Date) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for entry in entries {
            data += try encoder.encode(Line(outboxId: entry.id, account: entry.account.description, chatId: entry.chatId,
                                            writtenBy: entry.ownerUserId, createdAt: entry.createdAt, text: entry.text,
                                            tries: entry.attempts))
            data.append(0x0A)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let stem = "unsent-messages-\(formatter.string(from: date))"
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var path = URL(fileURLWithPath: folder).appendingPathComponent(stem + ".jsonl").path
        var suffix = 2
        while manager.fileExists(atPath: path) {
            path = URL(fileURLWithPath: folder).appendingPathComponent("\(stem)-\(suffix).jsonl").path
            suffix += 1
        }
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }
}
