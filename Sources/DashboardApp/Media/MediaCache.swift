import Foundation

/// Files fetched for the page, kept in a folder beside the store so that a chat opened again does
/// not ask the homeserver again: bounded in total size, the least recently used going first. Each
/// file is one entry (its content type on the first line, then its bytes), written whole under a
/// temporary name and renamed, so a crash leaves no half file. No folder (an in-memory store)
/// keeps nothing.
actor MediaCache {
    private let folder: String?
    let capacity: Int64
    private var entries: [String: Entry] = [:]
    private var total: Int64 = 0
    private var uses: UInt64 = 0
    private var loaded = false

    private struct Entry {
        var bytes: Int64
        var lastUse: UInt64
    }

    init(folder: String?, capacity: Int64) {
        self.folder = folder
        self.capacity = capacity
    }

    /// The bytes kept in it now.
    var storedBytes: Int64 {
        load()
        return total
    }

    func get(_ key: String) -> (contentType: String, body: [UInt8])? {
        guard let file = path(key) else { return nil }
        load()
        guard entries[key] != nil, let data = FileManager.default.contents(atPath: file),
              let newline = data.firstIndex(of: 0x0A) else { return nil }
        uses += 1
        entries[key]?.lastUse = uses
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: file)
        return (String(decoding: data[..<newline], as: UTF8.self), Array(data[data.index(after: newline)...]))
    }

    func put(_ key: String, contentType: String, body: [UInt8]) {
        guard let file = path(key), let folder else { return }
        load()
        let size = Int64(body.count + contentType.utf8.count + 1)
        guard size <= capacity else { return }
        var data = Data(contentType.utf8)
        data.append(0x0A)
        data.append(contentsOf: body)
        let temporary = folder + "/.incoming-" + UUID().uuidString
        guard FileManager.default.createFile(atPath: temporary, contents: data) else { return }
        guard rename(temporary, file) == 0 else {
            unlink(temporary)
            return
        }
        if let old = entries[key] { total -= old.bytes }
        uses += 1
        entries[key] = Entry(bytes: size, lastUse: uses)
        total += size
        evict()
    }

    private func evict() {
        while total > capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            entries[oldest.key] = nil
            total -= oldest.value.bytes
            if let file = path(oldest.key) { unlink(file) }
        }
    }

    /// What an earlier run left, oldest use first by modification time.
    private func load() {
        guard !loaded, let folder else { return }
        loaded = true
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var found: [(key: String, bytes: Int64, modified: Date)] = []
        for name in names {
            let file = folder + "/" + name
            if name.hasPrefix(".incoming-") {
                unlink(file)
                continue
            }
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file) else { continue }
            found.append((name, (attributes[.size] as? NSNumber)?.int64Value ?? 0, attributes[.modificationDate] as? Date ?? .distantPast))
        }
        for item in found.sorted(by: { $0.modified < $1.modified }) {
            uses += 1
            entries[item.key] = Entry(bytes: item.bytes, lastUse: uses)
            total += item.bytes
        }
        evict()
    }

    /// Keys are made of checked media references (no `/`, no dot-segment); anything else is refused.
    private func path(_ key: String) -> String? {
        guard let folder, !key.isEmpty, !key.contains("/"), !key.hasPrefix(".") else { return nil }
        return folder + "/" + key
    }
}
