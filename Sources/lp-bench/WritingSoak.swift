import Foundation

/// A soak of writing (CONTRACT section 11 and the outbox's ownership): for `seconds`, at random,
/// messages are written into chats of both accounts, unsent ones deleted, the linked account
/// detached and another attached (a new user each time), the answers cut or the server taken
/// offline, and what an account left behind saved to a file, against the built-in simulator of a
/// release dashboard on a store file. Then everything is let go and the simulator's record of
/// what each user wrote is held against what the dashboard answered:
///
/// - every message the simulator keeps was written as the user it came from (no byte as another);
/// - none is kept twice;
/// - every accepted message is sent, deleted with a 204, or saved to a file after its account
///   went: none is lost, and none that a 204 deleted was sent.
///
/// The primary user cannot change under the simulator; that switch is the Matrix tests' (another
/// user signing in on the same store), and the engine's tests.
enum WritingSoak {
    /// What the soak knows of one message it wrote.
    struct Written {
        var account: String
        /// The user the dashboard held the account as just before and just after the write: the
        /// message may go as either, never as anyone else.
        var writers: Set<Int64>
        var outboxId: Int
        /// Delete answered 204: never to be sent.
        var deleted = false
    }

    struct Tally: CustomStringConvertible {
        var written = 0, refusedWrites = 0, deletes = 0, deletesRefused = 0, detaches = 0, attaches = 0, faults = 0, saves = 0
        var description: String {
            "\(written) written (\(refusedWrites) refused: no chat or account), \(deletes) deleted with 204 (\(deletesRefused) refused: sending or gone), "
                + "\(detaches) detaches and \(attaches) attaches of the linked account, \(faults) fault changes, \(saves) saves of what was left behind"
        }
    }

    static func run(seconds: Int, seed: UInt64) throws {
        let folder = NSTemporaryDirectory() + "lp-bench-soak-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var keepFolder = false
        defer { if !keepFolder { try? FileManager.default.removeItem(atPath: folder) } }
        let child = try ChildProcess(name: "dashboard", executable: try dashboardBinary(),
                                     arguments: ["--port", "0", "--log-level", "warning", "--always-on", "--no-demo", "--db", folder + "/store.sqlite",
                                                 "--backoff-base-ms", "20", "--backoff-cap-ms", "200", "--quota", "100000000000"]
                                                 + (ProcessInfo.processInfo.environment["LP_SOAK_LOG"].map { ["--log-level", $0] } ?? []),
                                     quietStderr: ProcessInfo.processInfo.environment["LP_SOAK_LOG"] == nil)
        defer { child.stop() }
        let simulator = try port(inReadyLine: try child.waitForLine(startingWith: "simulator listening on http://"))
        let api = try Client(endpoint: BenchEndpoint(readyLine: try child.waitForLine(startingWith: "dashboard listening on http://")))
        var random = SplitMix(seed: seed)
        func control(_ path: String, _ body: String) throws { _ = try postJSON(port: simulator, path: path, body: body) }
        try control("/sim/messages", #"{"account": "primary", "count": 5}"#)
        try control("/sim/messages", #"{"account": "linked", "count": 5}"#)

        print("writing soak: \(seconds) s, seed \(seed), the built-in simulator, a store file in \(folder)")
        var written: [Int: Written] = [:]  // by serial
        var serialOf: [Int: Int] = [:]  // outbox id -> serial
        var saved: [Int] = []  // serials saved to a file
        var tally = Tally()
        var nextSerial = 0
        var linkedAttached = true
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        var nextReport = Date().addingTimeInterval(60)
        while Date() < deadline {
            let roll = random.next() % 100
            switch roll {
            case 0..<60:
                let account = random.next() % 3 == 0 ? "linked" : "primary"
                let before = try api.userID(of: account)
                let chats = try api.chats(of: account)
                guard let before, !chats.isEmpty else {
                    tally.refusedWrites += 1
                    continue
                }
                nextSerial += 1
                let serial = nextSerial
                let chat = chats[Int(random.next() % UInt64(chats.count))]
                let answer = try api.write("soak #\(serial)", to: chat, of: account)
                let after = try api.userID(of: account)
                guard answer.status == 202, let outboxId = answer.json["outboxId"] as? Int else {
                    // The chat went with its account between the two calls: refused, nothing queued.
                    guard [404, 409].contains(answer.status) else { throw BenchError("a write answered \(answer.status): \(answer.json)") }
                    tally.refusedWrites += 1
                    continue
                }
                written[serial] = Written(account: account, writers: Set([before] + (after.map { [$0] } ?? [])), outboxId: outboxId)
                serialOf[outboxId] = serial
                tally.written += 1
            case 60..<75:
                // Mostly one still in the outbox (most of the rest are sent: 404).
                let waiting = Set(try api.outbox().compactMap { $0["outboxId"] as? Int })
                let candidates = written.filter { !$0.value.deleted && (waiting.isEmpty || waiting.contains($0.value.outboxId) || random.next() % 4 == 0) }
                guard let (serial, message) = candidates.randomElement(using: &random) else { continue }
                let status = try api.delete("/api/outbox/\(message.outboxId)")
                switch status {
                case 204:
                    written[serial]?.deleted = true
                    tally.deletes += 1
                case 404, 409:
                    tally.deletesRefused += 1
                default:
                    throw BenchError("Delete answered \(status)")
                }
            case 75..<80:
                linkedAttached.toggle()
                try control("/sim/linked", #"{"linked": \#(linkedAttached)}"#)
                if linkedAttached {
                    tally.attaches += 1
                    try control("/sim/messages", #"{"account": "linked", "count": 2}"#)
                } else {
                    tally.detaches += 1
                }
            case 80..<90:
                let modes = [#"{"mode": "none"}"#, #"{"mode": "drop", "rate": 0.3}"#, #"{"mode": "offline"}"#, #"{"mode": "none"}"#]
                try control("/sim/faults", modes[Int(random.next() % UInt64(modes.count))])
                tally.faults += 1
            case 90..<93:
                if let file = try api.saveWhatWasLeftBehind(key: "save-\(random.next())") {
                    saved += try serials(inSavedFile: file)
                    tally.saves += 1
                }
            default:
                // Let the dashboard catch up: one poll answer (or its timeout).
                try api.waitForNews(seconds: 1)
            }
            if Date() >= nextReport {
                print("  \(Int(deadline.timeIntervalSinceNow)) s left: \(tally)")
                nextReport = Date().addingTimeInterval(60)
            }
        }

        // Let everything go: no faults, and what is queued drains.
        try control("/sim/faults", #"{"mode": "none"}"#)
        let drainBy = Date().addingTimeInterval(120)
        while try !api.outbox().isEmpty {
            guard Date() < drainBy else { throw BenchError("the outbox did not drain within 2 minutes: \(try api.outbox().count) left") }
            try api.waitForNews(seconds: 2)
        }
        if let file = try api.saveWhatWasLeftBehind(key: "save-last") {
            saved += try serials(inSavedFile: file)
            tally.saves += 1
        }

        // What the simulator keeps of each user, against what the dashboard answered.
        let record = try JSONSerialization.jsonObject(with: httpGet(port: simulator, path: "/sim/written", headers: "")) as? [String: Any]
        let kept = (record?["messages"] as? [[String: Any]] ?? []).compactMap { message -> (serial: Int, user: Int64)? in
            guard let text = message["text"] as? String, text.hasPrefix("soak #"), let serial = Int(text.dropFirst(6)),
                  let user = (message["userId"] as? NSNumber)?.int64Value else { return nil }
            return (serial, user)
        }
        var sentBy: [Int: [Int64]] = [:]
        for (serial, user) in kept { sentBy[serial, default: []].append(user) }
        var wrongAccount: [Int] = [], doubled: [Int] = [], sentAfterDelete: [Int] = [], lost: [Int] = [], unknown: [Int] = []
        for (serial, users) in sentBy {
            guard let message = written[serial] else {
                unknown.append(serial)
                continue
            }
            if users.count > 1 { doubled.append(serial) }
            if !users.allSatisfy(message.writers.contains) { wrongAccount.append(serial) }
            if message.deleted { sentAfterDelete.append(serial) }
        }
        let savedSet = Set(saved)
        for (serial, message) in written where !message.deleted && sentBy[serial] == nil && !savedSet.contains(serial) {
            lost.append(serial)
        }
        let sentCount = sentBy.count, deletedCount = written.values.filter(\.deleted).count
        // Sent, its answer lost, and its account gone before the echo came: the upstream has it
        // once, and the file keeps a copy marked with its tries.
        let sentAndSaved = savedSet.filter { sentBy[$0] != nil }.count
        print("  \(tally)")
        print("  of \(written.count) accepted: \(sentCount) sent, \(deletedCount) deleted, \(savedSet.count) saved to a file after their account went "
            + "(\(sentAndSaved) of them sent too: a try's answer was lost before the account went)")
        print("  sent as another user: \(wrongAccount.count); kept twice: \(doubled.count); sent after a 204 Delete: \(sentAfterDelete.count); "
            + "lost: \(lost.count); sent but never written here: \(unknown.count)")
        let failures = wrongAccount.count + doubled.count + sentAfterDelete.count + lost.count + unknown.count
        guard failures == 0 else {
            keepFolder = true
            child.stop()
            print("  the store is kept for a look: \(folder)/store.sqlite")
            let all = record?["messages"] as? [[String: Any]] ?? []
            for serial in lost.sorted().prefix(10) {
                let upstream = all.filter { $0["text"] as? String == "soak #\(serial)" }
                if let message = written[serial] { print("  lost #\(serial): \(message); upstream: \(upstream)") }
            }
            throw BenchError("the soak found \(failures) broken promise(s): wrong account \(wrongAccount.sorted().prefix(10)), doubled \(doubled.sorted().prefix(10)), "
                + "after Delete \(sentAfterDelete.sorted().prefix(10)), lost \(lost.sorted().prefix(10)), unknown \(unknown.sorted().prefix(10))")
        }
        guard tally.written > 0, sentCount > 0 else { throw BenchError("no figure: nothing was written or sent") }
        print("  held: nothing sent as another account, nothing lost, nothing doubled")
    }

    /// The serials in a file Save to a file wrote (JSON Lines with `text`).
    private static func serials(inSavedFile path: String) throws -> [Int] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let text = object?["text"] as? String, text.hasPrefix("soak #") else { return nil }
            return Int(text.dropFirst(6))
        }
    }

    /// The dashboard's API as the soak calls it, over one kept-alive connection.
    final class Client {
        let endpoint: BenchEndpoint
        private var csrf = ""
        private var connection: KeepAliveConnection

        init(endpoint: BenchEndpoint) throws {
            self.endpoint = endpoint
            connection = try KeepAliveConnection(port: endpoint.port)
            let session = try call("GET", "/api/session")
            csrf = session.json["csrfToken"] as? String ?? ""
        }

        struct Answer {
            var status: Int
            var json: [String: Any]
        }

        /// One request on the kept-alive connection; `fresh`: on a new one, for a request that must
        /// not go twice (a Delete sent again after a lost answer would read 404 for its own 204).
        func call(_ method: String, _ path: String, body: String? = nil, key: String? = nil, fresh: Bool = false) throws -> Answer {
            if fresh { connection = try KeepAliveConnection(port: endpoint.port) }
            var headers = [("Authorization", "Bearer \(endpoint.token ?? "")"), ("X-CSRF-Token", csrf)]
            if body != nil { headers.append(("Content-Type", "application/json")) }
            if let key { headers.append(("Idempotency-Key", key)) }
            let answer: KeepAliveConnection.Answer
            do {
                answer = try connection.request(method, path, headers: headers, body: body ?? (method == "GET" ? nil : ""))
            } catch where !fresh {
                // The server closes a connection that stayed idle for long: one new one, once.
                connection = try KeepAliveConnection(port: endpoint.port)
                answer = try connection.request(method, path, headers: headers, body: body ?? (method == "GET" ? nil : ""))
            }
            let json = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] ?? [:]
            return Answer(status: answer.status, json: json)
        }

        func userID(of account: String) throws -> Int64? {
            let state = try call("GET", "/api/state").json
            return ((state["accounts"] as? [String: Any])?[account] as? [String: Any])?["userId"].flatMap { ($0 as? NSNumber)?.int64Value }
        }

        func chats(of account: String) throws -> [Int] {
            (try call("GET", "/api/chats?account=\(account)").json["chats"] as? [[String: Any]] ?? [])
                .filter { ($0["membership"] as? String ?? "join") == "join" }.compactMap { $0["id"] as? Int }
        }

        func write(_ text: String, to chat: Int, of account: String) throws -> Answer {
            try call("POST", "/api/chats/\(chat)/messages?account=\(account)", body: SendBenchmark.jsonText(["text": text]), key: UUID().uuidString)
        }

        func delete(_ path: String) throws -> Int {
            try call("DELETE", path, fresh: true).status
        }

        func outbox() throws -> [[String: Any]] {
            try call("GET", "/api/outbox").json["outbox"] as? [[String: Any]] ?? []
        }

        /// Holds one poll until something happens or `seconds` pass.
        func waitForNews(seconds: Int) throws {
            let seq = try call("GET", "/api/state").json["seq"] as? Int ?? 0
            _ = try call("GET", "/api/poll?since=\(seq)&timeout=\(seconds)&visible=1")
        }

        /// Save to a file on the error of what accounts left behind, if one is open: the file's path.
        func saveWhatWasLeftBehind(key: String) throws -> String? {
            let errors = try call("GET", "/api/state").json["errors"] as? [[String: Any]] ?? []
            guard let error = errors.first(where: { $0["type"] as? String == "/problems/unsent-left-behind" }), let id = error["id"] as? String else { return nil }
            let answer = try call("POST", "/api/errors/\(id)/attempts", body: #"{"option": "export"}"#, key: key)
            guard answer.status == 200 else {
                // Closed meanwhile (the user came back), or another attempt runs: nothing saved now.
                guard [404, 409].contains(answer.status) else { throw BenchError("Save to a file answered \(answer.status): \(answer.json)") }
                return nil
            }
            guard answer.json["status"] as? String == "recovered" else { throw BenchError("Save to a file did not work: \(answer.json)") }
            let summary = answer.json["summary"] as? String ?? ""
            guard let range = summary.range(of: #"/\S+\.jsonl"#, options: .regularExpression) else { return nil }  // nothing was left
            return String(summary[range])
        }
    }
}

/// A small seeded generator (SplitMix64), so a soak that finds something can be run again the same way.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
