import ChatSimulator
import Foundation

/// Search as you type: two-word queries typed into the page's search box a character at a time,
/// in headless Chromium, on a store of a million messages. Each keystroke (`Input.insertText`, a
/// trusted `input` event) is timed inside the page from its event time stamp to the moment the
/// results for what the box then says are in the DOM (the results list says which text it
/// answers in `data-query`); the next character is typed once they are.
enum TypingBenchmark {
    static func run(corpus: HistoryBenchmark.Corpus, queries: Int) throws -> [ReportLine] {
        let (child, endpoint) = try corpus.startDashboard()
        defer { child.stop() }
        let browser = try HeadlessChromium()
        try browser.navigate(to: "http://127.0.0.1:\(endpoint.port)/?token=\(endpoint.token ?? "")")
        try browser.waitUntil("document.querySelector('#search-field') !== null && document.querySelector('#search-results') !== null",
                              what: "the search box")
        // What the page shows, with when, recorded as it happens: a check made later would time the check.
        try browser.evaluate("""
            (() => {
              const field = document.querySelector('#search-field'), list = document.querySelector('#search-results');
              window.lpTyping = { typedAt: 0, value: '', shown: new Map() };
              field.addEventListener('input', (event) => { lpTyping.typedAt = event.timeStamp; lpTyping.value = field.value; }, { capture: true });
              new MutationObserver(() => {
                const query = list.dataset.query;
                if (query !== undefined && !lpTyping.shown.has(query)) lpTyping.shown.set(query, performance.now());
              }).observe(list, { attributes: true, attributeFilter: ['data-query'], childList: true });
              field.focus();
              return true;
            })()
            """)
        // What the server takes for a word as it is typed, letter by letter (the page's own request).
        let sample = corpus.vocabulary[20]
        var prefixTimes: [String] = []
        for length in 1...sample.count {
            let prefix = String(sample.prefix(length))
            let started = DispatchTime.now().uptimeNanoseconds
            _ = try endpoint.get("/api/search?q=\(prefix)&account=primary&limit=20")
            prefixTimes.append(String(format: "%@ %.1f ms", prefix, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6))
        }
        print("  the server, /api/search for a word being typed: " + prefixTimes.joined(separator: ", "))
        var random = SeededGenerator(seed: 11)
        var times: [Double] = []
        var fullQueries: [Double] = []
        for number in 0..<queries {
            // Words a person would look for, as the search benchmark picks them.
            let text = corpus.vocabulary[Int.random(in: 20..<2000, using: &random)] + " " + corpus.vocabulary[Int.random(in: 20..<2000, using: &random)]
            try browser.evaluate("document.querySelector('#search-field').value = ''; lpTyping.shown.clear(); true")
            for character in text {
                try browser.insertText(String(character))
                let elapsed = try browser.evaluate("""
                    new Promise((resolve, reject) => {
                      const deadline = performance.now() + 10000;
                      const look = () => {
                        const shown = lpTyping.shown.get(lpTyping.value);
                        if (shown !== undefined) resolve(shown - lpTyping.typedAt);
                        else if (performance.now() > deadline) reject(new Error('no results for ' + JSON.stringify(lpTyping.value)));
                        else setTimeout(look, 1);
                      };
                      look();
                    })
                    """) as? Double
                guard let elapsed else { throw BenchError("no time for query \(number) from the page") }
                times.append(elapsed)
            }
            fullQueries.append(times.last ?? 0)
        }
        let p50 = percentile(times, 0.5), p95 = percentile(times, 0.95)
        print(String(format: "search as you type, %d queries (%d keystrokes) on %d messages: keystroke to results in the DOM p50 %.1f ms, p95 %.1f ms, worst %.1f ms",
                     queries, times.count, corpus.messages, p50, p95, times.max() ?? 0))
        print(String(format: "  the last keystroke of each query (both words whole but the last): p50 %.1f ms, p95 %.1f ms",
                     percentile(fullQueries, 0.5), percentile(fullQueries, 0.95)))
        return [ReportLine(name: "search as you type, keystroke to results (Chromium), \(corpus.messages / 1000)k messages, p95",
                           ours: String(format: "%.1f ms (p50 %.1f ms)", p95, p50), peer: "", ratio: nil, goal: "<= 50 ms", met: p95 <= 50)]
    }
}
