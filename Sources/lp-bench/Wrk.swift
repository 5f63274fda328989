import Foundation

/// One wrk run and the figures it printed.
struct WrkResult {
    var requestsPerSecond: Double
    var latencyP50: String
    var latencyP99: String
    var errors: String?

    static func run(url: String, threads: Int, connections: Int, duration: String) throws -> WrkResult {
        guard let wrk = findExecutable("wrk") else { throw BenchError("wrk not found (apt-get install wrk)") }
        let output = try runCommand(wrk, ["-t\(threads)", "-c\(connections)", "-d\(duration)", "--latency", url])
        func value(after label: String) -> String? {
            output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
                .map { $0.trimmingCharacters(in: .whitespaces).dropFirst(label.count).trimmingCharacters(in: .whitespaces) }
        }
        guard let rate = value(after: "Requests/sec:").flatMap(Double.init) else {
            throw BenchError("cannot read wrk's output:\n\(output)")
        }
        let errors = output.split(separator: "\n").first { $0.contains("Socket errors") || $0.contains("Non-2xx") }
        return WrkResult(requestsPerSecond: rate, latencyP50: value(after: "50%") ?? "?", latencyP99: value(after: "99%") ?? "?",
                         errors: errors.map(String.init))
    }
}
