import Foundation

/// A Matrix account as people have one, side by side in one run: `rooms` rooms on a real Synapse,
/// each with messages, reactions (some the account's own) and a thread, then
///
/// - the dashboard's first start on a new store until the chat list is on screen: from the
///   process's launch, through its sign-in, push rules and initial `/sync`, its store, and the page
///   opened in headless Chromium, to the frame after the list holds every room;
/// - against a bare client that signs in and does one filtered initial `/sync` of the same account
///   (the dashboard's own filter) and parses it, keeping nothing: what the homeserver itself takes.
///
/// Rounds alternate the two sides after a warm-up of each that is not counted (Synapse's caches
/// are warm for both, the browser has started its renderer); each round of the dashboard is a new
/// store and a new device. It runs twice: with the cores shared, and with the homeserver on a core
/// of its own (``CoreLayout``), each figure printed. The driver that
/// starts Synapse, fills it and runs the bare client is Python, run by Synapse's own
/// (`SynapseDriver`); the page is timed inside the page. `dashboardLog`: each round's dashboard
/// logs at trace level (every upstream request, timed) to that path with the layout and round.
enum MatrixAccountBenchmark {
    static func run(rooms: Int, rounds: Int, python: String?, dashboardLog: String? = nil) throws -> [ReportLine] {
        let interpreter = try MatrixLatencyBenchmark.synapsePython(python)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lp-bench-account-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = folder.appendingPathComponent("driver.py").path
        try driver.write(toFile: script, atomically: true, encoding: .utf8)
        print("matrix-account: \(rooms) rooms with messages, reactions and a thread each on Synapse; the dashboard's first start to the chat list on screen vs a bare client's filtered initial /sync, \(rounds) rounds each, alternated")
        let synapse = try ChildProcess(name: "the Synapse driver", executable: interpreter, arguments: [script, "--rooms", String(rooms)],
                                       quietStderr: false, takesInput: true)
        defer {
            try? synapse.send("quit")
            synapse.process.waitUntilExit()
        }
        let ready = try synapse.waitForLine(startingWith: "READY ")
        guard let homeserverPort = Int(ready.dropFirst("READY ".count).split(separator: " ").first ?? "") else {
            throw BenchError("no figure: the driver's ready line has no port: \(ready)")
        }
        print("  " + ready.split(separator: " ").dropFirst(2).joined(separator: " "))
        func bare() throws -> Double {
            try synapse.send("bare")
            let line = try synapse.waitForLine(startingWith: "BARE ")
            guard let seconds = Double(line.dropFirst("BARE ".count).split(separator: " ").first ?? ""), seconds > 0 else {
                throw BenchError("no figure: the bare client said \(line)")
            }
            print("    bare client: " + line.dropFirst("BARE ".count))
            return seconds
        }

        /// Pins the homeserver, the driver (the bare client) and this process (with every child it
        /// starts after: the dashboards and Chromium) as `layout` says.
        func pin(_ layout: CoreLayout) throws {
            try synapse.send("layout \(layout.driverWord) \(getpid())")
            let answer = try synapse.waitForLine(startingWith: "LAYOUT ")
            guard answer == "LAYOUT ok" else { throw BenchError("no figure: the driver could not pin the processes: \(answer)") }
        }

        func measure(layout: CoreLayout) throws -> ReportLine {
            // A browser per layout, started after the pinning so that its processes inherit it.
            let browser = try HeadlessChromium()
            // Before the page's own scripts: the frame after the list first holds every room.
            try browser.addScriptOnNewDocument("""
                document.addEventListener("DOMContentLoaded", () => {
                  const list = document.querySelector("#chats");
                  if (!list) return;
                  const observer = new MutationObserver(() => {
                    if (list.querySelectorAll("[data-chat]").length < \(rooms)) return;
                    observer.disconnect();
                    requestAnimationFrame(() => setTimeout(() => { window.lpChatListShown = performance.timeOrigin + performance.now(); }, 0));
                  });
                  observer.observe(list, { childList: true, subtree: true });
                });
                """)
            /// One first start of the dashboard on a new store, until the list is on screen.
            func dashboardStart(_ name: String) throws -> Double {
                let store = folder.appendingPathComponent("\(layout.driverWord)-\(name).sqlite").path
                let launched = Date().timeIntervalSince1970
                let dashboard = try ChildProcess(name: "dashboard", executable: try dashboardBinary(),
                                                 arguments: ["--port", "0", "--log-level", dashboardLog == nil ? "warning" : "trace", "--db", store, "--always-on",
                                                             "--upstream", "matrix+http://127.0.0.1:\(homeserverPort)", "--matrix-user", "@alice:localhost"],
                                                 environment: ["LP_MATRIX_PASSWORD": "alice-password"],
                                                 stderrFile: dashboardLog.map { "\($0).\(layout.driverWord).\(name)" })
                defer { dashboard.stop() }
                let endpoint = try BenchEndpoint(readyLine: try dashboard.waitForLine(startingWith: "dashboard listening on http://"))
                try browser.startNavigation(to: "http://127.0.0.1:\(endpoint.port)/?token=\(endpoint.token ?? "")")
                try browser.waitUntil("typeof window.lpChatListShown === 'number'", what: "the chat list with \(rooms) rooms", seconds: 120, interval: 0.02)
                guard let shown = try browser.evaluate("window.lpChatListShown") as? Double else { throw BenchError("no figure: the page gave no time") }
                let seconds = shown / 1000 - launched
                print(String(format: "    dashboard (%@): the chat list of %d rooms on screen %.2f s after the launch", name, rooms, seconds))
                // Where the time went, from the page's own timings: when its scripts had run, and
                // when the poll answer with the rooms arrived (its size).
                if let parts = try browser.evaluate(Self.pageParts) as? [String: Double],
                   let ready = parts["ready"], let answered = parts["answered"], let size = parts["size"] {
                    print(String(format: "      the page ready %.2f s after the launch; the poll answer with the rooms (%.0f KB) arrived at %.2f s, the list on screen %.2f s after it",
                                 ready / 1000 - launched, size / 1000, answered / 1000 - launched, (shown - answered) / 1000))
                } else {
                    print("      no parts: the page's timings hold no poll answer before the list")
                }
                dashboard.stop()
                try browser.startNavigation(to: "about:blank")
                try browser.waitUntil("location.href === 'about:blank'", what: "a blank tab")
                return seconds
            }
            // Warm-ups, not counted, one for each side: Synapse's caches, the browser's first
            // renderer and the dashboard's binary read from disk.
            _ = try bare()
            _ = try dashboardStart("warm-up")
            var ours: [Double] = [], theirs: [Double] = []
            for round in 1...rounds {
                ours.append(try dashboardStart("round\(round)"))
                theirs.append(try bare())
            }
            let ours50 = median(ours), theirs50 = median(theirs)
            print(String(format: "    first start to the chat list on screen: dashboard median %.2f s (%@), bare client's sign-in and filtered initial /sync median %.2f s (%@), ratio %.2f (goal <= 1.2)",
                         ours50, ours.map { String(format: "%.2f", $0) }.joined(separator: ", "), theirs50,
                         theirs.map { String(format: "%.2f", $0) }.joined(separator: ", "), ours50 / theirs50))
            return ReportLine(name: "Matrix account of \(rooms) rooms (reactions, threads), \(layout.shortName): first start to the chat list on screen",
                              ours: String(format: "%.2f s", ours50), peer: String(format: "%.2f s bare /sync", theirs50),
                              ratio: ours50 / theirs50, goal: "<= 1.2", met: ours50 / theirs50 <= 1.2)
        }

        let layouts: [CoreLayout] = ProcessInfo.processInfo.activeProcessorCount >= 2 ? [.shared, .homeserverApart] : [.shared]
        if layouts.count == 1 { print("  one core only: no figure with the homeserver on a core of its own") }
        // Every thread of this process back on every core, whatever a layout left (the report's
        // next sections run in this process).
        defer { try? pin(.shared) }
        var lines: [ReportLine] = []
        for layout in layouts {
            try pin(layout)
            print("  \(layout.description):")
            lines.append(try measure(layout: layout))
        }
        return lines
    }

    /// The page's DOMContentLoaded and the `/api/poll` answer that brought the rooms (the largest
    /// before the list was on screen: when it had arrived, and its size), in the page's resource
    /// timings, as epoch milliseconds.
    static let pageParts = """
        (() => {
          const origin = performance.timeOrigin, shown = window.lpChatListShown;
          const polls = performance.getEntriesByType("resource")
            .filter((entry) => entry.name.includes("/api/poll") && origin + entry.responseEnd <= shown);
          const largest = polls.reduce((best, entry) => (!best || entry.decodedBodySize > best.decodedBodySize ? entry : best), null);
          const page = performance.getEntriesByType("navigation")[0];
          return largest && page ? { ready: origin + page.domContentLoadedEventEnd, answered: origin + largest.responseEnd, size: largest.decodedBodySize } : null;
        })()
        """

    /// Where the processes run. On one machine the homeserver, the browser and the dashboard
    /// share the cores, so the browser's page load slows the homeserver's sign-in: a cost of the
    /// benchmark's machine, not of the dashboard, since a person's homeserver runs elsewhere.
    /// `homeserverApart` gives Synapse a core of its own and puts everything else (this process,
    /// the dashboard, Chromium and the bare client) on the other: the homeserver as it is for a
    /// person, and the dashboard's own work on half the machine.
    enum CoreLayout: CustomStringConvertible {
        case shared
        case homeserverApart

        var driverWord: String { self == .shared ? "shared" : "apart" }
        var shortName: String { self == .shared ? "cores shared" : "homeserver on its own core" }
        var description: String {
            self == .shared ? "every process on every core (the browser competes with the homeserver)"
                : "Synapse alone on core 0; the dashboard, Chromium and the bare client on core 1"
        }
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    private static var driver: String { [SynapseDriver.prelude, script].joined(separator: "\n") }

    /// Fills Synapse, prints `READY <port> <what it holds>`, then answers `bare` with
    /// `BARE <seconds> ...` (one sign-in and filtered initial sync, timed) until `quit`.
    private static let script = #"""
        parser = argparse.ArgumentParser()
        parser.add_argument("--rooms", type=int, default=200)
        args = parser.parse_args()
        MESSAGES, REACTIONS, REPLIES = 10, 3, 2
        TIMELINE = urllib.parse.quote(json.dumps({"room": {"timeline": {"limit": 50, "unread_thread_notifications": True}}}))  # the dashboard's own filter

        try:
            start_synapse()
            bob, alice = login("bob", "FILLBOB"), login("alice", "FILLALICE")
            started = time.perf_counter()
            def fill(indices):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                def send(token, room, kind, content, transaction):
                    connection.request("PUT", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/{kind}/{transaction}", body=json.dumps(content),
                                       headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
                    response = connection.getresponse()
                    answer = json.loads(response.read())
                    if response.status != 200:
                        raise RuntimeError(f"send: {response.status} {answer}")
                    return answer["event_id"]
                for index in indices:
                    room = call(port, "POST", "/_matrix/client/v3/createRoom", {"name": f"Room {index + 1}", "invite": ["@alice:localhost"]}, token=bob)["room_id"]
                    call(port, "POST", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/join", {}, token=alice)
                    events = []
                    for number in range(MESSAGES):
                        sender = alice if number % 3 == 2 else bob
                        events.append(send(sender, room, "m.room.message", {"msgtype": "m.text", "body": f"message {number + 1} of room {index + 1}"}, f"m{number}"))
                    for number in range(REACTIONS):
                        send(alice if number == 0 else bob, room, "m.reaction",
                             {"m.relates_to": {"rel_type": "m.annotation", "event_id": events[-1 - number], "key": ["👍", "🎉", "❤️"][number]}}, f"r{number}")
                    root = events[MESSAGES // 2]
                    for number in range(REPLIES):
                        send(bob if number % 2 == 0 else alice, room, "m.room.message",
                             {"msgtype": "m.text", "body": f"reply {number + 1} in the thread of room {index + 1}",
                              "m.relates_to": {"rel_type": "m.thread", "event_id": root, "is_falling_back": True, "m.in_reply_to": {"event_id": root}}}, f"t{number}")
            workers = [threading.Thread(target=fill, args=(range(start, args.rooms, 6),)) for start in range(6)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            joined = len(call(port, "GET", "/_matrix/client/v3/joined_rooms", token=alice)["joined_rooms"])
            if joined != args.rooms:
                sys.exit(f"alice is in {joined} rooms, not {args.rooms}")
            filled = time.perf_counter() - started
            print(f"READY {port} filled {args.rooms} rooms ({args.rooms * MESSAGES} messages, {args.rooms * REACTIONS} reactions, "
                  f"{args.rooms} threads of {REPLIES} replies) in {filled:.0f} s", flush=True)
            devices = 0
            for command in sys.stdin:
                command = command.strip()
                if command == "quit":
                    break
                if command.startswith("layout "):
                    # "layout shared|apart PID": every thread of Synapse, of this driver and of
                    # PID (threads started later inherit their creator's cores).
                    _, kind, other = command.split()
                    everything = set(range(os.cpu_count()))
                    homeserver, rest = ({0}, everything - {0}) if kind == "apart" else (everything, everything)
                    try:
                        for pid, cores in ((processes[0].pid, homeserver), (os.getpid(), rest), (int(other), rest)):
                            for task in os.listdir(f"/proc/{pid}/task"):
                                try:
                                    os.sched_setaffinity(int(task), cores)
                                except ProcessLookupError:
                                    pass  # a thread that ended meanwhile
                        print("LAYOUT ok", flush=True)
                    except OSError as error:
                        print(f"LAYOUT failed: {error}", flush=True)
                    continue
                if command == "bare":
                    devices += 1
                    began = time.perf_counter()
                    token = login("alice", f"BARE{devices}")
                    signed_in = time.perf_counter() - began
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                    connection.request("GET", f"/_matrix/client/v3/sync?timeout=0&filter={TIMELINE}", headers={"Authorization": f"Bearer {token}"})
                    sync = json.loads(connection.getresponse().read())
                    seconds = time.perf_counter() - began
                    rooms = sync.get("rooms", {}).get("join", {})
                    events = sum(len(room.get("timeline", {}).get("events", [])) for room in rooms.values())
                    print(f"BARE {seconds:.4f} s: signed in ({signed_in:.2f} s) and synced {len(rooms)} rooms, {events} timeline events", flush=True)
        finally:
            cleanup()
        """#
}
