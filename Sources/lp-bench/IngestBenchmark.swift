import Foundation
import SQLite
import Store
import Upstream

/// Durable ingest of 200-message batches through `MessageStore.apply`, against Python's sqlite3
/// `executemany` running the same schema, the same statements and the same transactions
/// (WAL, synchronous=NORMAL) in the same run. Also single-message commits per second.
enum IngestBenchmark {
    @discardableResult
    static func run(batches: Int, batchSize: Int, rounds: Int, singleCommits: Int) async throws -> [ReportLine] {
        guard let python = findExecutable("python3") else { throw BenchError("python3 not found") }
        let folder = NSTemporaryDirectory() + "lp-bench-ingest-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let peer = try writePeer(folder: folder)
        print("ingest: \(batches) batches of \(batchSize) messages per round, \(rounds) round(s), file in \(folder)")
        var swiftRates: [Double] = [], pythonRates: [Double] = []
        for round in 1...rounds {
            let swiftRate = try await swiftIngest(path: folder + "/swift-\(round).sqlite", batches: batches, batchSize: batchSize)
            let output = try runCommand(python, [peer, folder + "/python-\(round).sqlite", String(batches), String(batchSize), "0"])
            guard let pythonRate = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchError("cannot read the Python peer's output: \(output)")
            }
            swiftRates.append(swiftRate)
            pythonRates.append(pythonRate)
            print(String(format: "  round %d: store API %9.0f msg/s   python executemany %9.0f msg/s   ratio %.2f",
                         round, swiftRate, pythonRate, swiftRate / pythonRate))
        }
        let ratios = zip(swiftRates, pythonRates).map { $0 / $1 }
        print(String(format: "median: store API %.0f msg/s, python %.0f msg/s, median of the round ratios %.2f (goal >= 1.0)",
                     median(swiftRates), median(pythonRates), median(ratios)))

        let swiftSingle = try await swiftIngest(path: folder + "/swift-single.sqlite", batches: singleCommits, batchSize: 1)
        let pythonOutput = try runCommand(python, [peer, folder + "/python-single.sqlite", String(singleCommits), "1", "0"])
        let pythonSingle = Double(pythonOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        print(String(format: "single-message commits: store API %.0f commits/s, python %.0f commits/s, ratio %.2f",
                     swiftSingle, pythonSingle, swiftSingle / pythonSingle))
        return [
            ReportLine(name: "ingest, \(batchSize)-message batches", ours: "\(Int(median(swiftRates))) msg/s",
                       peer: "Python sqlite3 \(Int(median(pythonRates))) msg/s", ratio: median(ratios), goal: ">= 1.0", met: median(ratios) >= 1),
            ReportLine(name: "single-message commits", ours: "\(Int(swiftSingle))/s", peer: "Python \(Int(pythonSingle))/s",
                       ratio: swiftSingle / pythonSingle, goal: "", met: true),
        ]
    }

    /// The same messages on both sides: see `message(_:)` and the Python `message(i)`.
    static func message(_ id: Int64) -> UpstreamMessage {
        UpstreamMessage(id: id, chatId: id % 20, sender: "user\(id % 50)",
                        text: String(repeating: "lorem ipsum ", count: 4 + Int(id * 37 % 8)),
                        sentAt: "2026-11-29T12:00:00.000Z")
    }

    private static func swiftIngest(path: String, batches: Int, batchSize: Int) async throws -> Double {
        let store = try MessageStore(location: .file(path))
        let prepared = (0..<batches).map { batch in
            (0..<batchSize).map { message(Int64(batch * batchSize + $0 + 1)) }
        }
        let start = Date()
        var stored = 0
        for batch in prepared {
            stored += try await store.apply(batch, to: .primary, receivedAt: "2026-11-29T12:00:01.000Z", cursor: String(batch.last!.id)).count
        }
        let elapsed = Date().timeIntervalSince(start)
        guard stored == batches * batchSize else { throw BenchError("stored \(stored) of \(batches * batchSize)") }
        return Double(stored) / elapsed
    }

    /// Writes the Python peer, with the store's own schema and statements baked in.
    private static func writePeer(folder: String) throws -> String {
        let schemaPath = folder + "/schema.sqlite"
        _ = try MessageStore(location: .file(schemaPath))
        let connection = try SQLiteConnection(path: schemaPath)
        // A virtual table (the FTS5 search index) makes its own shadow tables, and AUTOINCREMENT its
        // sqlite_sequence: SQLite makes them again, so they are not repeated.
        let schema = try connection.statement("""
            SELECT sql || ';' FROM sqlite_master AS entry WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND NOT EXISTS (
                SELECT 1 FROM sqlite_master AS virtual WHERE virtual.sql LIKE 'CREATE VIRTUAL TABLE%'
                AND entry.type = 'table' AND entry.name LIKE virtual.name || '\\_%' ESCAPE '\\')
            ORDER BY rowid
            """)
            .query { $0.string(at: 0) }.joined(separator: "\n")
        connection.close()
        let statements: [String: String] = [
            "schema": schema,
            "insert": StoreSQL.insertMessage,
            "chat": StoreSQL.upsertChat,
            "cursor": StoreSQL.saveCursor,
            "usage": StoreSQL.addUsedBytes,
            "index": StoreSQL.indexMessage,
        ]
        let json = String(decoding: try JSONEncoder().encode(statements), as: UTF8.self)
        let script = """
            import json, sqlite3, sys, time
            SQL = json.loads(\(String(reflecting: json)))
            OVERHEAD = \(UpstreamMessage.rowOverhead)

            def message(i):
                text = "lorem ipsum " * (4 + (i * 37 % 8))
                return (0, i, i % 20, "user%d" % (i % 50), text, "2026-11-29T12:00:00.000Z")

            path, batches, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            db.executescript(SQL["schema"])
            db.execute("INSERT INTO settings (key, value) VALUES ('used_bytes', 0), ('quota_bytes', NULL)")
            received = "2026-11-29T12:00:01.000Z"
            prepared = []
            for b in range(batches):
                rows = []
                for j in range(size):
                    a, i, chat, sender, text, sent = message(b * size + j + 1)
                    bytes_ = len(sender.encode()) + len(text.encode()) + len(sent.encode()) + OVERHEAD
                    rows.append((a, i, chat, sender, text, sent, received, bytes_))
                prepared.append(rows)
            start = time.perf_counter()
            for rows in prepared:
                db.execute("BEGIN IMMEDIATE")
                db.executemany(SQL["insert"], rows)
                db.executemany(SQL["index"], [(r[1] * 2 + r[0], r[4]) for r in rows])
                chats = {}
                for r in rows:
                    count, last, sent = chats.get(r[2], (0, 0, ""))
                    chats[r[2]] = (count + 1, r[1], r[5]) if r[1] > last else (count + 1, last, sent)
                db.executemany(SQL["chat"], [(0, c, n, last, 0, sent) for c, (n, last, sent) in chats.items()])
                newest = max(r[1] for r in rows)
                db.execute(SQL["cursor"], (0, str(newest), newest))
                db.execute(SQL["usage"], (sum(r[7] for r in rows),))
                db.execute("COMMIT")
            elapsed = time.perf_counter() - start
            print(batches * size / elapsed)
            """
        let path = folder + "/peer.py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
