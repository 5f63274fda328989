import Foundation

/// Publish to pixel: a message published to the built-in simulator until its row is in the
/// page's DOM, in real headless Chromium, one message at a time. Timed inside the page: the
/// publish is a `fetch` from the page, the arrival the `MutationObserver` callback that first
/// sees the row. The peer is nginx + Nchan with a minimal page of its own that long-polls Nchan
/// and inserts the same row the same way (a JSON message parsed, an `li` appended), in the same
/// browser and the same run.
enum PixelBenchmark {
    /// Messages sent before the timed ones, so neither side is timed while it warms up.
    static let warmUp = 10

    static func run(messages: Int) throws -> [ReportLine] {
        let browser = try HeadlessChromium()
        let ours = try dashboardTimes(browser: browser, messages: messages)
        let peer = try nchanTimes(browser: browser, messages: messages)
        let (p50, p99) = (percentile(ours.shown, 0.5), percentile(ours.shown, 0.99))
        let (peerP50, peerP99) = (percentile(peer.shown, 0.5), percentile(peer.shown, 0.99))
        print(String(format: "publish to pixel, %d messages one at a time: dashboard p50 %.2f ms, p99 %.2f ms; nginx + Nchan p50 %.2f ms, p99 %.2f ms",
                     messages, p50, p99, peerP50, peerP99))
        print(String(format: "  of it, publish to the poll's answer in the page (Resource Timing): dashboard p50 %.2f ms, Nchan p50 %.2f ms;"
                     + " the answer to the row: dashboard p50 %.2f ms, Nchan p50 %.2f ms",
                     percentile(ours.answered, 0.5), percentile(peer.answered, 0.5),
                     percentile(zip(ours.shown, ours.answered).map { $0 - $1 }, 0.5), percentile(zip(peer.shown, peer.answered).map { $0 - $1 }, 0.5)))
        print(String(format: "  ratios: p50 %.2fx (goal <= 1.2x), p99 %.2fx (goal <= 1.5x); p50 within one frame (16.7 ms): %@",
                     p50 / peerP50, p99 / peerP99, p50 <= 16.7 ? "yes" : "no"))
        return [
            ReportLine(name: "publish to pixel (Chromium), p50", ours: String(format: "%.2f ms", p50), peer: String(format: "Nchan %.2f ms", peerP50),
                       ratio: p50 / peerP50, goal: "<= 1.2x, <= 16.7 ms", met: p50 / peerP50 <= 1.2 && p50 <= 16.7),
            ReportLine(name: "publish to pixel (Chromium), p99", ours: String(format: "%.2f ms", p99), peer: String(format: "Nchan %.2f ms", peerP99),
                       ratio: p99 / peerP99, goal: "<= 1.5x", met: p99 / peerP99 <= 1.5),
        ]
    }

    /// The dashboard with its built-in simulator, the page open; the page publishes through the
    /// dashboard's simulator control (`/api/simulator/messages`) and watches the account's pane.
    private static func dashboardTimes(browser: HeadlessChromium, messages: Int) throws -> Times {
        let (child, endpoint) = try startDashboard(arguments: ["--no-demo", "--always-on", "--db", ":memory:"])
        defer { child.stop() }
        try browser.navigate(to: "http://127.0.0.1:\(endpoint.port)/?token=\(endpoint.token ?? "")")
        try browser.waitUntil("document.querySelector('#connection-text')?.textContent === 'Live'", what: "the dashboard live")
        try browser.evaluate("""
            (async () => {
              const csrf = (await (await fetch('/api/session')).json()).csrfToken;
              window.lpPublish = (text) => fetch('/api/simulator/messages', {
                method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
                body: JSON.stringify({ account: 'primary', count: 1, text }),
              });
              return true;
            })()
            """)
        return try timed(browser: browser, messages: messages, list: "document.querySelector('[data-messages-for=\"primary\"]')", poll: "/api/poll")
    }

    /// nginx + Nchan serving the peer page, which long-polls `/sub` and publishes to `/pub`.
    private static func nchanTimes(browser: HeadlessChromium, messages: Int) throws -> Times {
        let root = NSTemporaryDirectory() + "lp-bench-pixel-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try peerPage.write(toFile: root + "/index.html", atomically: true, encoding: .utf8)
        let nginx = try NginxPeer(root: root, nchan: true)
        defer { nginx.stop() }
        try browser.navigate(to: "http://127.0.0.1:\(nginx.port)/index.html")
        try browser.waitUntil("window.lpSubscribed === true", what: "the peer page subscribed")
        return try timed(browser: browser, messages: messages, list: "document.getElementById('messages')", poll: "/sub?id=pixel")
    }

    /// Per message, from just before its publish: when the poll answer that brought it had come
    /// (Resource Timing's `responseEnd`), and when the observer saw its row.
    struct Times {
        var answered: [Double]
        var shown: [Double]
    }

    /// Runs the timing loop in the page (`window.lpPublish` set up, `list` the element the rows go
    /// into, `poll` a part of the long poll's address).
    private static func timed(browser: HeadlessChromium, messages: Int, list: String, poll: String) throws -> Times {
        let times = try browser.evaluate("""
            (async () => {
              performance.setResourceTimingBufferSize(100000);
              performance.clearResourceTimings();
              const list = \(list);
              const runs = [];
              for (let number = 0; number < \(messages + warmUp); number++) {
                const text = `Pixel ${number} ${Math.random().toString(36).slice(2, 10)}`;
                const shown = new Promise((resolve) => {
                  const observer = new MutationObserver(() => {
                    if (list.textContent.includes(text)) { observer.disconnect(); resolve(performance.now()); }
                  });
                  observer.observe(list, { childList: true, subtree: true, characterData: true });
                });
                const started = performance.now();
                window.lpPublish(text);  // not awaited: the row may come before the publish's answer
                const at = await shown;
                if (number >= \(warmUp)) runs.push([started, at]);
              }
              // Each row came from a poll answer read in full, so its Resource Timing entry is there already.
              const ends = performance.getEntriesByType('resource').filter((entry) => entry.name.includes(\(SendBenchmark.jsonText(poll))))
                .map((entry) => entry.responseEnd).sort((a, b) => a - b);
              return runs.map(([started, at]) => {
                const answered = ends.find((end) => end >= started && end <= at) ?? at;
                return [answered - started, at - started];
              });
            })()
            """) as? [[Double]]
        guard let times, times.count == messages, times.allSatisfy({ $0.count == 2 }) else { throw BenchError("the page gave no times") }
        return Times(answered: times.map { $0[0] }, shown: times.map { $0[1] })
    }

    /// The peer's page: Nchan's long-poll protocol (the answer's `Last-Modified` and `Etag` sent
    /// back as `If-Modified-Since` and `If-None-Match` arm the next poll), each message a JSON
    /// object whose text becomes a row, as the dashboard's page does with its own.
    static let peerPage = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>nginx + Nchan peer</title></head>
        <body><ol id="messages"></ol>
        <script type="module">
          const list = document.getElementById('messages');
          window.lpPublish = (text) => fetch('/pub?id=pixel', { method: 'POST', body: JSON.stringify({ text }) });
          let lastModified = null, etag = null;
          async function poll() {
            for (;;) {
              const headers = {};
              if (lastModified) headers['If-Modified-Since'] = lastModified;
              if (etag) headers['If-None-Match'] = etag;
              window.lpSubscribed = true;
              let response;
              try {
                response = await fetch('/sub?id=pixel', { headers, cache: 'no-store' });
              } catch {
                await new Promise((resolve) => setTimeout(resolve, 100));
                continue;
              }
              if (response.status !== 200) continue;
              lastModified = response.headers.get('Last-Modified');
              etag = response.headers.get('Etag');
              const message = await response.json();
              const row = document.createElement('li');
              const text = document.createElement('p');
              text.className = 'text';
              text.textContent = message.text;
              row.append(text);
              list.prepend(row);
            }
          }
          poll();
        </script></body></html>
        """
}
