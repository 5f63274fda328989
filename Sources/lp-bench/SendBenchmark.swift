import ChatSimulator
import Foundation

/// Writing back: messages per second through the dashboard's outbox to the built-in simulator,
/// against a client that posts the same messages to the simulator directly, in the same run and
/// the same process; and a local echo's time from the click on Send to its row in the page's DOM,
/// in real headless Chromium.
///
/// The outbox's rate is its sender's: the messages are written while syncing is stopped, and the
/// clock runs from the start of syncing to the simulator's count of the last one. Writing them
/// and sending them at once (a client posting to the dashboard as fast as it answers) is printed
/// beside it. The outbox sends one request at a time per account, so "ten chats" is the five chats
/// of each of the two accounts, and the direct client posts them the same way: one connection per
/// account, one request at a time on each.
enum SendBenchmark {
    static func run(messages: Int, rounds: Int, clicks: Int) throws -> [ReportLine] {
        let folder = NSTemporaryDirectory() + "lp-bench-send-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A store file, as a person has it: the outbox's writes are real commits.
        let child = try ChildProcess(name: "dashboard", executable: try dashboardBinary(),
                                     arguments: ["--port", "0", "--log-level", "warning", "--always-on", "--no-demo",
                                                 "--db", folder + "/store.sqlite", "--quota", "100000000000"])
        defer { child.stop() }
        let simulator = try port(inReadyLine: try child.waitForLine(startingWith: "simulator listening on http://"))
        let dashboard = try Dashboard(endpoint: BenchEndpoint(readyLine: try child.waitForLine(startingWith: "dashboard listening on http://")))
        let chats = try prepareChats(dashboard: dashboard, simulator: simulator)
        let upstream = try UpstreamSession(simulator: simulator)

        print("sending: \(messages) messages per measure, \(rounds) round(s), the median of each; one request at a time per account")
        var lines: [ReportLine] = []
        for (name, targets) in [("one chat", [Target(account: .primary, chats: [chats.primary[0]])]),
                                ("ten chats", [Target(account: .primary, chats: chats.primary), Target(account: .linked, chats: chats.linked)])] {
            var direct: [Double] = [], outbox: [Double] = [], together: [Double] = []
            var directCPU: [Double] = [], outboxCPU: [Double] = []
            /// The dashboard process's CPU time (the built-in simulator's included) per message.
            func cpuPerMessage(since ticks: Int) throws -> Double {
                Double(try ProcessStats.read(pid: child.pid).cpuTicks - ticks) / ProcessStats.ticksPerSecond * 1e6 / Double(messages)
            }
            for round in 1...rounds {
                try upstream.reconnect()
                dashboard.reconnect()
                var ticks = try ProcessStats.read(pid: child.pid).cpuTicks
                let directRate = try measure(messages: messages, simulator: simulator, targets: targets) { target, text, key in
                    try upstream.send(text, to: target.upstreamChat, as: target.account, key: key)
                }
                directCPU.append(try cpuPerMessage(since: ticks))
                try dashboard.engine("stop", until: "stopped")
                _ = try measure(messages: messages, simulator: nil, targets: targets) { target, text, key in
                    try dashboard.write(text, to: target.dashboardChat, of: target.account, key: key)
                }
                let before = try sentToChats(simulator), started = Date()
                ticks = try ProcessStats.read(pid: child.pid).cpuTicks
                try dashboard.engine("start", until: nil)
                try waitForSent(before + messages, simulator: simulator)
                let outboxRate = Double(messages) / Date().timeIntervalSince(started)
                outboxCPU.append(try cpuPerMessage(since: ticks))
                let togetherRate = try measure(messages: messages, simulator: simulator, targets: targets) { target, text, key in
                    try dashboard.write(text, to: target.dashboardChat, of: target.account, key: key)
                }
                direct.append(directRate)
                outbox.append(outboxRate)
                together.append(togetherRate)
                print(String(format: "  %@, round %d: outbox %.0f msg/s, direct %.0f msg/s; written and sent at once %.0f msg/s",
                             name, round, outboxRate, directRate, togetherRate))
            }
            print(String(format: "  the dashboard's CPU per message (the simulator's and the echo's storing included): outbox %.0f us, direct %.0f us",
                         median(outboxCPU), median(directCPU)))
            let ratio = median(outbox) / median(direct)
            print(String(format: "%@: outbox %.0f msg/s, direct %.0f msg/s: %.2fx (goal >= 0.9x); written and sent at once %.0f msg/s (%.2fx)",
                         name, median(outbox), median(direct), ratio, median(together), median(together) / median(direct)))
            lines.append(ReportLine(name: "sends through the outbox, \(name), vs posting directly", ours: String(format: "%.0f msg/s", median(outbox)),
                                    peer: String(format: "%.0f msg/s", median(direct)), ratio: ratio, goal: ">= 0.9x", met: ratio >= 0.9))
            lines.append(ReportLine(name: "written into the outbox and sent at once, \(name)", ours: String(format: "%.0f msg/s", median(together)),
                                    peer: String(format: "%.0f msg/s", median(direct)), ratio: median(together) / median(direct), goal: "", met: true))
        }

        let echoes = try echoTimes(dashboard: dashboard, chat: chats.primary[0], clicks: clicks)
        let p50 = percentile(echoes, 0.5), p99 = percentile(echoes, 0.99)
        print(String(format: "local echo, click to DOM in Chromium: p50 %.1f ms, p99 %.1f ms, worst %.1f ms over %d clicks (goal p50 <= 16 ms)",
                     p50, p99, echoes.max() ?? 0, echoes.count))
        lines.append(ReportLine(name: "local echo, click on Send to the DOM (Chromium)", ours: String(format: "p50 %.1f ms, p99 %.1f ms", p50, p99),
                                peer: "", ratio: nil, goal: "p50 <= 16 ms", met: p50 <= 16))
        return lines
    }

    enum Account: String {
        case primary, linked
    }

    /// A chat as each side names it: the dashboard's id and the simulator's.
    struct Chat {
        var dashboardChat: Int64
        var upstreamChat: Int64
    }

    /// One sender's share of a measure: an account and the chats it writes in, in turn.
    struct Target {
        var account: Account
        var chats: [Chat]
    }

    /// Sends `messages` split evenly over the targets, each target on its own thread (one request
    /// at a time, as the outbox sends per account), and returns the messages the simulator took
    /// per second, counted from the first request to the simulator's count of the last one (with
    /// no simulator, to the last answer).
    private static func measure(messages: Int, simulator: Int?, targets: [Target],
                                send: @escaping @Sendable (_ target: (account: Account, dashboardChat: Int64, upstreamChat: Int64), _ text: String,
                                                           _ key: String) throws -> Void) throws -> Double {
        let before = try simulator.map(sentToChats) ?? 0
        let run = UUID().uuidString.prefix(8)
        let failures = FailureBox()
        let started = Date()
        let group = DispatchGroup()
        for (index, target) in targets.enumerated() {
            let share = messages / targets.count + (index < messages % targets.count ? 1 : 0)
            let chats = target.chats, account = target.account
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    for number in 0..<share {
                        let chat = chats[number % chats.count]
                        try send((account, chat.dashboardChat, chat.upstreamChat), "Message \(number) of \(run)", "\(run)-\(account)-\(number)")
                    }
                } catch {
                    failures.record(error)
                }
            }
        }
        group.wait()
        if let failure = failures.first { throw failure }
        if let simulator { try waitForSent(before + messages, simulator: simulator) }
        return Double(messages) / Date().timeIntervalSince(started)
    }

    /// Asks the simulator every 2 ms, on one kept-alive connection: the simulator shares its loop
    /// thread with the sends being measured, and a new connection every 0.5 ms (as this asked
    /// before) took a share of it that a direct client's run, which asks only at its end, never paid.
    private static func waitForSent(_ count: Int, simulator: Int) throws {
        let deadline = Date().addingTimeInterval(120)
        let connection = try KeepAliveConnection(port: simulator)
        func sent() throws -> Int {
            let answer = try connection.request("GET", "/sim/stats")
            return try jsonObject(answer.body)["sentToChats"] as? Int ?? 0
        }
        while try sent() < count {
            guard Date() < deadline else { throw BenchError("the simulator got \(try sent()) of \(count) messages in 120 s") }
            usleep(2000)
        }
    }

    /// The dashboard's API as a client of it: the token, the CSRF token, one kept-alive connection.
    final class Dashboard: @unchecked Sendable {
        let endpoint: BenchEndpoint
        private let csrf: String
        private let lock = NSLock()
        private var connections: [Account: KeepAliveConnection] = [:]

        /// New connections from the next request on: the server closes one that stayed idle for long.
        func reconnect() {
            lock.lock()
            connections = [:]
            lock.unlock()
        }

        init(endpoint: BenchEndpoint) throws {
            self.endpoint = endpoint
            csrf = try jsonObject(endpoint.get("/api/session"))["csrfToken"] as? String ?? ""
        }

        /// `POST /api/chats/{id}/messages`: into the outbox (202), the sending is the dashboard's.
        func write(_ text: String, to chat: Int64, of account: Account, key: String) throws {
            let answer = try connection(for: account).request("POST", "/api/chats/\(chat)/messages?account=\(account.rawValue)", headers: [
                ("Authorization", "Bearer \(endpoint.token ?? "")"), ("Content-Type", "application/json"), ("X-CSRF-Token", csrf),
                ("Idempotency-Key", key),
            ], body: SendBenchmark.jsonText(["text": text]))
            guard answer.status == 202 else { throw BenchError("the dashboard answered \(answer.status) to a message: \(String(decoding: answer.body, as: UTF8.self))") }
        }

        /// `POST /api/engine/start|stop`, then (with `until`) waits for that connection state.
        func engine(_ action: String, until state: String?) throws {
            let answer = try connection(for: .primary).request("POST", "/api/engine/\(action)", headers: [
                ("Authorization", "Bearer \(endpoint.token ?? "")"), ("X-CSRF-Token", csrf),
            ], body: "")
            guard answer.status == 202 else { throw BenchError("the dashboard answered \(answer.status) to \(action)") }
            guard let state else { return }
            let deadline = Date().addingTimeInterval(10)
            while ((try jsonObject(endpoint.get("/api/state"))["connection"] as? [String: Any])?["state"] as? String) != state {
                guard Date() < deadline else { throw BenchError("the dashboard did not become \(state)") }
                usleep(2000)
            }
        }

        func chats(of account: Account) throws -> [[String: Any]] {
            try jsonObject(endpoint.get("/api/chats?account=\(account.rawValue)"))["chats"] as? [[String: Any]] ?? []
        }

        private func connection(for account: Account) throws -> KeepAliveConnection {
            lock.lock()
            defer { lock.unlock() }
            if let connection = connections[account] { return connection }
            let connection = try KeepAliveConnection(port: endpoint.port)
            connections[account] = connection
            return connection
        }
    }

    /// The simulator's `POST /v1/messages` as a client of its own would call it: a session of its
    /// own, one kept-alive connection per account.
    final class UpstreamSession: @unchecked Sendable {
        private let token: String
        private let users: [Account: Int64]
        private var connections: [Account: KeepAliveConnection]
        private let simulator: Int

        /// New connections from the next request on: the server closes one that stayed idle for long.
        func reconnect() throws {
            connections = [.primary: try KeepAliveConnection(port: simulator), .linked: try KeepAliveConnection(port: simulator)]
        }

        init(simulator: Int) throws {
            let session = try jsonObject(httpExchange(port: simulator, request: "POST /v1/session HTTP/1.1\r\nHost: 127.0.0.1:\(simulator)\r\n"
                + "Content-Length: 0\r\nConnection: close\r\n\r\n"))
            guard let token = session["token"] as? String, let primary = session["primaryUserId"] as? Int,
                  let linked = session["linkedUserId"] as? Int else {
                throw BenchError("the simulator's session has no token or no linked account: \(session)")
            }
            self.token = token
            self.simulator = simulator
            users = [.primary: Int64(primary), .linked: Int64(linked)]
            connections = [.primary: try KeepAliveConnection(port: simulator), .linked: try KeepAliveConnection(port: simulator)]
        }

        func send(_ text: String, to chat: Int64, as account: Account, key: String) throws {
            let answer = try connections[account]!.request("POST", "/v1/messages", headers: [
                ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"), ("Idempotency-Key", key),
            ], body: SendBenchmark.jsonText(["userId": users[account]!, "chatId": chat, "text": text]))
            guard answer.status == 200 else { throw BenchError("the simulator answered \(answer.status) to a message") }
        }
    }

    /// Turns the linked account on, publishes to every chat of both accounts, and waits until the
    /// dashboard lists them: five chats each, by the dashboard's id and the simulator's.
    private static func prepareChats(dashboard: Dashboard, simulator: Int) throws -> (primary: [Chat], linked: [Chat]) {
        _ = try postJSON(port: simulator, path: "/sim/linked", body: #"{"linked": true}"#)
        for account in [Account.primary, .linked] {
            _ = try postJSON(port: simulator, path: "/sim/messages", body: #"{"account": "\#(account.rawValue)", "count": 200}"#)
        }
        let names = upstreamChatsByName()
        let deadline = Date().addingTimeInterval(30)
        while true {
            let primary = try dashboard.chats(of: .primary), linked = try dashboard.chats(of: .linked)
            if primary.count >= 5 && linked.count >= 5 {
                func chats(_ list: [[String: Any]]) throws -> [Chat] {
                    try list.prefix(5).map { chat in
                        guard let id = chat["id"] as? Int, let name = chat["name"] as? String, let upstream = names[name] else {
                            throw BenchError("a chat the simulator does not know: \(chat)")
                        }
                        return Chat(dashboardChat: Int64(id), upstreamChat: upstream)
                    }
                }
                return (try chats(primary), try chats(linked))
            }
            guard Date() < deadline else { throw BenchError("the dashboard lists \(primary.count) and \(linked.count) chats, not 5 and 5") }
            usleep(20_000)
        }
    }

    /// The simulator's chats by name: its ids run from 1 in the order of its list of names.
    private static func upstreamChatsByName() -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: ChatSimulator.chatNames.enumerated().map { ($1, Int64($0 + 1)) })
    }

    /// The local echo's time, in Chromium: the chat open in the real page, a text in its box, a
    /// trusted click on Send; from the click's event time to the echo's row in the DOM, both read by
    /// the page's own clock. Each message is sent before the next click.
    private static func echoTimes(dashboard: Dashboard, chat: Chat, clicks: Int) throws -> [Double] {
        let browser = try HeadlessChromium()
        try browser.navigate(to: "http://127.0.0.1:\(dashboard.endpoint.port)/?token=\(dashboard.endpoint.token ?? "")")
        try browser.waitUntil("document.querySelector('#chats [data-chat=\"\(chat.dashboardChat)\"]') !== null", what: "the chat listed")
        try browser.evaluate("document.querySelector('#chats [data-chat=\"\(chat.dashboardChat)\"]').click(), true")
        try browser.waitUntil("document.querySelector('#chat-view').open && !document.querySelector('#chat-send').disabled", what: "the chat open")

        var times: [Double] = []
        let warmUp = 5
        for number in 0..<(clicks + warmUp) {
            let text = "Echo \(number) at \(UUID().uuidString.prefix(8))"
            // The observer and the click listener are set up first; the promise resolves with the time
            // from the click (its event time) to the first DOM change that shows the text.
            let point = try browser.evaluate("""
                (() => {
                  const text = \(jsonText(text));
                  const box = document.querySelector('#chat-text'), button = document.querySelector('#chat-send');
                  box.value = text;
                  box.dispatchEvent(new Event('input'));
                  let clickedAt = null;
                  button.addEventListener('click', (event) => { clickedAt = event.timeStamp; }, { once: true, capture: true });
                  window.lpEcho = new Promise((resolve) => {
                    const observer = new MutationObserver(() => {
                      const shown = [...document.querySelectorAll('#chat-outbox .text, #chat-messages .text')].some((node) => node.textContent === text);
                      if (shown && clickedAt !== null) { observer.disconnect(); resolve(performance.now() - clickedAt); }
                    });
                    observer.observe(document.querySelector('#chat-view'), { childList: true, subtree: true, characterData: true });
                  });
                  button.scrollIntoView({ block: 'nearest' });
                  const box2 = button.getBoundingClientRect();
                  return [box2.x + box2.width / 2, box2.y + box2.height / 2];
                })()
                """) as? [Double]
            guard let point, point.count == 2 else { throw BenchError("the Send button has no place on the page") }
            try browser.click(x: point[0], y: point[1])
            guard let elapsed = try browser.evaluate("window.lpEcho") as? Double else { throw BenchError("no echo time from the page") }
            if number >= warmUp { times.append(elapsed) }
            try browser.waitUntil("document.querySelectorAll('#chat-outbox .message').length === 0", what: "echo \(number) sent")
        }
        return times
    }

    private static func sentToChats(_ simulator: Int) throws -> Int {
        try jsonObject(httpGet(port: simulator, path: "/sim/stats"))["sentToChats"] as? Int ?? 0
    }



    /// A string as a JSON (and JavaScript) literal, or an object of plain values as JSON.
    static func jsonText(_ value: Any) -> String {
        if let string = value as? String { return String(decoding: (try? JSONEncoder().encode(string)) ?? Data("\"\"".utf8), as: UTF8.self) }
        return String(decoding: (try? JSONSerialization.data(withJSONObject: value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}

/// The first error of the sending threads.
private final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func record(_ error: Error) {
        lock.lock()
        errors.append(error)
        lock.unlock()
    }
    var first: Error? {
        lock.lock()
        defer { lock.unlock() }
        return errors.first
    }
}
