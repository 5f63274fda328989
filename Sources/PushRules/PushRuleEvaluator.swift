import Foundation
import JSONText

/// A room's `m.room.power_levels` as far as notifications need it.
public struct PowerLevels: Sendable, Equatable {
    public var users: [String: Int]
    public var usersDefault: Int
    /// The level a sender needs to notify with each kind (`room`: `@room`), 50 unless set.
    public var notifications: [String: Int]

    public init(users: [String: Int] = [:], usersDefault: Int = 0, notifications: [String: Int] = [:]) {
        self.users = users
        self.usersDefault = usersDefault
        self.notifications = notifications
    }

    /// The levels in an `m.room.power_levels` event's content; levels of the wrong type (a hostile
    /// client's event) read as absent.
    public init(json content: JSONValue) {
        users = content["users"]?.object?.compactMapValues(\.int) ?? [:]
        usersDefault = content["users_default"]?.int ?? 0
        notifications = content["notifications"]?.object?.compactMapValues(\.int) ?? [:]
    }

    public func level(of user: String) -> Int { users[user] ?? usersDefault }
    public func required(toNotify key: String) -> Int { notifications[key] ?? 50 }
}

/// What the evaluator needs of the room an event is in, at the time of the event.
public struct PushRoomContext: Sendable, Equatable {
    public var roomID: String
    public var memberCount: Int
    /// The account's display name in the room, if it has one.
    public var displayName: String?
    public var powerLevels: PowerLevels

    public init(roomID: String, memberCount: Int, displayName: String? = nil, powerLevels: PowerLevels = PowerLevels()) {
        self.roomID = roomID
        self.memberCount = memberCount
        self.displayName = displayName
        self.powerLevels = powerLevels
    }
}

/// What the account's rules say of one event: the actions of the first rule that matched
/// (none: nothing notifies), and which rule it was.
public struct PushDecision: Sendable, Equatable {
    public var actions: PushActions
    public var ruleID: String?

    public var notifies: Bool { actions.notify }
    /// A mention: shown as one in the chat list and the row.
    public var highlights: Bool { actions.notify && actions.highlight }

    public static let silent = PushDecision(actions: PushActions(), ruleID: nil)
}

/// The account's push rules as a plain value: each event in, the actions of the first matching
/// rule out (spec: Push Rules), in the kinds' order (override, content, room, sender, underride)
/// and, within a kind, the order the homeserver gives. No clock, no network: what the room is
/// comes in with each event.
public struct PushRuleEvaluator: Sendable {
    public let rules: PushRuleSet
    /// The account's Matrix id: its own events never notify it.
    public let userID: String

    /// The legacy mention rules give way to `m.mentions` when an event carries it (spec v1.7;
    /// Synapse does the same), so a message that says whom it mentions is judged by that alone.
    static let legacyMentionRules: Set<String> = [".m.rule.contains_display_name", ".m.rule.contains_user_name", ".m.rule.roomnotif"]

    public init(rules: PushRuleSet, userID: String) {
        self.rules = rules
        self.userID = userID
    }

    /// What the rules say of `event` (flattened) in `room`.
    public func evaluate(_ event: FlattenedEvent, in room: PushRoomContext) -> PushDecision {
        if case .string(let sender)? = event[Self.sender], sender == userID { return .silent }
        let mentions = event.has(Self.mentions)
        // Folded once: every keyword and mention rule reads the body.
        let body: FoldedText? = if case .string(let text)? = event[Self.body] { FoldedText(text) } else { nil }
        func usable(_ rule: PushRule) -> Bool {
            rule.enabled && !(mentions && Self.legacyMentionRules.contains(rule.ruleID))
        }
        for rule in rules.override where usable(rule) && conditionsHold(rule.conditions, event, body, room) {
            return PushDecision(actions: rule.actions, ruleID: rule.ruleID)
        }
        if let body {
            for rule in rules.content where usable(rule) && rule.pattern?.matchesWords(in: body) == true {
                return PushDecision(actions: rule.actions, ruleID: rule.ruleID)
            }
        }
        for rule in rules.room where usable(rule) && rule.ruleID == room.roomID {
            return PushDecision(actions: rule.actions, ruleID: rule.ruleID)
        }
        if case .string(let sender)? = event[Self.sender] {
            for rule in rules.sender where usable(rule) && rule.ruleID == sender {
                return PushDecision(actions: rule.actions, ruleID: rule.ruleID)
            }
        }
        for rule in rules.underride where usable(rule) && conditionsHold(rule.conditions, event, body, room) {
            return PushDecision(actions: rule.actions, ruleID: rule.ruleID)
        }
        return .silent
    }

    private static let sender = EventPath("sender")
    private static let body = EventPath("content.body")
    private static let mentions = EventPath("content.m\\.mentions")

    private func conditionsHold(_ conditions: [PushCondition], _ event: FlattenedEvent, _ body: FoldedText?, _ room: PushRoomContext) -> Bool {
        conditions.allSatisfy { holds($0, event, body, room) }
    }

    private func holds(_ condition: PushCondition, _ event: FlattenedEvent, _ body: FoldedText?, _ room: PushRoomContext) -> Bool {
        switch condition {
        case let .eventMatch(key, pattern):
            if key == Self.body { return body.map(pattern.matchesWords(in:)) ?? false }
            guard case .string(let value)? = event[key] else { return false }
            return pattern.matchesWhole(value)
        case let .eventPropertyIs(key, value):
            return event[key]?.canonicalScalar == value
        case let .eventPropertyContains(key, value):
            guard case .array(let items)? = event[key] else { return false }
            return items.contains { $0.canonicalScalar == value }
        case .containsDisplayName:
            guard let name = room.displayName, !name.isEmpty, let body else { return false }
            return GlobPattern(literal: name).matchesWords(in: body)
        case .roomMemberCount(let count):
            return count.holds(for: room.memberCount)
        case .senderNotificationPermission(let key):
            guard case .string(let sender)? = event[Self.sender] else { return false }
            return room.powerLevels.level(of: sender) >= room.powerLevels.required(toNotify: key)
        case .unreadable:
            return false
        }
    }
}
