import Foundation

/// One row of the benchmark report.
struct ReportLine {
    var name: String
    var ours: String
    var peer: String
    var ratio: Double?
    var goal: String
    var met: Bool
}

/// `lp-bench report`: every benchmark against its peer in one run, and one table.
enum Report {
    static func run(quick: Bool) async throws {
        var lines: [ReportLine] = []
        func section(_ title: String, _ body: () async throws -> [ReportLine]) async {
            print("\n== \(title)")
            do { lines += try await body() } catch { print("   skipped: \(error)") }
        }
        await section("static files vs nginx") {
            try StaticBenchmark.run(duration: quick ? "3s" : "10s", connections: 50, threads: 2, rounds: quick ? 1 : 3)
        }
        await section("ingest vs Python sqlite3") {
            try await IngestBenchmark.run(batches: quick ? 200 : 1000, batchSize: 200, rounds: quick ? 1 : 3, singleCommits: quick ? 1000 : 5000)
        }
        let largest = quick ? 200_000 : 1_000_000
        var corpus: HistoryBenchmark.Corpus?
        await section("search, search as you type, export and a cold page on a million stored messages") {
            let made = try await HistoryBenchmark.Corpus(messages: largest)
            corpus = made
            return try await HistoryBenchmark.search(corpus: made, queries: quick ? 50 : 200, likeQueries: quick ? 5 : 20)
                + HistoryBenchmark.export(corpus: made, rounds: quick ? 1 : 3)
                + TypingBenchmark.run(corpus: made, queries: quick ? 10 : 30)
                + ColdPageBenchmark.run(corpus: made, rounds: quick ? 3 : 10)
        }
        await section("how cost grows (table and chart in .build/lp-bench)") {
            // Last among the store's sections: its ingest adds to the largest store.
            try await GrowthBenchmark.run(storeSizes: quick ? [10_000, largest] : [10_000, 100_000, largest],
                                          pollCounts: quick ? [1, 100, 1000] : [1, 10, 100, 1000, 10_000], queries: quick ? 50 : 100,
                                          coldRounds: quick ? 2 : 5, fanOutRounds: quick ? 5 : 10, reuse: corpus, folder: ".build/lp-bench")
        }
        await section("end-to-end ingest") { try EndToEndBenchmark.run(messages: quick ? 50_000 : 200_000, rounds: quick ? 1 : 3) }
        await section("sending through the outbox") {
            try SendBenchmark.run(messages: quick ? 500 : 5000, rounds: quick ? 1 : 5, clicks: quick ? 30 : 100)
        }
        await section("publish to pixel vs nginx + Nchan, in Chromium") { try PixelBenchmark.run(messages: quick ? 50 : 200) }
        await section("idle, and 10,000 idle connections") { try IdleBenchmark.run(connections: 10_000, seconds: quick ? 3 : 10) }
        await section("10,000 parked polls") { try ParkedPollsBenchmark.run(polls: 10_000) }
        await section("cold start to first page") { try ColdStartBenchmark.run(rounds: quick ? 3 : 10) }
        await section("Matrix: a message through Synapse, dashboard vs Python /sync") {
            try MatrixLatencyBenchmark.run(messages: quick ? 50 : 200, python: nil)
        }
        await section("Matrix: push rules per event, vs Synapse's own evaluator") {
            try PushRuleBenchmark.run(events: quick ? 5000 : 20000, seed: 51, python: nil)
        }
        await section("Matrix: an account of many rooms, first start to the chat list, vs a bare initial /sync") {
            try MatrixAccountBenchmark.run(rooms: quick ? 50 : 200, rounds: quick ? 1 : 5, python: nil)
        }
        await section("fan-out vs nginx + Nchan") { try FanOutBenchmark.run(subscribers: quick ? [1, 1000] : [1, 100, 1000, 5000], rounds: quick ? 5 : 20,
                                                                                repeats: quick ? 1 : 3) }

        printTable(lines)
    }

    static func printTable(_ lines: [ReportLine]) {
        print("\n| benchmark | dashboard | peer | ratio | goal | met |")
        print("| --- | ---: | ---: | ---: | --- | --- |")
        for line in lines {
            let ratio = line.ratio.map { String(format: "%.2f", $0) } ?? ""
            print("| \(line.name) | \(line.ours) | \(line.peer) | \(ratio) | \(line.goal) | \(line.goal.isEmpty ? "" : (line.met ? "yes" : "no")) |")
        }
    }
}
