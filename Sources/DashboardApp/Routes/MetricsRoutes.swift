import Engine
import HTTPCore

/// `GET /metrics` in the Prometheus text format (version 0.0.4).
struct MetricsRoutes {
    let services: DashboardServices

    func register(in router: inout Router) {
        router.add("GET", "/metrics") { _, _, _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                         body: Array(await text().utf8))
        }
    }

    func text() async -> String {
        let engine = await services.engine.engineCounters()
        let status = await services.engine.connectionStatus()
        let feed = await services.feed.statistics()
        let errors = await services.registry.openErrors()
        var metrics = PrometheusText()
        metrics.gauge("lp_engine_active_cycles", "Sync cycles current now (0 or 1).", Double(status.activeCycles))
        metrics.counter("lp_engine_stale_results_dropped_total", "Results that arrived for a cycle no longer current.", engine.staleResultsDropped)
        metrics.counter("lp_engine_second_polls_refused_total", "Long polls refused because another was in flight (never expected: a guard).",
                        engine.secondPollsRefused)
        metrics.counter("lp_engine_cycles_started_total", "Sync cycles started.", engine.cyclesStarted)
        metrics.counter("lp_engine_reconnects_total", "Cycles started again after a failure.", engine.reconnects)
        metrics.counter("lp_engine_token_refreshes_total", "Silent token refreshes after a 401.", engine.tokenRefreshes)
        metrics.counter("lp_engine_upstream_behind_total", "Cursor syncs that found the upstream behind the local copy (reset or restored).",
                        engine.upstreamBehind)
        metrics.family("lp_engine_polls_total", "counter", "Upstream polls by outcome.", [
            (["outcome": "started"], Double(engine.pollsStarted)),
            (["outcome": "answered"], Double(engine.pollsSucceeded)),
            (["outcome": "failed"], Double(engine.pollsFailed)),
        ])
        metrics.histogram("lp_engine_backoff_seconds", "Backoff waits drawn.", engine.backoff)
        metrics.family("lp_engine_messages_stored_total", "counter", "New messages stored, per account.",
                       ["primary", "linked"].map { (["account": $0], Double(engine.messagesStored[$0] ?? 0)) })
        metrics.family("lp_engine_state", "gauge", "1 for the current connection state.",
                       ConnectionState.allCases.map { (["state": $0.rawValue], $0 == status.state ? 1 : 0) })
        metrics.gauge("lp_feed_parked_polls", "Dashboard polls held open now.", Double(feed.parkedPolls))
        metrics.family("lp_feed_polls_total", "counter", "Dashboard polls by outcome.", [
            (["outcome": "received"], Double(feed.polls)),
            (["outcome": "woken"], Double(feed.pollsWoken)),
            (["outcome": "timeout"], Double(feed.timeouts)),
            (["outcome": "client_gone"], Double(feed.abandoned)),
            (["outcome": "reset"], Double(feed.resets)),
        ])
        metrics.counter("lp_feed_events_total", "Events published to the feed.", feed.published)
        metrics.histogram("lp_feed_wake_seconds", "Time from a publish to every parked poll answered (one wake pass).", feed.wakeSeconds)
        metrics.gauge("lp_errors_open", "Recoverable errors open now.", Double(errors.count))
        if let http = services.httpStatistics() {
            metrics.family("lp_http_responses_total", "counter", "HTTP responses by status.",
                           http.responsesByStatus.sorted { $0.key < $1.key }.map { (["status": String($0.key)], Double($0.value)) })
            metrics.gauge("lp_http_open_connections", "Open HTTP connections.", Double(http.openConnections))
            metrics.counter("lp_http_connections_refused_total", "Connections refused with 503.", http.connectionsRefused)
        }
        return metrics.text
    }
}

/// Builds the text exposition format: `# HELP`, `# TYPE`, then samples.
struct PrometheusText {
    private(set) var text = ""

    mutating func counter(_ name: String, _ help: String, _ value: Int) {
        family(name, "counter", help, [([:], Double(value))])
    }

    mutating func gauge(_ name: String, _ help: String, _ value: Double) {
        family(name, "gauge", help, [([:], value)])
    }

    mutating func family(_ name: String, _ type: String, _ help: String, _ samples: [([String: String], Double)]) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for (labels, value) in samples {
            text += name + Self.labels(labels) + " " + Self.number(value) + "\n"
        }
    }

    mutating func histogram(_ name: String, _ help: String, _ histogram: Histogram) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (bound, count) in zip(histogram.bounds, histogram.cumulative) {
            text += "\(name)_bucket{le=\"\(Self.number(bound))\"} \(count)\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(histogram.count)\n"
        text += "\(name)_sum \(Self.number(histogram.sum))\n"
        text += "\(name)_count \(histogram.count)\n"
    }

    private static func labels(_ labels: [String: String]) -> String {
        guard !labels.isEmpty else { return "" }
        let pairs = labels.sorted { $0.key < $1.key }.map { key, value in
            "\(key)=\"\(value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
        }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
