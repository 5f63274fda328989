import Foundation

/// One message's trip through a real Synapse, side by side in one run: bob sends, and both the
/// dashboard's `/api/poll` (Synapse -> held `/sync` -> engine -> SQLite -> feed -> poll) and a
/// plain Python client long-polling the same account's `/sync` (what the homeserver itself takes)
/// wait for it. Ours / theirs at p50 and p99; goal <= 1.2.
///
/// The driver is Python (it needs Synapse's own Python to start the homeserver and register
/// users); both receivers run in it, on threads of their own, with the same `http.client` and
/// one JSON parse per answer, so neither side is favoured by the client.
enum MatrixLatencyBenchmark {
    static func run(messages: Int, python: String?) throws -> [ReportLine] {
        let interpreter = try synapsePython(python)
        let script = NSTemporaryDirectory() + "lp-bench-matrix-\(getpid()).py"
        try driver.write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        print("matrix: \(messages) messages from bob to alice through Synapse; dashboard /api/poll vs Python /sync, same run")
        let output = try runCommand(interpreter, [script, "--dashboard", try dashboardBinary(), "--messages", String(messages)])
        guard let last = output.split(separator: "\n").last,
              let result = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Double] else {
            throw BenchError("the driver printed no result")
        }
        let ours50 = result["ours_p50"] ?? 0, ours99 = result["ours_p99"] ?? 0
        let theirs50 = result["theirs_p50"] ?? 0, theirs99 = result["theirs_p99"] ?? 0
        print(String(format: "  p50: dashboard %.1f ms, Python /sync %.1f ms, ratio %.2f", ours50, theirs50, ours50 / theirs50))
        print(String(format: "  p99: dashboard %.1f ms, Python /sync %.1f ms, ratio %.2f (goal <= 1.2)", ours99, theirs99, ours99 / theirs99))
        return [
            ReportLine(name: "Matrix message to the page, p50", ours: String(format: "%.1f ms", ours50), peer: String(format: "%.1f ms", theirs50),
                       ratio: ours50 / theirs50, goal: "<= 1.2", met: ours50 / theirs50 <= 1.2),
            ReportLine(name: "Matrix message to the page, p99", ours: String(format: "%.1f ms", ours99), peer: String(format: "%.1f ms", theirs99),
                       ratio: ours99 / theirs99, goal: "<= 1.2", met: ours99 / theirs99 <= 1.2),
        ]
    }

    /// The Python with Synapse a Matrix benchmark runs: `python` when given, else the checkout's.
    static func synapsePython(_ python: String?) throws -> String {
        let interpreter = python ?? defaultPython()
        guard FileManager.default.isExecutableFile(atPath: interpreter) else {
            throw BenchError("no figure: no Synapse Python at \(interpreter) (run .ci/run, which makes .build/synapse-venv, or pass --python PATH)")
        }
        return interpreter
    }

    /// `.build/synapse-venv/bin/python` of the checkout this binary was built in.
    static func defaultPython() -> String {
        var folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent(".build/synapse-venv/bin/python").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder.deleteLastPathComponent()
        }
        return ".build/synapse-venv/bin/python"
    }

    private static var driver: String { [SynapseDriver.prelude, arguments, script].joined(separator: "\n") }

    private static let arguments = #"""
        parser = argparse.ArgumentParser()
        parser.add_argument("--dashboard", required=True)
        parser.add_argument("--messages", type=int, default=200)
        args = parser.parse_args()

        """#

    private static let script = #"""
        try:
            start_synapse()
            bob, alice_peer = login("bob", "BENCHBOB"), login("alice", "PYTHONPEER")
            room = call(port, "POST", "/_matrix/client/v3/createRoom", {"name": "Bench", "invite": ["@alice:localhost"]}, token=bob)["room_id"]
            call(port, "POST", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/join", {}, token=alice_peer)

            environment = dict(os.environ, LP_MATRIX_PASSWORD="alice-password")
            dashboard = subprocess.Popen([args.dashboard, "--port", "0", "--db", f"{folder}/store.sqlite", "--always-on", "--log-level", "warning",
                                          "--upstream", f"matrix+http://127.0.0.1:{port}", "--matrix-user", "@alice:localhost"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment, text=True)
            processes.append(dashboard)
            line = dashboard.stdout.readline()
            url = urllib.parse.urlparse(line.split()[-1])
            dashboard_port, dashboard_token = url.port, urllib.parse.parse_qs(url.query)["token"][0]
            for _ in range(600):
                state = call(dashboard_port, "GET", "/api/state", token=dashboard_token)
                if state["connection"]["state"] == "live":
                    break
                time.sleep(0.05)

            seen = {"ours": {}, "theirs": {}}
            arrived = {}
            lock = threading.Lock()
            stop = threading.Event()

            def heard(side, text):
                if not text.startswith("bench "):
                    return
                with lock:
                    seen[side].setdefault(text, time.perf_counter())
                    if text in seen["ours"] and text in seen["theirs"] and text in arrived:
                        arrived[text].set()

            def python_peer():
                since = call(port, "GET", "/_matrix/client/v3/sync?timeout=0", token=alice_peer)["next_batch"]
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                while not stop.is_set():
                    connection.request("GET", f"/_matrix/client/v3/sync?timeout=25000&since={urllib.parse.quote(since)}",
                                       headers={"Authorization": f"Bearer {alice_peer}"})
                    answer = json.loads(connection.getresponse().read())
                    since = answer["next_batch"]
                    for joined in answer.get("rooms", {}).get("join", {}).values():
                        for event in joined.get("timeline", {}).get("events", []):
                            if event.get("type") == "m.room.message":
                                heard("theirs", event["content"].get("body", ""))

            def dashboard_poll():
                seq = call(dashboard_port, "GET", "/api/state", token=dashboard_token)["seq"]
                connection = http.client.HTTPConnection("127.0.0.1", dashboard_port, timeout=60)
                while not stop.is_set():
                    connection.request("GET", f"/api/poll?since={seq}&timeout=25&visible=1", headers={"Authorization": f"Bearer {dashboard_token}"})
                    answer = json.loads(connection.getresponse().read())
                    seq = answer["seq"]
                    for event in answer.get("events", []):
                        if event["type"] == "messages":
                            for message in event["data"]["messages"]:
                                heard("ours", message["text"])

            def quietly(receiver):
                # The servers stop under a parked poll at the end; anything earlier is a real failure.
                def run():
                    try:
                        receiver()
                    except Exception as failure:
                        if not stop.is_set():
                            print(f"{receiver.__name__} failed: {failure!r}", file=sys.stderr)
                return run

            for target in (python_peer, dashboard_poll):
                threading.Thread(target=quietly(target), daemon=True).start()
            time.sleep(1)  # both receivers have their first long poll parked

            ours, theirs = [], []
            sender = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for index in range(1, args.messages + 1):
                text = f"bench {index}"
                with lock:
                    arrived[text] = threading.Event()
                sender.request("PUT", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/bench{index}",
                               body=json.dumps({"msgtype": "m.text", "body": text}),
                               headers={"Authorization": f"Bearer {bob}", "Content-Type": "application/json"})
                sent = time.perf_counter()
                sender.getresponse().read()
                if not arrived[text].wait(30):
                    raise RuntimeError(f"{text} did not arrive on both sides within 30 s")
                ours.append((seen["ours"][text] - sent) * 1000)
                theirs.append((seen["theirs"][text] - sent) * 1000)
                time.sleep(0.05)
            stop.set()

            def percentile(values, fraction):
                ordered = sorted(values)
                return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]
            print(json.dumps({"ours_p50": statistics.median(ours), "ours_p99": percentile(ours, 0.99),
                              "theirs_p50": statistics.median(theirs), "theirs_p99": percentile(theirs, 0.99)}))
        finally:
            cleanup()
        """#
}
