import Foundation

/// Whole history through a real Synapse, side by side in one run (CONTRACT section 10): rooms of
/// messages sent before the dashboard's first start, then
///
/// - the time to a complete local copy (from the dashboard's start to `history.complete`), against
///   a bare client that signs in, syncs once and pages every room's `/messages` back to its
///   beginning with the same page size and filter, parsing each answer and keeping nothing (what
///   the homeserver itself needs; the faster of a run before and one after the dashboard's);
/// - a live message's trip to `/api/poll` while a second dashboard (a fresh store) fetches the
///   same history, against the same trip through the first once it is complete (p50 and p99), and
///   while the bare client pages (what the homeserver's own load does);
/// - the ingest rate while fetching, messages/s.
///
/// The driver is Python, run by Synapse's own (`SynapseDriver`).
enum MatrixHistoryBenchmark {
    /// `fillCache`: a folder that keeps the filled homeserver's database for the next run of the same
    /// size (filling 50,000 messages takes Synapse about 25 minutes); `secondLog`: where the second
    /// dashboard's log goes, at trace level (every upstream request, timed).
    /// Synapse's database: SQLite (one connection: what the tests use) or PostgreSQL (a pool: what
    /// Synapse recommends for a real account).
    enum Database: String, CaseIterable {
        case sqlite, postgres
    }

    static func run(rooms: Int, perRoom: Int, python: String?, database: Database = .sqlite,
                    fillCache: String? = nil, secondLog: String? = nil) throws -> [ReportLine] {
        let interpreter = try MatrixLatencyBenchmark.synapsePython(python)
        let script = NSTemporaryDirectory() + "lp-bench-matrix-history-\(getpid()).py"
        try driver.write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        print("matrix-history: \(rooms) rooms x \(perRoom) messages sent before the first start, Synapse on \(database.label); the dashboard's copy vs a bare client paging /messages, same run")
        var driverArguments = [script, "--dashboard", try dashboardBinary(), "--rooms", String(rooms), "--per-room", String(perRoom),
                               "--database", database.rawValue]
        if let fillCache { driverArguments += ["--fill-cache", URL(fileURLWithPath: fillCache).standardizedFileURL.path] }
        if let secondLog { driverArguments += ["--second-log", URL(fileURLWithPath: secondLog).standardizedFileURL.path] }
        let output = try runCommand(interpreter, driverArguments)
        guard let last = output.split(separator: "\n").last,
              let result = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Double] else {
            throw BenchError("the driver printed no result")
        }
        let ours = result["ours_seconds"] ?? 0, bare = result["bare_seconds"] ?? 0
        let busy50 = result["busy_p50"] ?? 0, busy99 = result["busy_p99"] ?? 0
        let idle50 = result["idle_p50"] ?? 0, idle99 = result["idle_p99"] ?? 0
        let rate = result["ingest_per_second"] ?? 0
        if result["fill_cached"] == 1 {
            print("  filled Synapse from the cache in \(fillCache ?? "?") (made by an earlier run of this size)")
        } else {
            print(String(format: "  filled Synapse in %.0f s (%.0f messages/s)", result["fill_seconds"] ?? 0, result["fill_rate"] ?? 0))
        }
        print(String(format: "  complete copy: dashboard %.1f s, bare client %.1f s (runs: %.1f s, %.1f s), ratio %.2f (goal <= 1.2)",
                     ours, bare, result["bare_first"] ?? 0, result["bare_second"] ?? 0, ours / bare))
        print(String(format: "  ingest while fetching: %.0f messages/s", rate))
        print(String(format: "  live message to /api/poll: p50 %.1f ms while fetching, %.1f ms idle; p99 %.1f ms while fetching, %.1f ms idle, ratio %.2f (goal <= 1.2)",
                     busy50, idle50, busy99, idle99, busy99 / idle99))
        print(String(format: "  the same trips while the bare client pages the same history (the homeserver's own load): p50 %.1f ms, p99 %.1f ms (%.0f trips)",
                     result["bare_busy_p50"] ?? 0, result["bare_busy_p99"] ?? 0, result["bare_busy_count"] ?? 0))
        return [
            ReportLine(name: "Matrix whole history (Synapse on \(database.label)), time to a complete copy", ours: String(format: "%.1f s", ours), peer: String(format: "%.1f s", bare),
                       ratio: ours / bare, goal: "<= 1.2", met: ours / bare <= 1.2),
            ReportLine(name: "Matrix live message while fetching history (Synapse on \(database.label)), p99", ours: String(format: "%.1f ms", busy99),
                       peer: String(format: "%.1f ms idle", idle99), ratio: busy99 / idle99, goal: "<= 1.2", met: busy99 / idle99 <= 1.2),
        ]
    }

    private static var driver: String { [SynapseDriver.prelude, arguments, script].joined(separator: "\n") }

    private static let arguments = #"""
        parser = argparse.ArgumentParser()
        parser.add_argument("--dashboard", required=True)
        parser.add_argument("--rooms", type=int, default=20)
        parser.add_argument("--per-room", type=int, default=2500)
        parser.add_argument("--live", type=int, default=60, help="live messages timed in each phase")
        parser.add_argument("--fill-cache", help="a folder keeping the filled database for the next run of this size")
        parser.add_argument("--second-log", help="where the second dashboard's trace-level log goes")
        parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite", help="Synapse's database")
        args = parser.parse_args()
        PAGE = 250  # the largest page of older history the dashboard asks for (HistoryPolicy.pageSizes)
        FILTER = urllib.parse.quote(json.dumps({"lazy_load_members": True}))
        """#

    private static let script = #"""
        def percentile(values, fraction):
            ordered = sorted(values)
            return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]

        def fill(rooms, bob):
            # Each room from its own thread and connection, as many clients send at once.
            def send_all(room):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                for number in range(1, args.per_room + 1):
                    connection.request("PUT", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/f{number}",
                                       body=json.dumps({"msgtype": "m.text", "body": f"old message {number} of {room}"}),
                                       headers={"Authorization": f"Bearer {bob}", "Content-Type": "application/json"})
                    response = connection.getresponse()
                    response.read()
                    if response.status != 200:
                        raise RuntimeError(f"send: {response.status}")
            threads = [threading.Thread(target=send_all, args=(room,)) for room in rooms]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()

        def bare_client(device):
            # What the homeserver itself needs: one sync, then every room paged back to its start.
            started = time.perf_counter()
            token = login("alice", device)
            timeline = urllib.parse.quote(json.dumps({"room": {"timeline": {"limit": 50}}}))
            sync = call(port, "GET", f"/_matrix/client/v3/sync?timeout=0&filter={timeline}", token=token)
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            events = 0
            for room, joined in sync["rooms"]["join"].items():
                position = joined["timeline"].get("prev_batch")
                while position:
                    connection.request("GET", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/messages?dir=b&limit={PAGE}"
                                       f"&from={urllib.parse.quote(position)}&filter={FILTER}", headers={"Authorization": f"Bearer {token}"})
                    page = json.loads(connection.getresponse().read())
                    events += len(page.get("chunk", []))
                    end = page.get("end")
                    position = end if end and end != position else None
            return time.perf_counter() - started, events

        try:
            cached = f"{args.fill_cache}/matrix-history-{args.rooms}x{args.per_room}" if args.fill_cache else None
            cached_sqlite = bool(cached and os.path.exists(f"{cached}/homeserver.db"))
            cached_postgres = bool(cached and os.path.exists(f"{cached}/pg/PG_VERSION"))
            if args.database == "sqlite":
                fill_cached = cached_sqlite
                if fill_cached:
                    # The same homeserver as the run that filled it: its database and its signing key.
                    shutil.copyfile(f"{cached}/homeserver.db", f"{folder}/homeserver.db")
            else:
                # A SQLite fill is not moved over: Synapse's port script made a homeserver whose
                # /sync never woke for a new message. Postgres is filled on its own and kept.
                fill_cached = cached_postgres
                if cached_postgres:
                    shutil.copytree(f"{cached}/pg", pg_data, symlinks=True)
                    if os.geteuid() == 0:
                        subprocess.run(["chown", "-R", "postgres:postgres", pg_data], check=True)
                    start_postgres(initialise=False)
                else:
                    start_postgres()
            if fill_cached:
                shutil.copyfile(f"{cached}/signing.key", f"{folder}/signing.key")
            start_synapse(register=not fill_cached)
            bob, alice = login("bob", "BENCHBOB"), login("alice", "BENCHALICE")
            fill_seconds = 0
            if fill_cached:
                rooms = sorted(call(port, "GET", "/_matrix/client/v3/joined_rooms", token=alice)["joined_rooms"])
                print(f"filled from {cached}: {len(rooms)} rooms", file=sys.stderr)
            else:
                rooms = []
                for index in range(args.rooms):
                    room = call(port, "POST", "/_matrix/client/v3/createRoom", {"name": f"Room {index + 1}", "invite": ["@alice:localhost"]}, token=bob)["room_id"]
                    call(port, "POST", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/join", {}, token=alice)
                    rooms.append(room)
                started = time.perf_counter()
                fill(rooms, bob)
                fill_seconds = time.perf_counter() - started
                print(f"filled {args.rooms * args.per_room} messages in {fill_seconds:.0f} s", file=sys.stderr)
                if cached and args.database == "sqlite":
                    # A consistent copy while Synapse runs (SQLite's online backup).
                    os.makedirs(cached, exist_ok=True)
                    with sqlite3.connect(f"{folder}/homeserver.db") as source, sqlite3.connect(f"{cached}/homeserver.db.partial") as copy:
                        source.backup(copy)
                    shutil.copyfile(f"{folder}/signing.key", f"{cached}/signing.key")
                    os.replace(f"{cached}/homeserver.db.partial", f"{cached}/homeserver.db")
            if cached and args.database == "postgres" and not cached_postgres:
                # The cluster copied while it is stopped (Synapse first), then both started again.
                for process in processes:
                    process.terminate()
                    process.wait(30)
                stop_postgres()
                os.makedirs(cached, exist_ok=True)
                shutil.rmtree(f"{cached}/pg.partial", ignore_errors=True)
                shutil.copytree(pg_data, f"{cached}/pg.partial", symlinks=True)
                shutil.copyfile(f"{folder}/signing.key", f"{cached}/signing.key")
                os.replace(f"{cached}/pg.partial", f"{cached}/pg")
                start_postgres(initialise=False)
                start_synapse(register=False)

            bare_first, events = bare_client("BARE1")
            print(f"bare client: {events} events in {bare_first:.1f} s", file=sys.stderr)

            environment = dict(os.environ, LP_MATRIX_PASSWORD="alice-password")
            arrivals, lock = {}, threading.Lock()
            stop = threading.Event()

            def start_dashboard(name, log=None, level="trace"):
                # A dashboard of its own store (a new device of alice's) whose /api/poll is followed.
                launched = time.perf_counter()
                process = subprocess.Popen([args.dashboard, "--port", "0", "--db", f"{folder}/{name}.sqlite", "--always-on",
                                            "--log-level", level if log else "warning",
                                            "--upstream", f"matrix+http://127.0.0.1:{port}", "--matrix-user", "@alice:localhost"],
                                           stdout=subprocess.PIPE, stderr=open(log, "w") if log else subprocess.DEVNULL, env=environment, text=True)
                processes.append(process)
                url = urllib.parse.urlparse(process.stdout.readline().split()[-1])
                dashboard = {"port": url.port, "token": urllib.parse.parse_qs(url.query)["token"][0], "launched": launched, "process": process}
                for _ in range(600):
                    if call(dashboard["port"], "GET", "/api/state", token=dashboard["token"])["connection"]["state"] == "live":
                        break
                    time.sleep(0.02)
                def follow():
                    try:
                        seq = call(dashboard["port"], "GET", "/api/state", token=dashboard["token"])["seq"]
                        connection = http.client.HTTPConnection("127.0.0.1", dashboard["port"], timeout=60)
                        while not stop.is_set() and process.poll() is None:
                            connection.request("GET", f"/api/poll?since={seq}&timeout=25&visible=1",
                                               headers={"Authorization": f"Bearer {dashboard['token']}"})
                            answer = json.loads(connection.getresponse().read())
                            seq = answer["seq"]
                            for event in answer.get("events", []):
                                if event["type"] == "messages":
                                    for message in event["data"]["messages"]:
                                        with lock:
                                            if message["text"] in arrivals:
                                                arrivals[message["text"]].setdefault("at", time.perf_counter())
                                                arrivals[message["text"]]["event"].set()
                    except Exception as failure:
                        if not stop.is_set() and not dashboard.get("stopping"):
                            print(f"poll failed: {failure!r}", file=sys.stderr)
                threading.Thread(target=follow, daemon=True).start()
                time.sleep(0.2)
                return dashboard

            def history(dashboard):
                return call(dashboard["port"], "GET", "/api/state", token=dashboard["token"])["history"]

            sender = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            run = secrets.token_hex(4)  # a kept homeserver remembers the transaction ids of earlier runs
            def trip(label):
                label = f"{label}-{run}"
                text = f"live {label}"
                with lock:
                    arrivals[text] = {"event": threading.Event()}
                sender.request("PUT", f"/_matrix/client/v3/rooms/{urllib.parse.quote(rooms[0])}/send/m.room.message/{label}",
                               body=json.dumps({"msgtype": "m.text", "body": text}),
                               headers={"Authorization": f"Bearer {bob}", "Content-Type": "application/json"})
                sent = time.perf_counter()
                sender.getresponse().read()
                if not arrivals[text]["event"].wait(30):
                    raise RuntimeError(f"{text} did not arrive within 30 s")
                return (arrivals[text]["at"] - sent) * 1000

            # 1. The time to a complete copy, with nothing else going on.
            expected = args.rooms * (args.per_room - 50)
            first = start_dashboard("first", log=f"{args.second_log}.first" if args.second_log else None, level="info")
            while not (history(first)["complete"] and history(first)["fetched"] >= expected):
                time.sleep(0.02)
            ours_seconds, fetched = time.perf_counter() - first["launched"], history(first)["fetched"]
            print(f"dashboard: {fetched} older messages in {ours_seconds:.1f} s", file=sys.stderr)
            # 2. Live trips once it is idle.
            idle = []
            for index in range(args.live):
                time.sleep(0.05)
                idle.append(trip(f"idle{index}"))
            first["stopping"] = True
            first["process"].terminate()
            first["process"].wait(10)
            # 3. Live trips while a second dashboard (a fresh store) fetches the same history.
            second = start_dashboard("second", log=args.second_log)
            if args.second_log:
                print(f"the second dashboard logs to {args.second_log}", file=sys.stderr)
            busy = []
            while not history(second)["complete"] and len(busy) < args.live:
                busy.append(trip(f"busy{len(busy)}"))
                time.sleep(0.05)
            print(f"{len(busy)} live trips while the second dashboard fetched; the slowest (trip number, ms): "
                  + ", ".join(f"#{index} {ms:.0f}" for index, ms in sorted(enumerate(busy), key=lambda pair: -pair[1])[:5]), file=sys.stderr)
            while not history(second)["complete"]:
                time.sleep(0.05)
            # 4. The same trips while the bare client pages the same history: what the homeserver's
            # own load does to a live message, whoever fetches.
            bare_run = {}
            paging = threading.Thread(target=lambda: bare_run.update(seconds=bare_client("BARE2")[0]))
            paging.start()
            under_bare = []
            while paging.is_alive() and len(under_bare) < args.live:
                under_bare.append(trip(f"bare{len(under_bare)}"))
                time.sleep(0.05)
            paging.join()
            stop.set()
            bare_second = bare_run["seconds"]
            bare = min(bare_first, bare_second)
            if not busy:
                sys.exit("history was complete before a live message could be timed while fetching: ask for more rooms or messages")
            if len(busy) < 5:
                print(f"only {len(busy)} live messages while fetching: history was done too soon for a p99", file=sys.stderr)
            print(json.dumps({"fill_cached": 1 if fill_cached else 0, "ours_seconds": ours_seconds, "bare_seconds": bare, "bare_first": bare_first, "bare_second": bare_second,
                              "fill_seconds": fill_seconds, "fill_rate": args.rooms * args.per_room / fill_seconds if fill_seconds else 0,
                              "ingest_per_second": fetched / ours_seconds,
                              "busy_p50": statistics.median(busy), "busy_p99": percentile(busy, 0.99),
                              "idle_p50": statistics.median(idle), "idle_p99": percentile(idle, 0.99),
                              "bare_busy_p50": statistics.median(under_bare) if under_bare else 0,
                              "bare_busy_p99": percentile(under_bare, 0.99) if under_bare else 0, "bare_busy_count": len(under_bare)}))
        finally:
            cleanup()
        """#
}

extension MatrixHistoryBenchmark.Database {
    var label: String {
        switch self {
        case .sqlite: "SQLite"
        case .postgres: "PostgreSQL"
        }
    }
}
