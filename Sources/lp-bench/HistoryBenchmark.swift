import ChatSimulator
import Foundation
import SQLite
import Store
import Upstream

/// The local copy read back: full-text search and export, on a store of a million messages that
/// read like chat (words of a 20,000-word vocabulary, a few common, most rare).
///
/// - search: two-word queries through `StoreReader.search` (the route's own call: FTS5, rank,
///   snippets), against the same filter as `LIKE '%word%'` on the same file, same connection kind.
/// - export: `GET /api/export` of the release dashboard over loopback, messages/s and the
///   dashboard's resident memory while it runs, against Python's sqlite3 writing the same JSON
///   Lines from the same file.
enum HistoryBenchmark {
    static let vocabularySize = 20_000

    /// A folder with a store of `messages` messages, made once per run.
    final class Corpus {
        let folder: String
        let path: String
        let messages: Int
        let vocabulary: [String]

        init(messages: Int) async throws {
            self.messages = messages
            folder = NSTemporaryDirectory() + "lp-bench-history-\(getpid())-\(messages)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            path = folder + "/store.sqlite"
            var random = SeededGenerator(seed: 2026)
            vocabulary = (0..<HistoryBenchmark.vocabularySize).map { _ in Self.word(&random) }
            try await fill(&random)
        }

        deinit {
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// The release dashboard on this store, reading it: its upstream is a port where nothing
        /// listens, so nothing is synced into the copy while it is measured.
        func startDashboard() throws -> (ChildProcess, endpoint: BenchEndpoint) {
            try lp_bench.startDashboard(arguments: ["--db", path, "--upstream", "http://127.0.0.1:9/"])
        }

        /// Pronounceable nonsense, 2 to 4 syllables.
        private static func word(_ random: inout SeededGenerator) -> String {
            let onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "ch", "sh", "tr", "pl"]
            let vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
            return (0..<Int.random(in: 2...4, using: &random)).map { _ in
                onsets[Int.random(in: 0..<onsets.count, using: &random)] + vowels[Int.random(in: 0..<vowels.count, using: &random)]
            }.joined()
        }

        /// A word's rank drawn so that a few words are common and most are rare (as in chat).
        func rank(_ random: inout SeededGenerator) -> Int {
            min(vocabulary.count - 1, Int(pow(Double.random(in: 0..<1, using: &random), 3) * Double(vocabulary.count)))
        }

        /// Appends `batches` batches of `batchSize` new messages, as the engine stores what it is
        /// sent (one transaction each, the index with it), and returns messages per second.
        func appendRate(batches: Int, batchSize: Int) async throws -> Double {
            var random = SeededGenerator(seed: UInt64(messages))
            let store = try MessageStore(location: .file(path))
            var id = Int64(messages) + Int64(appended)
            let batchList = (0..<batches).map { _ in
                (0..<batchSize).map { _ in
                    id += 1
                    let words = (0..<Int.random(in: 4...14, using: &random)).map { _ in vocabulary[rank(&random)] }
                    return UpstreamMessage(id: id, chatId: Int64.random(in: 1...40, using: &random), sender: "user\(id % 97)",
                                           text: words.joined(separator: " "), sentAt: "2026-11-30T12:00:00.000Z", chatName: "Chat \(id % 40)")
                }
            }
            let started = DispatchTime.now().uptimeNanoseconds
            for batch in batchList {
                _ = try await store.apply(batch, to: .primary, receivedAt: "2026-11-30T12:00:01.000Z", cursor: String(batch.last!.id))
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            await store.close()
            appended += batches * batchSize
            return Double(batches * batchSize) / seconds
        }

        /// Messages `appendRate` added after the corpus was made.
        private(set) var appended = 0

        private func fill(_ random: inout SeededGenerator) async throws {
            let started = Date()
            let store = try MessageStore(location: .file(path))
            let batch = 5000
            var id: Int64 = 0
            while id < Int64(messages) {
                var incoming: [UpstreamMessage] = []
                incoming.reserveCapacity(batch)
                for _ in 0..<min(batch, messages - Int(id)) {
                    id += 1
                    let words = (0..<Int.random(in: 4...14, using: &random)).map { _ in vocabulary[rank(&random)] }
                    incoming.append(UpstreamMessage(id: id, chatId: Int64.random(in: 1...40, using: &random), sender: "user\(id % 97)",
                                                    text: words.joined(separator: " "), sentAt: "2026-11-30T12:00:00.000Z",
                                                    chatName: "Chat \(id % 40)"))
                }
                _ = try await store.apply(incoming, to: .primary, receivedAt: "2026-11-30T12:00:01.000Z", cursor: String(id))
            }
            await store.close()
            let size = ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_000_000
            print(String(format: "corpus: %d messages, %d MB, made in %.1f s", messages, size, Date().timeIntervalSince(started)))
        }
    }

    // MARK: Search

    @discardableResult
    static func search(corpus: Corpus, queries: Int, likeQueries: Int) async throws -> [ReportLine] {
        var random = SeededGenerator(seed: 7)
        let reader = try StoreReader(path: corpus.path)
        let (pairs, ftsTimes, matches) = try await twoWordSearches(corpus: corpus, reader: reader, queries: queries, random: &random)
        let like = try SQLiteConnection(path: corpus.path, options: .init(readOnly: true))
        let statement = try like.statement("""
            SELECT m.id, m.chat_id, m.sender, m.text, m.sent_at, m.received_at, c.name FROM messages m
            LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
            WHERE m.account = 0 AND m.text LIKE ?1 AND m.text LIKE ?2 ORDER BY m.id DESC LIMIT 21
            """)
        var likeTimes: [Double] = []
        var sameTimes: [Double] = []
        for (index, (first, second)) in pairs.prefix(likeQueries).enumerated() {
            let started = DispatchTime.now().uptimeNanoseconds
            let rows = try statement.query([.text("%\(first)%"), .text("%\(second)%")]) { $0.int64(at: 0) }
            likeTimes.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            sameTimes.append(ftsTimes[index])
            _ = rows
        }
        // The worst case, said too: both words among the 20 commonest (in a fifth of all messages or more).
        var commonTimes: [Double] = []
        var commonMatches = 0
        for _ in 0..<20 {
            let query = try SearchQuery("\(corpus.vocabulary[Int.random(in: 0..<20, using: &random)]) \(corpus.vocabulary[Int.random(in: 0..<20, using: &random)]) ")
            let started = DispatchTime.now().uptimeNanoseconds
            let page = try await reader.search(query, account: .primary, limit: 20)
            commonTimes.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            commonMatches += page.next == nil ? page.results.count : 21
        }
        print(String(format: "  two of the 20 commonest words (20 queries, a page of 20 best of many): p50 %.1f ms, p95 %.1f ms",
                     percentile(commonTimes, 0.5), percentile(commonTimes, 0.95)))
        let p95 = percentile(ftsTimes, 0.95), p50 = percentile(ftsTimes, 0.5)
        let ratio = median(likeTimes) / median(sameTimes)
        print(String(format: "search: %d two-word queries on %d messages (%.1f results each): p50 %.2f ms, p95 %.2f ms, max %.2f ms",
                     queries, corpus.messages, Double(matches) / Double(queries), p50, p95, ftsTimes.max() ?? 0))
        print(String(format: "  the first %d as LIKE '%%word%%' AND LIKE '%%word%%': median %.0f ms against FTS5's %.2f ms on the same queries: %.0fx",
                     likeQueries, median(likeTimes), median(sameTimes), ratio))
        return [
            ReportLine(name: "search, 2 words, \(corpus.messages / 1000)k messages, p95", ours: String(format: "%.2f ms", p95),
                       peer: "", ratio: nil, goal: "<= 20 ms", met: p95 <= 20),
            ReportLine(name: "search, 2 of the 20 commonest words, p95", ours: String(format: "%.1f ms", percentile(commonTimes, 0.95)),
                       peer: "", ratio: nil, goal: "", met: true),
            ReportLine(name: "search vs LIKE '%word%', median", ours: String(format: "%.2f ms", median(sameTimes)),
                       peer: String(format: "LIKE %.0f ms", median(likeTimes)), ratio: ratio, goal: ">= 100x faster", met: ratio >= 100),
        ]
    }

    /// Two-word queries of words a person would look for (neither the commonest nor ones that
    /// hardly occur) through the route's own call, after 20 that warm the page cache as a store in
    /// use is (`reader` stays warm for what the caller asks next): the queries, each one's time in
    /// milliseconds, and the results found in all.
    static func twoWordSearches(corpus: Corpus, reader: StoreReader, queries: Int,
                                random: inout SeededGenerator) async throws -> (pairs: [(String, String)], times: [Double], matches: Int) {
        let pairs = (0..<queries).map { _ in
            (corpus.vocabulary[Int.random(in: 20..<2000, using: &random)], corpus.vocabulary[Int.random(in: 20..<2000, using: &random)])
        }
        for (first, second) in pairs.prefix(20) {
            _ = try await reader.search(SearchQuery("\(first) \(second) "), account: .primary, limit: 20)
        }
        var times: [Double] = []
        var matches = 0
        for (first, second) in pairs {
            let query = try SearchQuery("\(first) \(second) ")
            let started = DispatchTime.now().uptimeNanoseconds
            let page = try await reader.search(query, account: .primary, limit: 20)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            matches += page.results.count
        }
        return (pairs, times, matches)
    }

    // MARK: Export

    @discardableResult
    static func export(corpus: Corpus, rounds: Int) throws -> [ReportLine] {
        guard let python = findExecutable("python3") else { throw BenchError("python3 not found") }
        // Port 9 (discard) refuses: nothing syncs, the export reads the store alone.
        let (dashboard, endpoint) = try corpus.startDashboard()
        defer { dashboard.stop() }
        _ = try endpoint.get("/api/chats?account=primary")
        var rates: [Double] = [], growths: [Double] = [], pythonRates: [Double] = []
        let peer = try writeExportPeer(folder: corpus.folder)
        for round in 1...rounds {
            let before = try ProcessStats.read(pid: dashboard.pid).residentKiB
            let sampler = RSSSampler(pid: dashboard.pid)
            let started = Date()
            let lines = try exportLines(endpoint: endpoint)
            let elapsed = Date().timeIntervalSince(started)
            let peak = sampler.stop()
            guard lines == corpus.messages else { throw BenchError("the export gave \(lines) lines for \(corpus.messages) messages") }
            let rate = Double(lines) / elapsed
            let growth = Double(max(0, peak - before)) / 1024
            let output = try runCommand(python, [peer, corpus.path])
            guard let pythonRate = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchError("cannot read the Python peer's output: \(output)")
            }
            rates.append(rate)
            growths.append(growth)
            pythonRates.append(pythonRate)
            print(String(format: "  round %d: export %.0f msg/s (%.1f s), RSS %d KiB -> peak %d KiB (+%.1f MB)   python %.0f msg/s   ratio %.2f",
                         round, rate, elapsed, before, peak, growth, pythonRate, rate / pythonRate))
        }
        let ratio = median(zip(rates, pythonRates).map { $0 / $1 })
        print(String(format: "export: median %.0f msg/s, RSS growth at most %.1f MB, python %.0f msg/s, ratio %.2f",
                     median(rates), growths.max() ?? 0, median(pythonRates), ratio))
        return [
            ReportLine(name: "export, \(corpus.messages / 1000)k messages as JSON Lines over HTTP", ours: "\(Int(median(rates))) msg/s",
                       peer: "Python sqlite3 + json \(Int(median(pythonRates))) msg/s", ratio: ratio, goal: ">= 200,000 msg/s",
                       met: median(rates) >= 200_000),
            ReportLine(name: "export, RSS growth while it runs", ours: String(format: "%.1f MB", growths.max() ?? 0), peer: "", ratio: nil,
                       goal: "<= 10 MB", met: (growths.max() ?? 0) <= 10),
        ]
    }

    /// The whole export read from a socket, its lines counted: a line ends in `}` and a newline
    /// (a newline inside a text is written escaped, and chunk framing ends in CR LF after a newline).
    private static func exportLines(endpoint: BenchEndpoint) throws -> Int {
        let fd = try connectLoopback(port: endpoint.port)
        defer { close(fd) }
        let request = Array("GET /api/export?account=primary HTTP/1.1\r\nHost: 127.0.0.1:\(endpoint.port)\r\n\(endpoint.authorization)Connection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var lines = 0
        var previous: UInt8 = 0
        var status = ""
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            if status.isEmpty { status = String(decoding: buffer[0..<min(count, 12)], as: UTF8.self) }
            buffer.withUnsafeBufferPointer { bytes in
                for index in 0..<count {
                    let byte = bytes[index]
                    if byte == 0x0A && previous == UInt8(ascii: "}") { lines += 1 }
                    previous = byte
                }
            }
        }
        guard status.hasPrefix("HTTP/1.1 200") else { throw BenchError("export answered \(status.debugDescription)") }
        return lines
    }

    /// Python reading the same rows (same statement, same order) and writing the same JSON Lines
    /// to a pipe that is drained and counted.
    private static func writeExportPeer(folder: String) throws -> String {
        let script = """
            import json, sqlite3, sys, time
            db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
            out = open("/dev/null", "w")
            start = time.perf_counter()
            count = 0
            rows = db.execute(
                "SELECT m.id, m.chat_id, c.name, m.sender, m.text, m.sent_at, m.received_at FROM messages m "
                "LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id WHERE m.account = 0 ORDER BY m.id")
            while True:
                batch = rows.fetchmany(2000)
                if not batch:
                    break
                lines = []
                for id, chat, name, sender, text, sent, received in batch:
                    line = {"account": "primary", "id": id, "chatId": chat}
                    if name is not None:
                        line["chatName"] = name
                    line.update(sender=sender, text=text, sentAt=sent, receivedAt=received)
                    lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
                out.write("\\n".join(lines) + "\\n")
                count += len(batch)
            print(count / (time.perf_counter() - start))
            """
        let path = folder + "/export-peer.py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// Samples a process's resident memory every 10 ms on its own thread; `stop()` gives the peak (KiB).
final class RSSSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init(pid: Int32) {
        Thread { [self] in
            while lock.withLock({ running }) {
                if let stats = try? ProcessStats.read(pid: pid) { lock.withLock { peak = max(peak, stats.residentKiB) } }
                usleep(10_000)
            }
            done.signal()
        }.start()
    }

    func stop() -> Int {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { peak }
    }
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}
