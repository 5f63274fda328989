import Foundation
import JSONText
import PushRules

/// The account's push rules evaluated for each event, side by side in one run with Synapse's own
/// evaluator (its Rust `PushRuleEvaluator`, called as Synapse's bulk evaluator calls it, from
/// Synapse's Python) on the same events and the same rules:
///
/// - the rules are what Synapse serves for `GET /pushrules/` (its defaults, formatted by its own
///   `format_push_rules_for_user`) with a person's own: two keywords, a muted room and one made
///   loud (Element's "Mute" and "All messages"); a second set adds a keyword with a wildcard (`deploy*`);
/// - the events are a mix a busy account sees (plain text in DMs and in rooms of 30, `m.mentions`
///   of the account and of the room, notices, edits, reactions, member events, thread replies),
///   made by the peer's script from a seed;
/// - each side's time per event covers flattening the event and running the rules for one
///   account, timed one event at a time after a warm-up; p50, p99 and the maximum.
///
/// Sender rules are left out: Synapse stores them with a `user_id` condition that the events it
/// flattens here do not carry, so the two sides would differ on what the rule means rather than
/// on how fast it runs (and Element offers no sender rules).
///
/// Both sides' decisions (notify, highlight) must agree on every event: a disagreement is a bug in
/// one of them, and the benchmark prints no figure.
enum PushRuleBenchmark {
    struct Item: Decodable {
        var event: JSONValue
        var members: Int
        var levels: [String: Int]
    }

    struct Workload: Decodable {
        var user: String
        var displayName: String
        var workload: [Item]
        var decisions: [String: [Int]]
    }

    static func run(events: Int, seed: Int, python: String?) throws -> [ReportLine] {
        let interpreter = try MatrixLatencyBenchmark.synapsePython(python)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lp-bench-push-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = folder.appendingPathComponent("peer.py").path, workloadPath = folder.appendingPathComponent("workload.json").path
        try peerScript.write(toFile: script, atomically: true, encoding: .utf8)
        print("push-rules: \(events) events, each flattened and run through the account's push rules; this evaluator vs Synapse's own (Rust, from its Python), same events and rules")
        let output = try runCommand(interpreter, [script, "--events", String(events), "--seed", String(seed), "--out", workloadPath])
        guard let last = output.split(separator: "\n").last,
              let theirs = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: [String: Double]] else {
            throw BenchError("no figure: the peer printed no result")
        }
        let workload = try JSONDecoder().decode(Workload.self, from: Data(contentsOf: URL(fileURLWithPath: workloadPath)))
        let contexts = workload.workload.map { item -> PushRoomContext in
            guard case .object(let fields) = item.event, case .string(let room)? = fields["room_id"] else { return PushRoomContext(roomID: "", memberCount: 0) }
            return PushRoomContext(roomID: room, memberCount: item.members, displayName: workload.displayName,
                                   powerLevels: PowerLevels(users: item.levels))
        }
        var lines: [ReportLine] = []
        for name in ["usual", "wildcard"] {
            guard let expected = workload.decisions[name], let peer = theirs[name],
                  let served = FileManager.default.contents(atPath: "\(workloadPath).\(name).rules.json") else {
                throw BenchError("no figure: the peer left out the \(name) rule set")
            }
            let rules = try PushRuleSet.decode(globalOf: Array(served))
            let evaluator = PushRuleEvaluator(rules: rules, userID: workload.user)
            let measured = measure(evaluator, workload.workload, contexts, passes: 5)
            let disagreements = zip(measured.decisions, expected).enumerated().filter { $0.element.0 != $0.element.1 }
            if let first = disagreements.first {
                throw BenchError("no figure: the \(name) rules decide \(disagreements.count) of \(expected.count) events otherwise than Synapse; the first, #\(first.offset) "
                                 + "(ours \(first.element.0), Synapse's \(first.element.1); 1 notify, 3 highlight): \(workload.workload[first.offset].event)")
            }
            let notify = expected.filter { $0 & 1 != 0 }.count, highlight = expected.filter { $0 & 2 != 0 }.count
            let ours = measured.nanoseconds.sorted()
            let ours50 = Double(percentile(ours, 0.5)) / 1000, ours99 = Double(percentile(ours, 0.99)) / 1000, oursMax = Double(ours.last ?? 0) / 1000
            let peer50 = (peer["p50"] ?? 0) / 1000, peer99 = (peer["p99"] ?? 0) / 1000, peerMax = (peer["max"] ?? 0) / 1000
            let label = name == "usual" ? "defaults, 2 keywords, a muted and a loud room" : "the same and a wildcard keyword (deploy*)"
            print("  \(label): \(notify) of \(expected.count) events notify, \(highlight) highlight; both evaluators agree on every one")
            print(String(format: "    per event: p50 %.2f us, p99 %.2f us, max %.1f us (%d samples); Synapse p50 %.2f us, p99 %.2f us, max %.1f us (%d samples); p99 ratio %.3f (goal: p99 < 20 us)",
                         ours50, ours99, oursMax, ours.count, peer50, peer99, peerMax, Int(peer["samples"] ?? 0), ours99 / peer99))
            lines.append(ReportLine(name: "push rules per event, p99 (\(label))", ours: String(format: "%.2f us", ours99),
                                    peer: String(format: "%.2f us Synapse", peer99), ratio: ours99 / peer99, goal: "< 20 us", met: ours99 < 20))
        }
        return lines
    }

    /// Each event flattened and evaluated, timed alone; the first pass warms up and is not kept.
    private static func measure(_ evaluator: PushRuleEvaluator, _ items: [Item], _ contexts: [PushRoomContext], passes: Int)
        -> (nanoseconds: [UInt64], decisions: [Int]) {
        var nanoseconds: [UInt64] = []
        nanoseconds.reserveCapacity(items.count * passes)
        var decisions = [Int](repeating: 0, count: items.count)
        for pass in 0...passes {
            for index in items.indices {
                let started = monotonicNanoseconds()
                let decision = evaluator.evaluate(FlattenedEvent(items[index].event), in: contexts[index])
                let elapsed = monotonicNanoseconds() - started
                if pass > 0 { nanoseconds.append(elapsed) }
                decisions[index] = (decision.notifies ? 1 : 0) + (decision.highlights ? 2 : 0)
            }
        }
        return (nanoseconds, decisions)
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    private static func percentile(_ sorted: [UInt64], _ fraction: Double) -> UInt64 {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))]
    }

    /// The peer: Synapse's evaluator as `BulkPushRuleEvaluator` drives it (`_flatten_dict`, then a
    /// `PushRuleEvaluator` per event and `run` for the account), and the workload both sides use.
    private static let peerScript = #"""
        import argparse, json, random, time
        from synapse.synapse_rust.push import FilteredPushRules, PushRule, PushRules, PushRuleEvaluator
        from synapse.push.clientformat import format_push_rules_for_user
        from synapse.push.bulk_push_rule_evaluator import _flatten_dict
        from synapse.types import UserID

        parser = argparse.ArgumentParser()
        parser.add_argument("--events", type=int, default=20000)
        parser.add_argument("--seed", type=int, default=51)
        parser.add_argument("--out", required=True)
        args = parser.parse_args()

        USER, NAME = "@alice:localhost", "Alice Liddell"
        rooms = [f"!room{index}:localhost" for index in range(40)]
        people = [f"@person{index}:localhost" for index in range(60)]
        muted, loud = rooms[13], rooms[17]
        def rule(rule_id, kind, conditions, actions):
            return PushRule.from_db(rule_id, {"override": 5, "content": 4, "room": 3, "sender": 2, "underride": 1}[kind],
                                    json.dumps(conditions), json.dumps(actions))
        usual = [
            rule("coffee", "content", [{"kind": "event_match", "key": "content.body", "pattern": "coffee"}], ["notify", {"set_tweak": "highlight"}]),
            rule("standup", "content", [{"kind": "event_match", "key": "content.body", "pattern": "standup"}], ["notify", {"set_tweak": "sound", "value": "default"}]),
            rule(muted, "room", [{"kind": "event_match", "key": "room_id", "pattern": muted}], []),
            rule(loud, "room", [{"kind": "event_match", "key": "room_id", "pattern": loud}], ["notify", {"set_tweak": "sound", "value": "default"}]),
        ]
        wildcard = usual + [rule("deploy", "content", [{"kind": "event_match", "key": "content.body", "pattern": "deploy*"}], ["notify", {"set_tweak": "highlight"}])]
        sets = {name: FilteredPushRules(PushRules(rules), {}, False, False, False, False, False, False, False)
                for name, rules in [("usual", usual), ("wildcard", wildcard)]}

        random.seed(args.seed)
        words = ("the a meeting lunch later tomorrow review please thanks build release notes room ok see you soon "
                 "shipping today yesterday fixed broken tests green").split()
        rare = ["coffee", "standup", "deployment", "deployed", "alice", "Alice Liddell", "ALICE"]
        def event(index):
            room, sender = random.choice(rooms), random.choice(people)
            body = [random.choice(words) for _ in range(random.randint(3, 24))]
            if random.random() < 0.08:
                body.insert(random.randrange(len(body) + 1), random.choice(rare))
            content, kind, etype = {"msgtype": "m.text", "body": " ".join(body)}, random.random(), "m.room.message"
            if kind < 0.04:
                content["m.mentions"] = {"user_ids": [USER]}
            elif kind < 0.06:
                content["m.mentions"] = {"room": True}
            elif kind < 0.12:
                content["m.mentions"] = {}
            elif kind < 0.15:
                content["msgtype"] = "m.notice"
            elif kind < 0.20:
                content = {"msgtype": "m.text", "body": "* " + content["body"], "m.new_content": dict(content),
                           "m.relates_to": {"rel_type": "m.replace", "event_id": f"$e{index - 1}"}}
            elif kind < 0.28:
                etype, content = "m.reaction", {"m.relates_to": {"rel_type": "m.annotation", "event_id": f"$e{index - 1}", "key": "\N{THUMBS UP SIGN}"}}
            elif kind < 0.31:
                etype, content = "m.room.member", {"membership": "join", "displayname": "Someone"}
            elif kind < 0.38:
                content["m.relates_to"] = {"rel_type": "m.thread", "event_id": f"$e{index - 5}", "is_falling_back": True,
                                           "m.in_reply_to": {"event_id": f"$e{index - 1}"}}
            fields = {"type": etype, "room_id": room, "sender": sender, "event_id": f"$e{index}", "content": content}
            if etype == "m.room.member":
                fields["state_key"] = sender
            return {"event": fields, "members": 2 if rooms.index(room) < 10 else 30,
                    "levels": {sender: 50} if people.index(sender) % 10 == 0 else {}}
        workload = [event(index) for index in range(args.events)]

        def decide(actions):
            notify = "notify" in actions
            highlight = any(isinstance(a, dict) and a.get("set_tweak") == "highlight" and a.get("value", True) for a in actions)
            return (1 if notify else 0) + (2 if notify and highlight else 0)

        def evaluate(item, rules):
            flattened = _flatten_dict(item["event"])
            content, sender = item["event"]["content"], item["event"]["sender"]
            evaluator = PushRuleEvaluator(flattened, isinstance(content.get("m.mentions"), dict), item["members"],
                                          item["levels"].get(sender, 0), {"room": 50}, {}, False, [], False, False, False)
            return evaluator.run(rules, USER, NAME, None)

        clock, results, decisions = time.perf_counter_ns, {}, {}
        for name, rules in sets.items():
            for item in workload[:1000]:
                evaluate(item, rules)
            times, decided = [], []
            for item in workload:
                started = clock()
                actions = evaluate(item, rules)
                times.append(clock() - started)
                decided.append(decide(actions))
            times.sort()
            results[name] = {"p50": times[len(times) // 2], "p99": times[min(len(times) - 1, int(0.99 * len(times)))], "max": times[-1], "samples": len(times)}
            decisions[name] = decided
        with open(args.out, "w") as out:
            json.dump({"user": USER, "displayName": NAME, "workload": workload, "decisions": decisions}, out)
        for name, rules in sets.items():
            # What Synapse answers to GET /pushrules/ for this account.
            with open(f"{args.out}.{name}.rules.json", "w") as out:
                json.dump(format_push_rules_for_user(UserID.from_string(USER), rules), out)
        print(json.dumps(results))
        """#
}
