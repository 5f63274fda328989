import ChatSimulator
import Foundation
import Store

/// How cost grows: the same figures on stores of growing size (search p95, a cold page, the
/// ingest rate, the dashboard's memory) and under a growing number of parked polls (a message's
/// p99 to every poll, the memory), written as a Markdown table and as an SVG chart beside it.
enum GrowthBenchmark {
    /// The figures on one store.
    struct StorePoint {
        var messages: Int
        var searchP95: Double
        var coldPaint: Double
        var ingestRate: Double
        var residentMB: Double
    }

    /// The figures under one number of parked polls.
    struct PollPoint {
        var polls: Int
        var p99: Double
        var residentMB: Double
    }

    /// - Parameters:
    ///   - reuse: a corpus already made for one of `storeSizes` (the report's million), used as is.
    ///   - folder: where `growth.md` and `growth.svg` are written.
    static func run(storeSizes: [Int], pollCounts: [Int], queries: Int, coldRounds: Int, fanOutRounds: Int,
                    reuse: HistoryBenchmark.Corpus? = nil, folder: String) async throws -> [ReportLine] {
        var stores: [StorePoint] = []
        for size in storeSizes {
            let corpus: HistoryBenchmark.Corpus
            if let reuse, reuse.messages == size { corpus = reuse } else { corpus = try await HistoryBenchmark.Corpus(messages: size) }
            var random = SeededGenerator(seed: 11)
            let search = try await HistoryBenchmark.twoWordSearches(corpus: corpus, reader: try StoreReader(path: corpus.path), queries: queries,
                                                                    random: &random)
            let page = try ColdPageBenchmark.dashboardOnly(corpus: corpus, rounds: coldRounds)
            // Last, as it adds to the store: 50 batches of 200, as the engine stores them.
            let ingest = try await corpus.appendRate(batches: 50, batchSize: 200)
            let point = StorePoint(messages: size, searchP95: percentile(search.times, 0.95), coldPaint: page.paint, ingestRate: ingest,
                                   residentMB: Double(page.residentKiB) / 1024)
            print(String(format: "  %@ messages: search p95 %.2f ms, cold page %.0f ms, ingest %.0f msg/s, RSS %.1f MB",
                         label(size), point.searchP95, point.coldPaint, point.ingestRate, point.residentMB))
            stores.append(point)
        }

        var polls: [PollPoint] = []
        let (dashboard, endpoint) = try startDashboard(arguments: ["--db", ":memory:", "--always-on"])
        defer { dashboard.stop() }
        for count in pollCounts {
            let sampler = RSSSampler(pid: dashboard.pid)
            let result = try FanOutClient(peer: .dashboard(port: endpoint.port, token: endpoint.token), subscribers: count, rounds: fanOutRounds,
                                          serverProcesses: { [dashboard.pid] }).run()
            let point = PollPoint(polls: count, p99: result.p99, residentMB: Double(sampler.stop()) / 1024)
            print(String(format: "  %@ parked polls: a message to every poll p99 %.2f ms, RSS at most %.1f MB", label(count), point.p99, point.residentMB))
            polls.append(point)
        }

        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let table = markdown(stores: stores, polls: polls)
        try table.write(toFile: folder + "/growth.md", atomically: true, encoding: .utf8)
        try GrowthChart(panels: panels(stores: stores, polls: polls)).svg().write(toFile: folder + "/growth.svg", atomically: true, encoding: .utf8)
        print("\n" + table)
        print("written: \(folder)/growth.md and \(folder)/growth.svg (open it in a browser)")

        var lines: [ReportLine] = []
        if let first = stores.first, let last = stores.last, stores.count > 1 {
            let grown = "\(label(first.messages)) -> \(label(last.messages)) messages"
            lines += [growthLine("search p95", grown, first.searchP95, last.searchP95, "%.2f", "ms"),
                      growthLine("cold page", grown, first.coldPaint, last.coldPaint, "%.0f", "ms"),
                      growthLine("ingest rate", grown, first.ingestRate, last.ingestRate, "%.0f", "msg/s"),
                      growthLine("RSS", grown, first.residentMB, last.residentMB, "%.1f", "MB")]
        }
        if let first = polls.first, let last = polls.last, polls.count > 1 {
            let grown = "\(label(first.polls)) -> \(label(last.polls)) parked polls"
            lines += [growthLine("p99", grown, first.p99, last.p99, "%.2f", "ms"),
                      growthLine("RSS", grown, first.residentMB, last.residentMB, "%.1f", "MB")]
        }
        return lines
    }

    /// A figure from the smallest size to the largest, and their ratio.
    private static func growthLine(_ figure: String, _ grown: String, _ from: Double, _ to: Double, _ format: String, _ unit: String) -> ReportLine {
        ReportLine(name: "growth: \(figure), \(grown)", ours: String(format: "\(format) -> \(format) \(unit)", from, to), peer: "", ratio: to / from,
                   goal: "", met: true)
    }

    /// 10000 as "10k", 1000000 as "1M".
    static func label(_ count: Int) -> String {
        if count >= 1_000_000 && count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
        if count >= 1000 && count % 1000 == 0 { return "\(count / 1000)k" }
        return "\(count)"
    }

    static func markdown(stores: [StorePoint], polls: [PollPoint]) -> String {
        var text = "| stored messages | search p95 | cold page (LCP) | ingest | RSS |\n| ---: | ---: | ---: | ---: | ---: |\n"
        for point in stores {
            text += String(format: "| %@ | %.2f ms | %.0f ms | %.0f msg/s | %.1f MB |\n",
                           label(point.messages), point.searchP95, point.coldPaint, point.ingestRate, point.residentMB)
        }
        text += "\n| parked polls | a message to every poll, p99 | RSS |\n| ---: | ---: | ---: |\n"
        for point in polls {
            text += String(format: "| %@ | %.2f ms | %.1f MB |\n", label(point.polls), point.p99, point.residentMB)
        }
        return text
    }

    static func panels(stores: [StorePoint], polls: [PollPoint]) -> [GrowthChart.Panel] {
        let sizes = stores.map { Double($0.messages) }, counts = polls.map { Double($0.polls) }
        return [
            GrowthChart.Panel(title: "Search, two words, p95", xTitle: "stored messages", yUnit: "ms", x: sizes, y: stores.map(\.searchP95)),
            GrowthChart.Panel(title: "Cold page, newest painted", xTitle: "stored messages", yUnit: "ms", x: sizes, y: stores.map(\.coldPaint)),
            GrowthChart.Panel(title: "Ingest, 200-message batches", xTitle: "stored messages", yUnit: "msg/s", x: sizes, y: stores.map(\.ingestRate)),
            GrowthChart.Panel(title: "Memory (RSS), by store", xTitle: "stored messages", yUnit: "MB", x: sizes, y: stores.map(\.residentMB)),
            GrowthChart.Panel(title: "A message to every poll, p99", xTitle: "parked polls", yUnit: "ms", x: counts, y: polls.map(\.p99)),
            GrowthChart.Panel(title: "Memory (RSS), by polls", xTitle: "parked polls", yUnit: "MB", x: counts, y: polls.map(\.residentMB)),
        ].filter { !$0.x.isEmpty }
    }
}
