import Foundation
import Testing
@testable import PushRules
import TestSupport

@Suite("Glob patterns and paths, as the spec's examples give them")
struct GlobAndPathTests {
    @Test func eventMatchMatchesTheWholeValueCaseInsensitively() {
        let pattern = GlobPattern(glob: "lunc?*")
        #expect(pattern.matchesWhole("Lunch plans"))
        #expect(pattern.matchesWhole("LUNCH"), "case-insensitive; * may match nothing")
        #expect(!pattern.matchesWhole(" lunch"), "a leading space")
        #expect(!pattern.matchesWhole("lunc"), "? must match a character")
    }

    @Test func aBodyPatternMatchesBetweenWordBoundaries() {
        let pattern = GlobPattern(glob: "ex*ple")
        #expect(pattern.matchesWords(in: "An example event."))
        #expect(pattern.matchesWords(in: "exple"), "at the start and the end of the body")
        #expect(pattern.matchesWords(in: "An exciting triple-whammy"), "across words; - separates words")
        #expect(!pattern.matchesWords(in: "complexample"), "not inside a word")
        #expect(!pattern.matchesWords(in: "examples"), "nor ending inside one")
        #expect(GlobPattern(glob: "alice").matchesWords(in: "hey Alice, lunch?"))
        #expect(!GlobPattern(glob: "alice").matchesWords(in: "malice"))
        #expect(GlobPattern(glob: "").matchesWhole(""), "an empty pattern matches an empty state_key")
        #expect(!GlobPattern(glob: "").matchesWhole("x"))
    }

    @Test func aPatternWithoutWildcardsMatchesAsTheAutomatonDoes() {
        // Texts and patterns over a small alphabet, so words, boundaries, case and non-ASCII
        // letters meet often; the direct comparison must say what the automaton says.
        let alphabet: [Character] = ["a", "b", "A", "B", " ", "-", "_", "1", "é", "É", "."]
        var generator = TestRandom(seed: 51)
        func random(_ length: Int) -> String {
            String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        }
        var disagreements: [String] = []
        for _ in 0..<4000 {
            let pattern = GlobPattern(literal: random(Int(generator.next() % 4) + 1))
            let text = random(Int(generator.next() % 9))
            for words in [false, true] {
                let direct = words ? pattern.matchesWords(in: text) : pattern.matchesWhole(text)
                if direct != pattern.matchesByAutomaton(text, words: words) {
                    disagreements.append("\(pattern.tokens) in \(text.debugDescription), words: \(words)")
                }
            }
        }
        #expect(disagreements.count == 0, "the first: \(disagreements.prefix(5))")
        #expect(GlobPattern(literal: "m.room.message").literal != nil && GlobPattern(glob: "deploy*").literal == nil)
    }

    @Test func manyStarsCostNoBacktracking() {
        let pattern = GlobPattern(glob: String(repeating: "*a", count: 30) + "b")
        #expect(!pattern.matchesWhole(String(repeating: "a", count: 200)))
        #expect(pattern.matchesWhole(String(repeating: "a", count: 40) + "b"))
    }

    @Test func everyKindOfValueKeepsItsKind() {
        let flat = event(#"{"content": {"s": "1", "t": true, "f": false, "i": 1, "d": 1.5, "n": null, "a": ["x", 2, false], "o": {}}}"#)
        #expect(flat["content.s"] == .string("1"))
        #expect(flat["content.t"] == .bool(true) && flat["content.f"] == .bool(false), "a boolean is no integer")
        #expect(flat["content.i"] == .integer(1))
        #expect(flat["content.d"] == .number(1.5))
        #expect(flat["content.n"] == .null)
        #expect(flat["content.a"] == .array([.string("x"), .integer(2), .bool(false)]))
        #expect(flat.has("content.o") && flat["content.o"] == nil, "an object is flattened away")
        #expect(flat["content.s.x"] == nil && !flat.has("content.a.0"), "a path through a value that is no object names nothing")
    }

    @Test func propertyNamesWithDotsAreEscapedInPaths() {
        let flat = event(#"{"content": {"m.relates_to": {"rel_type": "m.replace"}, "m\\foo": 1, "m.mentions": {}}}"#)
        #expect(flat["content.m\\.relates_to.rel_type"] == .string("m.replace"))
        #expect(flat["content.m\\\\foo"] == .integer(1))
        #expect(flat.has("content.m\\.mentions"), "an empty object is still there")
        #expect(flat["content.m.relates_to.rel_type"] == nil, "an unescaped dot is another path")
    }
}

@Suite("Push rule conditions")
struct PushConditionTests {
    let room = PushRoomContext(roomID: "!r:example.org", memberCount: 5)

    private func decision(_ rule: String, _ event: FlattenedEvent, room: PushRoomContext? = nil) -> PushDecision {
        let rules = try! PushRuleSet.decode(globalOf: Array(#"{"global": {"override": [\#(rule)]}}"#.utf8))
        return PushRuleEvaluator(rules: rules, userID: "@alice:example.org").evaluate(event, in: room ?? self.room)
    }

    private func rule(_ conditions: String) -> String {
        #"{"rule_id": "test", "enabled": true, "conditions": [\#(conditions)], "actions": ["notify"]}"#
    }

    @Test func eventPropertyIsMatchesTheExactValueAndType() {
        let condition = rule(#"{"kind": "event_property_is", "key": "content.m\\.federate", "value": true}"#)
        #expect(decision(condition, event(#"{"type": "m.room.create", "content": {"m.federate": true}}"#)).notifies)
        #expect(!decision(condition, event(#"{"type": "m.room.create", "content": {"m.federate": "true"}}"#)).notifies, "a string")
        #expect(!decision(condition, event(#"{"type": "m.room.create", "content": {"m.federate": 1}}"#)).notifies, "no casts")
        #expect(!decision(condition, event(#"{"type": "m.room.create", "content": {}}"#)).notifies, "absent")
    }

    @Test func eventPropertyContainsMatchesAWholeArrayItem() {
        let condition = rule(##"{"kind": "event_property_contains", "key": "content.alt_aliases", "value": "#myroom:example.com"}"##)
        #expect(decision(condition, event(##"{"content": {"alt_aliases": ["#somewhere:example.org", "#myroom:example.com"]}}"##)).notifies)
        #expect(!decision(condition, event(#"{"content": {"alt_aliases": [":example.com"]}}"#)).notifies, "partial values do not match")
        #expect(!decision(condition, event(##"{"content": {"alt_aliases": "#myroom:example.com"}}"##)).notifies, "not an array")
    }

    @Test func eventMatchNeedsAString() {
        let condition = rule(#"{"kind": "event_match", "key": "content.topic", "pattern": "*"}"#)
        #expect(!decision(condition, event(#"{"content": {"topic": null}}"#)).notifies, "null is not a string, even for *")
        #expect(!decision(condition, event(#"{"content": {}}"#)).notifies, "absent, even for *")
        #expect(decision(condition, event(#"{"content": {"topic": ""}}"#)).notifies)
    }

    @Test func roomMemberCountComparesAsItsPrefixSays() {
        for (text, members, holds) in [("2", 2, true), ("==2", 3, false), ("<10", 9, true), ("<10", 10, false), (">=3", 3, true), (">3", 3, false), ("<=1", 1, true)] {
            let condition = rule(#"{"kind": "room_member_count", "is": "\#(text)"}"#)
            let here = PushRoomContext(roomID: "!r:example.org", memberCount: members)
            #expect(decision(condition, message(#"{"body": "x"}"#), room: here).notifies == holds, "\(text) with \(members) members")
        }
        #expect(PushCondition.MemberCount("=2") == nil && PushCondition.MemberCount("2.5") == nil && PushCondition.MemberCount("") == nil)
    }

    @Test func senderNotificationPermissionReadsThePowerLevels() {
        let condition = rule(#"{"kind": "sender_notification_permission", "key": "room"}"#)
        let levels = PowerLevels(users: ["@mod:example.org": 50, "@admin:example.org": 100], usersDefault: 0)
        let here = PushRoomContext(roomID: "!r:example.org", memberCount: 5, powerLevels: levels)
        #expect(decision(condition, message("{}", from: "@mod:example.org"), room: here).notifies, "50 is enough by default")
        #expect(!decision(condition, message("{}", from: "@bob:example.org"), room: here).notifies, "users_default 0 is not")
        var strict = levels
        strict.notifications = ["room": 100]
        #expect(!decision(condition, message("{}", from: "@mod:example.org"), room: PushRoomContext(roomID: "!r:example.org", memberCount: 5, powerLevels: strict)).notifies)
    }

    @Test func containsDisplayNameLooksForTheNameAsWords() {
        let condition = rule(#"{"kind": "contains_display_name"}"#)
        let named = PushRoomContext(roomID: "!r:example.org", memberCount: 5, displayName: "Alice (work)")
        #expect(decision(condition, message(#"{"body": "ask alice (WORK) about it"}"#), room: named).notifies, "literal, not a glob")
        #expect(!decision(condition, message(#"{"body": "ask alice about it"}"#), room: named).notifies)
        #expect(!decision(condition, message(#"{"body": "Alice (work)"}"#), room: room).notifies, "no display name: never")
    }

    @Test func anUnknownOrMalformedConditionNeverMatches() {
        for bad in [#"{"kind": "org.example.future", "key": "type"}"#, #"{"kind": "room_member_count", "is": "lots"}"#,
                    #"{"kind": "event_match", "key": "type"}"#, #"{"kind": "event_property_is", "key": "x", "value": {"a": 1}}"#, "{}"] {
            #expect(!decision(rule(bad), message(#"{"body": "x"}"#)).notifies, "\(bad)")
            let rules = try! PushRuleSet.decode(globalOf: Array(#"{"global": {"override": [\#(rule(bad))]}}"#.utf8))
            #expect(rules.override.first?.unreadable.isEmpty == false, "and it says why, for the log: \(bad)")
        }
        #expect(decision(rule(""), message(#"{"body": "x"}"#)).notifies, "a rule with no conditions always matches")
    }

    @Test func actionsKnowTheirTweaksAndIgnoreHistoricalOnes() throws {
        let decode = { (text: String) in try JSONDecoder().decode(PushActions.self, from: Data(text.utf8)) }
        #expect(try decode(#"["dont_notify"]"#) == PushActions(), "dont_notify is an empty list")
        #expect(try decode(#"["notify", "coalesce", {"set_tweak": "highlight"}]"#) == PushActions(notify: true, highlight: true))
        #expect(try decode(#"["notify", {"set_tweak": "highlight", "value": false}, {"set_tweak": "sound", "value": "ring"}]"#)
                == PushActions(notify: true, highlight: false, sound: "ring"))
        #expect(try decode(#"["notify", {"set_tweak": "org.example.flash", "value": 3}, 7]"#) == PushActions(notify: true))
    }
}

@Suite("The default rule set, in its order")
struct DefaultRuleSetTests {
    let rules = PushRuleEvaluator(rules: defaultRules(), userID: "@alice:example.org")
    let group = PushRoomContext(roomID: "!r:example.org", memberCount: 5, displayName: "Alice",
                                powerLevels: PowerLevels(users: ["@mod:example.org": 50]))
    let direct = PushRoomContext(roomID: "!dm:example.org", memberCount: 2)

    @Test func aMessageInAGroupNotifiesWithoutSoundOrHighlight() {
        let decision = rules.evaluate(message(#"{"msgtype": "m.text", "body": "lunch?"}"#), in: group)
        #expect(decision.ruleID == ".m.rule.message" && decision.notifies && !decision.highlights && decision.actions.sound == nil)
    }

    @Test func aDirectMessageNotifiesWithSound() {
        let decision = rules.evaluate(message(#"{"msgtype": "m.text", "body": "lunch?"}"#), in: direct)
        #expect(decision.ruleID == ".m.rule.room_one_to_one" && decision.notifies && decision.actions.sound == "default")
        let encrypted = rules.evaluate(message(#"{"algorithm": "m.megolm.v1.aes-sha2"}"#, type: "m.room.encrypted"), in: direct)
        #expect(encrypted.ruleID == ".m.rule.encrypted_room_one_to_one")
    }

    @Test func noticesEditsReactionsAndMembershipStayQuiet() {
        #expect(rules.evaluate(message(#"{"msgtype": "m.notice", "body": "build passed"}"#), in: group).ruleID == ".m.rule.suppress_notices")
        let edit = message(#"{"body": "* fixed", "m.new_content": {"body": "fixed"}, "m.relates_to": {"rel_type": "m.replace", "event_id": "$a"}}"#)
        #expect(rules.evaluate(edit, in: group) == PushDecision(actions: PushActions(), ruleID: ".m.rule.suppress_edits"))
        let reaction = message(#"{"m.relates_to": {"rel_type": "m.annotation", "event_id": "$a", "key": "👍"}}"#, type: "m.reaction")
        #expect(!rules.evaluate(reaction, in: direct).notifies)
        let join = event(#"{"type": "m.room.member", "state_key": "@carol:example.org", "sender": "@carol:example.org", "content": {"membership": "join"}}"#)
        #expect(rules.evaluate(join, in: group).ruleID == ".m.rule.member_event")
    }

    @Test func anInviteForThisAccountNotifies() {
        let invite = event(#"{"type": "m.room.member", "state_key": "@alice:example.org", "sender": "@bob:example.org", "content": {"membership": "invite"}}"#)
        #expect(rules.evaluate(invite, in: group).ruleID == ".m.rule.invite_for_me")
    }

    @Test func mentionsHighlight() {
        let named = message(#"{"body": "alice: look", "m.mentions": {"user_ids": ["@alice:example.org"]}}"#)
        #expect(rules.evaluate(named, in: group).ruleID == ".m.rule.is_user_mention" && rules.evaluate(named, in: group).highlights)
        let someoneElse = message(#"{"body": "bob: look", "m.mentions": {"user_ids": ["@bob:example.org"]}}"#)
        #expect(!rules.evaluate(someoneElse, in: group).highlights)
        let room = message(#"{"body": "@room lunch", "m.mentions": {"room": true}}"#, from: "@mod:example.org")
        #expect(rules.evaluate(room, in: group).ruleID == ".m.rule.is_room_mention")
        let roomFromAnyone = message(#"{"body": "@room lunch", "m.mentions": {"room": true}}"#)
        #expect(rules.evaluate(roomFromAnyone, in: group).ruleID == ".m.rule.message", "a sender below 50 cannot @room")
    }

    @Test func theLegacyNameRuleGivesWayToMMentions() {
        #expect(rules.evaluate(message(#"{"body": "ask Alice"}"#), in: group).ruleID == ".m.rule.contains_user_name", "no m.mentions: the old rule")
        let says = rules.evaluate(message(#"{"body": "ask Alice", "m.mentions": {}}"#), in: group)
        #expect(says.ruleID == ".m.rule.message" && !says.highlights, "m.mentions says nobody is mentioned")
        #expect(rules.evaluate(message(#"{"body": "malice"}"#), in: group).ruleID == ".m.rule.message")
    }

    @Test func theAccountsOwnMessagesNeverNotifyIt() {
        #expect(rules.evaluate(message(#"{"body": "hi"}"#, from: "@alice:example.org"), in: direct) == .silent)
    }

    @Test func theMasterRuleSilencesEverything() {
        let off = PushRuleEvaluator(rules: defaultRules(enablingMaster: true), userID: "@alice:example.org")
        let decision = off.evaluate(message(#"{"body": "hi", "m.mentions": {"user_ids": ["@alice:example.org"]}}"#), in: direct)
        #expect(decision.ruleID == ".m.rule.master" && !decision.notifies)
    }

    @Test func aMutedRoomStaysQuietAndOthersDoNot() {
        // Element's "Mute": a room rule with no actions (older clients write dont_notify).
        let muted = PushRuleEvaluator(rules: defaultRules(extra: #"{"rule_id": "!r:example.org", "enabled": true, "actions": ["dont_notify"]}"#),
                                      userID: "@alice:example.org")
        #expect(!muted.evaluate(message(#"{"body": "lunch?"}"#), in: group).notifies)
        #expect(muted.evaluate(message(#"{"body": "lunch?"}"#), in: direct).notifies, "another room still notifies")
        #expect(muted.evaluate(message(#"{"body": "hi", "m.mentions": {"user_ids": ["@alice:example.org"]}}"#), in: group).highlights,
                "a mention is an override: it gets through a muted room, as in Element")
    }

    @Test func aDisabledRuleNeverMatches() {
        var set = defaultRules()
        set.underride = set.underride.map { var rule = $0; if rule.ruleID == ".m.rule.message" { rule.enabled = false }; return rule }
        #expect(!PushRuleEvaluator(rules: set, userID: "@alice:example.org").evaluate(message(#"{"body": "x"}"#), in: group).notifies)
    }

    @Test func aRuleSetThatCannotBeReadInPartsKeepsTheRest() throws {
        let set = try PushRuleSet.decode(globalOf: Array(#"{"global": {"override": [{"no": "id"}, 7], "underride": [{"rule_id": "u", "actions": ["notify"]}]}}"#.utf8))
        #expect(set.override.isEmpty && set.underride.map(\.ruleID) == ["u"])
        #expect(try PushRuleSet.decode(globalOf: Array("{}".utf8)) == PushRuleSet())
    }
}

