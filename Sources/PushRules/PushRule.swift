import Foundation
import JSONText

/// One condition of an `override` or `underride` rule (spec: Push Rules, Conditions). One the
/// evaluator cannot read (an unknown kind, a `room_member_count` it cannot parse, a missing key)
/// is `.unreadable`, which never matches: the spec's "unrecognised conditions MUST NOT match".
public enum PushCondition: Sendable, Equatable, Decodable {
    case eventMatch(key: EventPath, pattern: GlobPattern)
    case eventPropertyIs(key: EventPath, value: JSONValue)
    case eventPropertyContains(key: EventPath, value: JSONValue)
    case containsDisplayName
    case roomMemberCount(MemberCount)
    case senderNotificationPermission(key: String)
    /// What could not be read, and why (for the log).
    case unreadable(String)

    /// `room_member_count`'s `is`: `2`, `==2`, `<10`, `>=3`...
    public struct MemberCount: Sendable, Equatable {
        public enum Comparison: Sendable, Equatable { case equal, less, greater, lessOrEqual, greaterOrEqual }
        public var comparison: Comparison
        public var count: Int

        /// Nil for anything but an optional prefix and a decimal integer.
        public init?(_ text: String) {
            let prefixes: [(String, Comparison)] = [("==", .equal), ("<=", .lessOrEqual), (">=", .greaterOrEqual), ("<", .less), (">", .greater)]
            let (prefix, comparison) = prefixes.first { text.hasPrefix($0.0) } ?? ("", .equal)
            let digits = text.dropFirst(prefix.count)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(digits) else { return nil }
            self.comparison = comparison
            self.count = count
        }

        func holds(for members: Int) -> Bool {
            switch comparison {
            case .equal: members == count
            case .less: members < count
            case .greater: members > count
            case .lessOrEqual: members <= count
            case .greaterOrEqual: members >= count
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = (try? container.decode(String.self, forKey: .kind)) ?? "(no kind)"
        let key = try? container.decode(String.self, forKey: .key)
        switch kind {
        case "event_match":
            guard let key, let pattern = try? container.decode(String.self, forKey: .pattern) else {
                self = .unreadable("event_match without a key and a string pattern"); return
            }
            self = .eventMatch(key: EventPath(key), pattern: GlobPattern(glob: pattern))
        case "event_property_is", "event_property_contains":
            guard let key, let value = (try? container.decode(JSONValue.self, forKey: .value))?.canonicalScalar else {
                self = .unreadable("\(kind) without a key and a canonical scalar value"); return
            }
            self = kind == "event_property_is" ? .eventPropertyIs(key: EventPath(key), value: value)
                : .eventPropertyContains(key: EventPath(key), value: value)
        case "contains_display_name":
            self = .containsDisplayName
        case "room_member_count":
            guard let text = try? container.decode(String.self, forKey: .is), let count = MemberCount(text) else {
                self = .unreadable("room_member_count with an `is` that is not [==|<|>|<=|>=]N"); return
            }
            self = .roomMemberCount(count)
        case "sender_notification_permission":
            guard let key else { self = .unreadable("sender_notification_permission without a key"); return }
            self = .senderNotificationPermission(key: key)
        default:
            self = .unreadable("unknown condition kind \(kind)")
        }
    }

    enum CodingKeys: String, CodingKey { case kind, key, pattern, value, `is` }
}

/// What a matching rule asks for (spec: Actions). `dont_notify` and `coalesce` are historical
/// and mean nothing; unknown actions and tweaks are kept out.
public struct PushActions: Sendable, Equatable, Decodable {
    public var notify = false
    public var highlight = false
    public var sound: String?

    public init(notify: Bool = false, highlight: Bool = false, sound: String? = nil) {
        self.notify = notify
        self.highlight = highlight
        self.sound = sound
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            if let name = try? container.decode(String.self) {
                if name == "notify" { notify = true }
            } else if let tweak = try? container.decode(Tweak.self) {
                switch tweak.name {
                case "highlight": highlight = tweak.value.map { $0 == .bool(true) } ?? true
                case "sound": if case .string(let value)? = tweak.value { sound = value }
                default: break
                }
            } else {
                _ = try? container.decode(JSONValue.self)
            }
        }
    }

    private struct Tweak: Decodable {
        var name: String
        var value: JSONValue?
        enum CodingKeys: String, CodingKey { case name = "set_tweak", value }
    }
}

/// One push rule as `GET /pushrules/` gives it. Content rules carry a `pattern`; room and sender
/// rules are about their `rule_id` (a room id, a user id).
public struct PushRule: Sendable, Equatable, Decodable {
    public var ruleID: String
    public var isDefault: Bool
    public var enabled: Bool
    public var conditions: [PushCondition]
    public var pattern: GlobPattern?
    public var actions: PushActions

    public init(ruleID: String, isDefault: Bool = false, enabled: Bool = true, conditions: [PushCondition] = [], pattern: GlobPattern? = nil,
                actions: PushActions) {
        self.ruleID = ruleID
        self.isDefault = isDefault
        self.enabled = enabled
        self.conditions = conditions
        self.pattern = pattern
        self.actions = actions
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        ruleID = try container.decode(String.self, forKey: .ruleID)
        isDefault = (try? container.decode(Bool.self, forKey: .isDefault)) ?? false
        enabled = (try? container.decode(Bool.self, forKey: .enabled)) ?? true
        conditions = (try? container.decode([PushCondition].self, forKey: .conditions)) ?? []
        pattern = (try? container.decode(String.self, forKey: .pattern)).map(GlobPattern.init(glob:))
        actions = (try? container.decode(PushActions.self, forKey: .actions)) ?? PushActions()
    }

    enum CodingKeys: String, CodingKey {
        case ruleID = "rule_id", isDefault = "default", enabled, conditions, pattern, actions
    }

    /// What could not be read in this rule, if anything (each such condition keeps it from matching).
    public var unreadable: [String] {
        conditions.compactMap { if case .unreadable(let why) = $0 { why } else { nil } }
    }
}

/// The account's rules by kind, as `GET /pushrules/` answers under `global` and the
/// `m.push_rules` account data carries them.
public struct PushRuleSet: Sendable, Equatable, Decodable {
    public var override: [PushRule] = []
    public var content: [PushRule] = []
    public var room: [PushRule] = []
    public var sender: [PushRule] = []
    public var underride: [PushRule] = []

    public init(override: [PushRule] = [], content: [PushRule] = [], room: [PushRule] = [], sender: [PushRule] = [], underride: [PushRule] = []) {
        self.override = override
        self.content = content
        self.room = room
        self.sender = sender
        self.underride = underride
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // A rule that cannot be read at all (no rule_id) is left out; the others stand.
        func rules(_ key: CodingKeys) -> [PushRule] {
            ((try? container.decode([Lenient].self, forKey: key)) ?? []).compactMap(\.rule)
        }
        override = rules(.override)
        content = rules(.content)
        room = rules(.room)
        sender = rules(.sender)
        underride = rules(.underride)
    }

    enum CodingKeys: String, CodingKey { case override, content, room, sender, underride }

    private struct Lenient: Decodable {
        var rule: PushRule?
        init(from decoder: any Decoder) throws { rule = try? PushRule(from: decoder) }
    }

    /// `GET /pushrules/`'s answer (`{"global": {...}}`) or the `m.push_rules` account data's content.
    public static func decode(globalOf json: [UInt8]) throws -> PushRuleSet {
        try JSONDecoder().decode(Global.self, from: Data(json)).global ?? PushRuleSet()
    }

    private struct Global: Decodable { var global: PushRuleSet? }
}
