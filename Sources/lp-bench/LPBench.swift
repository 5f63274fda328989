import Foundation

// lp-bench: the project's benchmarks, each against its peer in the same run.
// Build with `swift build -c release` and run `swift run -c release lp-bench <benchmark>`.
@main
enum LPBench {
    static func main() async throws {
        let usage = """
            Usage: lp-bench <benchmark> [options]

            Benchmarks:
              static   the dashboard's static serving of a 10 KB file vs nginx (wrk)
                         --duration 10s  --connections 50  --threads 2  --rounds 3
              idle     RSS and CPU with no clients and with many idle keep-alive connections
                         --connections 10000  --seconds 10
              ingest   200-message batches through the store vs Python sqlite3 executemany, same SQL
                         --batches 1000  --batch-size 200  --rounds 3  --single-commits 5000
              e2e      end-to-end ingest: built-in simulator -> engine -> SQLite, messages/s
                         --messages 200000  --rounds 3
              search   two-word full-text searches on a store of a million messages (FTS5, the route's own
                       call) vs the same filter as LIKE '%word%'     --messages 1000000  --queries 200  --like 20
              typing   search as you type: two-word queries typed into the page's search box a character at a time
                       in headless Chromium, on that store; each keystroke to its results in the DOM
                         --messages 1000000  --queries 100
              cold-page
                       a cold page on that store in headless Chromium: the newest messages painted (LCP) and a first
                       click handled, vs the same page as drawn, scripts out, as a static file from nginx
                         --messages 1000000  --rounds 10
              export   GET /api/export of that store from the release dashboard: messages/s and RSS growth,
                       vs Python sqlite3 + json writing the same lines     --messages 1000000  --rounds 3
              fanout   one message to N parked polls, the dashboard (whole pipeline, then the feed alone)
                       vs nginx + Nchan (a configuration of its own, in a temporary folder), with this
                       program's own epoll client, whose CPU per answer is shown beside the servers' (N = 1
                       also with the machine kept warm: 2 ms between rounds, not 100); the median and range
                       of each ratio over the repeats; needs nginx and libnginx-mod-nchan
                         --subscribers 1,1000,5000  --rounds 20  --repeats 3
              feed-server
                       the dashboard's feed and HTTP server alone, a publish going straight into the
                       feed (no simulator, engine or SQLite), for the fan-out client     --port 0
              matrix   one message through a real Synapse to the dashboard's /api/poll vs a Python client
                       long-polling the same account's /sync, same run     --messages 200  --python PATH
                       (default: .build/synapse-venv/bin/python, which .ci/run makes)
              matrix-history
                       whole history through a real Synapse: rooms of messages from before the first start, the time
                       to a complete copy vs a bare client paging the same /messages, and a live message's trip
                       while fetching vs idle     --rooms 20  --per-room 2500  --python PATH
                       --database sqlite|postgres  Synapse's database (postgres: a cluster of its own, needs
                       PostgreSQL's server on PATH and psycopg2 in Synapse's Python)
                       --fill-cache DIR keeps the filled homeserver for the next run of the same size (the fill
                       takes about 25 minutes at the default size; each database is kept apart); --second-log FILE
                       keeps the fetching dashboard's trace-level log
              matrix-account
                       an account of many rooms on a real Synapse, each with messages, reactions and a thread: the
                       dashboard's first start until the chat list is on screen in headless Chromium, vs a bare client's
                       sign-in and one filtered initial /sync of the same account, alternated     --rooms 200  --rounds 5
                       --python PATH  --dashboard-log FILE (each round's dashboard logs at trace level to FILE.N)
              push-rules
                       the account's push rules run for each event (flattened, then every rule in order), this evaluator
                       vs Synapse's own (Rust, driven from its Python as its bulk evaluator does), the same events and
                       the rules Synapse serves; both must decide every event alike     --events 20000  --seed 51
                       --python PATH (default: .build/synapse-venv/bin/python)
              send     writing back: messages/s through the dashboard's outbox to the built-in simulator vs a client
                       posting the same messages to it directly (one chat; ten chats over both accounts), and a
                       local echo's time from a click on Send to the page's DOM in headless Chromium
                         --messages 5000  --rounds 5  --clicks 100
              pixel    publish to pixel: a message published from the page to the built-in simulator until its row
                       is in the page's DOM, in headless Chromium, one at a time, vs a minimal page long-polling
                       nginx + Nchan in the same browser     --messages 200
              growth   how cost grows: search p95, a cold page, the ingest rate and RSS on stores of each size,
                       and a message's p99 to every poll and RSS under each number of parked polls; a table,
                       and an SVG chart beside it in --out     --sizes 10000,100000,1000000
                       --polls 1,10,100,1000,10000  --out .build/lp-bench
              soak     writing held true for a while: messages written, deleted, the linked account swapped and
                       faults at random against the built-in simulator, then every message the simulator keeps checked
                       against the account that wrote it (none as another, none lost, none twice)
                         --seconds 600  --seed 1
              report   all of the above, plus 10,000 parked polls, cold start and fan-out against
                       nginx + Nchan, and one table of ratios (the growth table and chart in
                       .build/lp-bench)     --quick for a short run

            Debian packages: static needs wrk and nginx-light, fanout nginx-light and libnginx-mod-nchan,
            ingest and export python3, send and typing chromium, cold-page and growth chromium and nginx-light, pixel chromium, nginx-light and libnginx-mod-nchan; the Matrix ones the Synapse venv .ci/run makes.
            """

        func option(_ name: String, in arguments: [String], default value: String) -> String {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
            return arguments[index + 1]
        }

        func databaseOption(_ arguments: [String]) throws -> MatrixHistoryBenchmark.Database {
            let name = option("--database", in: arguments, default: "sqlite")
            guard let database = MatrixHistoryBenchmark.Database(rawValue: name) else {
                throw BenchError("--database \(name): one of " + MatrixHistoryBenchmark.Database.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return database
        }

        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let benchmark = arguments.first else {
            print(usage)
            exit(2)
        }
        arguments.removeFirst()
        // `lp-bench send --help` tells how to run it; it does not start a measure.
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            return
        }

        // Raise the open-file limit to its hard maximum: the idle benchmark holds thousands of sockets.
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        signal(SIGPIPE, SIG_IGN)

        do {
            switch benchmark {
            case "static":
                try StaticBenchmark.run(
                    duration: option("--duration", in: arguments, default: "10s"),
                    connections: Int(option("--connections", in: arguments, default: "50")) ?? 50,
                    threads: Int(option("--threads", in: arguments, default: "2")) ?? 2,
                    rounds: Int(option("--rounds", in: arguments, default: "3")) ?? 3
                )
            case "idle":
                try IdleBenchmark.run(
                    connections: Int(option("--connections", in: arguments, default: "10000")) ?? 10000,
                    seconds: Int(option("--seconds", in: arguments, default: "10")) ?? 10
                )
            case "ingest":
                try await IngestBenchmark.run(
                    batches: Int(option("--batches", in: arguments, default: "1000")) ?? 1000,
                    batchSize: Int(option("--batch-size", in: arguments, default: "200")) ?? 200,
                    rounds: Int(option("--rounds", in: arguments, default: "3")) ?? 3,
                    singleCommits: Int(option("--single-commits", in: arguments, default: "5000")) ?? 5000
                )
            case "e2e":
                try EndToEndBenchmark.run(
                    messages: Int(option("--messages", in: arguments, default: "200000")) ?? 200_000,
                    rounds: Int(option("--rounds", in: arguments, default: "3")) ?? 3
                )
            case "search":
                let corpus = try await HistoryBenchmark.Corpus(messages: Int(option("--messages", in: arguments, default: "1000000")) ?? 1_000_000)
                try await HistoryBenchmark.search(corpus: corpus, queries: Int(option("--queries", in: arguments, default: "200")) ?? 200,
                                                  likeQueries: Int(option("--like", in: arguments, default: "20")) ?? 20)
            case "typing":
                let corpus = try await HistoryBenchmark.Corpus(messages: Int(option("--messages", in: arguments, default: "1000000")) ?? 1_000_000)
                Report.printTable(try TypingBenchmark.run(corpus: corpus, queries: Int(option("--queries", in: arguments, default: "100")) ?? 100))
            case "cold-page":
                let corpus = try await HistoryBenchmark.Corpus(messages: Int(option("--messages", in: arguments, default: "1000000")) ?? 1_000_000)
                Report.printTable(try ColdPageBenchmark.run(corpus: corpus, rounds: Int(option("--rounds", in: arguments, default: "10")) ?? 10))
            case "export":
                let corpus = try await HistoryBenchmark.Corpus(messages: Int(option("--messages", in: arguments, default: "1000000")) ?? 1_000_000)
                try HistoryBenchmark.export(corpus: corpus, rounds: Int(option("--rounds", in: arguments, default: "3")) ?? 3)
            case "fanout":
                let counts = option("--subscribers", in: arguments, default: "1,1000,5000").split(separator: ",").compactMap { Int($0) }
                Report.printTable(try FanOutBenchmark.run(subscribers: counts, rounds: Int(option("--rounds", in: arguments, default: "20")) ?? 20,
                                                          repeats: Int(option("--repeats", in: arguments, default: "3")) ?? 3))
            case "feed-server":
                try await FeedOnlyServer.run(port: Int(option("--port", in: arguments, default: "0")) ?? 0)
            case "matrix":
                let python = arguments.firstIndex(of: "--python").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
                _ = try MatrixLatencyBenchmark.run(messages: Int(option("--messages", in: arguments, default: "200")) ?? 200, python: python)
            case "matrix-history":
                let python = arguments.firstIndex(of: "--python").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
                _ = try MatrixHistoryBenchmark.run(rooms: Int(option("--rooms", in: arguments, default: "20")) ?? 20,
                                                   perRoom: Int(option("--per-room", in: arguments, default: "2500")) ?? 2500, python: python,
                                                   database: try databaseOption(arguments),
                                                   fillCache: arguments.contains("--fill-cache") ? option("--fill-cache", in: arguments, default: "") : nil,
                                                   secondLog: arguments.contains("--second-log") ? option("--second-log", in: arguments, default: "") : nil)
            case "matrix-account":
                let python = arguments.firstIndex(of: "--python").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
                Report.printTable(try MatrixAccountBenchmark.run(rooms: Int(option("--rooms", in: arguments, default: "200")) ?? 200,
                                                                 rounds: Int(option("--rounds", in: arguments, default: "5")) ?? 5, python: python,
                                                                 dashboardLog: arguments.contains("--dashboard-log") ? option("--dashboard-log", in: arguments, default: "") : nil))
            case "push-rules":
                let python = arguments.firstIndex(of: "--python").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
                Report.printTable(try PushRuleBenchmark.run(events: Int(option("--events", in: arguments, default: "20000")) ?? 20000,
                                                            seed: Int(option("--seed", in: arguments, default: "51")) ?? 51, python: python))
            case "send":
                Report.printTable(try SendBenchmark.run(messages: Int(option("--messages", in: arguments, default: "5000")) ?? 5000,
                                                        rounds: Int(option("--rounds", in: arguments, default: "5")) ?? 5,
                                                        clicks: Int(option("--clicks", in: arguments, default: "100")) ?? 100))
            case "pixel":
                Report.printTable(try PixelBenchmark.run(messages: Int(option("--messages", in: arguments, default: "200")) ?? 200))
            case "growth":
                func counts(_ name: String, _ fallback: String) -> [Int] {
                    option(name, in: arguments, default: fallback).split(separator: ",").compactMap { Int($0) }
                }
                Report.printTable(try await GrowthBenchmark.run(storeSizes: counts("--sizes", "10000,100000,1000000"),
                                                                pollCounts: counts("--polls", "1,10,100,1000,10000"), queries: 100, coldRounds: 5,
                                                                fanOutRounds: 10, folder: option("--out", in: arguments, default: ".build/lp-bench")))
            case "soak":
                try WritingSoak.run(seconds: Int(option("--seconds", in: arguments, default: "600")) ?? 600,
                                    seed: UInt64(option("--seed", in: arguments, default: "1")) ?? 1)
            case "report":
                try await Report.run(quick: arguments.contains("--quick"))
            case "--help", "-h", "help":
                print(usage)
            default:
                FileHandle.standardError.write(Data("lp-bench: unknown benchmark \(benchmark.debugDescription)\n".utf8))
                exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("lp-bench: \(error)\n".utf8))
            exit(1)
        }
    }
}
