import Foundation

/// A cold page on a store of a million messages: the dashboard opened in headless Chromium with its
/// cache off, until the newest messages are painted (Chromium's largest contentful paint) and the
/// page answers input (a click's input delay, from Event Timing, the click sent as soon as the new
/// document has its body). The peer is what the browser itself needs for the same picture: the
/// page as the dashboard drew it, scripts taken out, written into a static file with its style
/// sheet and served by nginx.
enum ColdPageBenchmark {
    static func run(corpus: HistoryBenchmark.Corpus, rounds: Int) throws -> [ReportLine] {
        let (child, browser, dashboard) = try openDashboard(on: corpus)
        defer { child.stop() }

        let root = NSTemporaryDirectory() + "lp-bench-cold-page-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        guard let drawn = try browser.evaluate("""
            (() => {
              const page = document.documentElement.cloneNode(true);
              page.querySelectorAll('script').forEach((node) => node.remove());
              return '<!doctype html>\\n' + page.outerHTML;
            })()
            """) as? String else { throw BenchError("the page gave no HTML") }
        try drawn.write(toFile: root + "/index.html", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: try publicFolder() + "/style.css", toPath: root + "/style.css")
        let nginx = try NginxPeer(root: root)
        defer { nginx.stop() }

        var ours: [Measure] = [], peer: [Measure] = []
        for _ in 0..<rounds {
            ours.append(try measure(browser, url: dashboard, until: shown))
            peer.append(try measure(browser, url: "http://127.0.0.1:\(nginx.port)/index.html", until: shown))
        }
        let paint = median(ours.map(\.paint)), peerPaint = median(peer.map(\.paint))
        let input = median(ours.map(\.inputHandled)), peerInput = median(peer.map(\.inputHandled))
        print(String(format: "cold page on %d messages, median of %d: newest messages painted (LCP) %.0f ms against the static page's %.0f ms;"
                     + " a first click handled %.0f ms after navigation began against %.0f ms (its input delay %.1f against %.1f ms)",
                     corpus.messages, rounds, paint, peerPaint, input, peerInput,
                     median(ours.map(\.inputDelay)), median(peer.map(\.inputDelay))))
        return [
            ReportLine(name: "cold page, \(corpus.messages / 1000)k messages: newest painted (LCP, Chromium)", ours: String(format: "%.0f ms", paint),
                       peer: String(format: "static page %.0f ms", peerPaint), ratio: paint / peerPaint, goal: "<= 1.5x, <= 200 ms",
                       met: paint / peerPaint <= 1.5 && paint <= 200),
            ReportLine(name: "cold page: a first click handled, from navigation", ours: String(format: "%.0f ms", input),
                       peer: String(format: "static page %.0f ms", peerInput), ratio: input / peerInput, goal: "<= 1.5x, <= 200 ms",
                       met: input / peerInput <= 1.5 && input <= 200),
        ]
    }

    /// The dashboard alone on `corpus`: the median largest contentful paint of `rounds` cold
    /// openings, and its resident memory after them.
    static func dashboardOnly(corpus: HistoryBenchmark.Corpus, rounds: Int) throws -> (paint: Double, residentKiB: Int) {
        let (child, browser, dashboard) = try openDashboard(on: corpus)
        defer { child.stop() }
        var paints: [Double] = []
        for _ in 0..<rounds {
            paints.append(try measure(browser, url: dashboard, until: shown, describingTheLoad: false).paint)
        }
        return (median(paints), try ProcessStats.read(pid: child.pid).residentKiB)
    }

    /// The release dashboard on `corpus`, and Chromium with its cache off showing its newest
    /// messages. The access token is given once (it becomes a cookie); from then on the page is
    /// opened as a person reopens it, at `url`.
    private static func openDashboard(on corpus: HistoryBenchmark.Corpus) throws -> (child: ChildProcess, browser: HeadlessChromium, url: String) {
        let (child, endpoint) = try corpus.startDashboard()
        do {
            let browser = try HeadlessChromium()
            try browser.disableCache()
            let url = "http://127.0.0.1:\(endpoint.port)/"
            try browser.navigate(to: url + "?token=\(endpoint.token ?? "")")
            try browser.waitUntil(shown, what: "the newest messages shown")
            return (child, browser, url)
        } catch {
            child.stop()
            throw error
        }
    }

    /// The page shows the newest messages.
    static let shown = "document.querySelectorAll('[data-messages-for=\"primary\"] li.message').length >= 10"

    /// One opening of a page, in milliseconds from its navigation's start.
    struct Measure {
        var paint: Double
        var inputHandled: Double
        var inputDelay: Double
    }

    /// Two openings of the page: one left alone until its newest messages are painted (an input
    /// ends the browser's largest-contentful-paint record), one clicked as soon as its document has
    /// a body to take the click.
    private static func measure(_ browser: HeadlessChromium, url: String, until shown: String, describingTheLoad: Bool = true) throws -> Measure {
        try open(browser, url)
        try browser.waitUntil(shown, what: "the newest messages in \(url)")
        let paint = try figures(browser, url)[0]
        if describingTheLoad && url.hasSuffix("/") { try printLoad(browser) }
        try open(browser, url)
        try browser.waitUntil("document.body !== null", what: "\(url) begun", interval: 0.002)
        try browser.click(x: 5, y: 5)
        try browser.waitUntil(shown, what: "the newest messages in \(url)")
        let input = try figures(browser, url)
        guard paint >= 0, input[1] >= 0 else { throw BenchError("no paint or input timing from \(url)") }
        return Measure(paint: paint, inputHandled: input[1], inputDelay: input[2])
    }

    /// Where a page's load went, from Resource Timing: the modules and the API answers it waited
    /// for (the held poll's end is when it was answered, not a cost of the load).
    private static func printLoad(_ browser: HeadlessChromium) throws {
        guard let load = try browser.evaluate("""
            (() => {
              const all = performance.getEntriesByType('resource');
              const end = (filter) => Math.max(0, ...all.filter(filter).map((entry) => entry.responseEnd));
              const navigation = performance.getEntriesByType('navigation')[0];
              window.lpApi = all.filter((entry) => entry.name.includes('/api/'))
                .map((entry) => `${new URL(entry.name).pathname} ${Math.round(entry.startTime)}-${Math.round(entry.responseEnd)}`).join(', ');
              return [navigation.responseEnd, all.filter((entry) => entry.name.endsWith('.js')).length,
                      end((entry) => entry.name.endsWith('.js')), end((entry) => entry.name.endsWith('.css')),
                      end((entry) => entry.name.includes('/api/state')), end((entry) => entry.name.includes('/api/'))];
            })()
            """) as? [Double], load.count == 6 else { return }
        print("  API calls (start-end ms): " + ((try? browser.evaluate("window.lpApi")) as? String ?? ""))
        print(String(format: "  the page's load: HTML %.0f ms, %.0f modules by %.0f ms, style sheet %.0f ms, /api/state answered %.0f ms, the last API answer %.0f ms",
                     load[0], load[1], load[2], load[3], load[4], load[5]))
    }

    /// Starts opening `url` from a blank page and returns once the new document is there.
    private static func open(_ browser: HeadlessChromium, _ url: String) throws {
        try browser.startNavigation(to: "about:blank")
        try browser.waitUntil("location.href === 'about:blank' && document.readyState === 'complete'", what: "a blank page")
        try browser.startNavigation(to: url)
        try browser.waitUntil("location.href === \(SendBenchmark.jsonText(url))", what: "\(url) begun", interval: 0.002)
    }

    /// The page's largest contentful paint, its first input's end of processing and its input
    /// delay, in milliseconds from the navigation's start (-1 for what the page has none of).
    private static func figures(_ browser: HeadlessChromium, _ url: String) throws -> [Double] {
        let answer = try browser.evaluate("""
            (async () => {
              await new Promise((resolve) => setTimeout(resolve, 100));
              const entries = (type) => new Promise((resolve) => {
                new PerformanceObserver((list) => resolve(list.getEntries())).observe({ type, buffered: true });
                setTimeout(() => resolve([]), 1000);
              });
              const paints = await entries('largest-contentful-paint');
              const inputs = await entries('first-input');
              const paint = paints.at(-1), input = inputs[0];
              return [paint ? paint.startTime : -1, input ? input.processingEnd : -1, input ? input.processingStart - input.startTime : -1];
            })()
            """)
        guard let figures = answer as? [Double], figures.count == 3 else { throw BenchError("no timing from \(url): \(answer ?? "nothing")") }
        return figures
    }

    /// The dashboard's `Public` folder, as the dashboard finds it from the working directory.
    private static func publicFolder() throws -> String {
        let path = FileManager.default.currentDirectoryPath + "/Public"
        guard FileManager.default.fileExists(atPath: path + "/style.css") else { throw BenchError("no Public/style.css here: run lp-bench from the repository") }
        return path
    }
}
