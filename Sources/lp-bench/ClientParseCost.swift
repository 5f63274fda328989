import Foundation

/// What one answer costs the shared fan-out client to read: one real answer is recorded from each
/// server (a parked poll woken by a publish), then the client's own response parser, adapter
/// `parse` and next-request code run on it in a loop. No network in the timed part, so the
/// figures are the client's Python work per answer alone.
enum ClientParseCost {
    static let script = #"""
        import json, socket, sys, threading, time, types
        mode = sys.argv[1]

        def exchange(sock, raw):
            sock.sendall(raw)
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return data
                data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if length and len(body) >= int(length[0].split(b":")[1]):
                    return data

        def record(port, poll_target, publish, out_path, auth=b""):
            host = b"Host: 127.0.0.1:%d\r\n" % port + auth
            poller = socket.create_connection(("127.0.0.1", port))
            answer = {}
            thread = threading.Thread(target=lambda: answer.setdefault(
                "raw", exchange(poller, b"GET " + poll_target + b" HTTP/1.1\r\n" + host + b"Accept: */*\r\n\r\n")))
            thread.start()
            time.sleep(0.3)
            publish(host)
            thread.join(10)
            open(out_path, "wb").write(answer["raw"])

        payload = json.dumps({"bench_token": "lpbench-0123abcd-n1000-r0003", "round": 3,
                              "t_pub_ns": time.time_ns(), "pad": ""})

        if mode == "record-swift":
            port, out_path, token = int(sys.argv[2]), sys.argv[3], sys.argv[4]
            control = socket.create_connection(("127.0.0.1", port))
            auth = b"Authorization: Bearer " + token.encode() + b"\r\n" if token else b""
            host = b"Host: 127.0.0.1:%d\r\n" % port + auth
            session = json.loads(exchange(control, b"GET /api/session HTTP/1.1\r\n" + host + b"\r\n").partition(b"\r\n\r\n")[2])
            seq = json.loads(exchange(control, b"GET /api/poll?since=0&timeout=0 HTTP/1.1\r\n" + host + b"\r\n")
                             .partition(b"\r\n\r\n")[2])["seq"]
            def publish(host):
                body = json.dumps({"account": "primary", "count": 1, "text": payload}).encode()
                exchange(control, b"POST /api/simulator/messages HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n"
                         + b"X-CSRF-Token: " + session["csrfToken"].encode() + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            record(port, b"/api/poll?since=%d&timeout=60&visible=1" % seq, publish, out_path, auth)
        elif mode == "record-nchan":
            port, out_path = int(sys.argv[2]), sys.argv[3]
            control = socket.create_connection(("127.0.0.1", port))
            def publish(host):
                body = payload.encode()
                exchange(control, b"POST /pub?id=parse-cost HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n"
                         + b"Accept: text/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            record(port, b"/sub?id=parse-cost", publish, out_path)
        else:
            bench_folder, swift_answer, nchan_answer = sys.argv[2:5]
            sys.argv = [sys.argv[0]]
            sys.path.insert(0, bench_folder)
            import lp_fanout
            def micros_per_answer(adapter_class, raw, loops=20000):
                args = types.SimpleNamespace(sub_url=None, pub_url=None, cursor_field=None, events_field=None,
                                             poll_timeout=60, initial_cursor="0", pub_cmd=None, nchan_status_url=None)
                adapter = adapter_class(args, "lpbench-0123abcd-n1000")
                state = adapter.new_state(0)
                parser = lp_fanout.HttpResponseParser()
                token = "lpbench-0123abcd-n1000-r0003"
                best = float("inf")
                for _ in range(5):
                    started = time.perf_counter()
                    for _ in range(loops):
                        for status, headers, body in parser.feed(raw):
                            events = adapter.parse(state, status, headers, body)
                            assert any(token in event for event in events)
                            adapter.sub_request(state)
                    best = min(best, (time.perf_counter() - started) / loops * 1e6)
                return best
            swift_raw, nchan_raw = open(swift_answer, "rb").read(), open(nchan_answer, "rb").read()
            print(json.dumps({"swift_us": micros_per_answer(lp_fanout.CursorPollAdapter, swift_raw), "swift_bytes": len(swift_raw),
                              "nchan_us": micros_per_answer(lp_fanout.NchanAdapter, nchan_raw), "nchan_bytes": len(nchan_raw)}))
        """#

    /// A scratch folder holding the script and the recorded answers.
    struct Workspace {
        let folder = NSTemporaryDirectory() + "lp-bench-parse-cost-\(getpid())"
        var scriptPath: String { folder + "/parse_cost.py" }
        var swiftAnswer: String { folder + "/swift-answer.bin" }
        var nchanAnswer: String { folder + "/nchan-answer.bin" }

        init() throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try ClientParseCost.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    static func recordDashboardAnswer(python: String, endpoint: BenchEndpoint, in workspace: Workspace) throws {
        _ = try runCommand(python, [workspace.scriptPath, "record-swift", String(endpoint.port), workspace.swiftAnswer, endpoint.token ?? ""])
    }

    static func recordNchanAnswer(python: String, port: Int, in workspace: Workspace) throws {
        _ = try runCommand(python, [workspace.scriptPath, "record-nchan", String(port), workspace.nchanAnswer])
    }

    /// The client's Python time per answer, ours and Nchan's, in one line of the report.
    static func measure(python: String, benchFolder: String, in workspace: Workspace) throws -> ReportLine {
        let output = try runCommand(python, [workspace.scriptPath, "time", benchFolder, workspace.swiftAnswer, workspace.nchanAnswer])
        let object = try jsonObject(Data(output.utf8))
        guard let ours = object["swift_us"] as? Double, let theirs = object["nchan_us"] as? Double,
              let ourBytes = object["swift_bytes"] as? Int, let theirBytes = object["nchan_bytes"] as? Int else {
            throw BenchError("cannot read the parse-cost output: \(output)")
        }
        print(String(format: "client parse per answer: ours %.1f us (%d bytes), Nchan %.1f us (%d bytes)", ours, ourBytes, theirs, theirBytes))
        return ReportLine(name: "fan-out client parse per answer (recorded answer, no network)",
                          ours: String(format: "%.1f us, %d B", ours, ourBytes),
                          peer: String(format: "Nchan %.1f us, %d B", theirs, theirBytes),
                          ratio: ours / theirs, goal: "", met: true)
    }
}
