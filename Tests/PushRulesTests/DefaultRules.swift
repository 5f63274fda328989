import Foundation
import JSONText
@testable import PushRules

/// The spec's server-default rules (Predefined Rules, v1.17) for `@alice:example.org`, with the
/// legacy `.m.rule.contains_user_name` content rule Synapse still serves, in the order a
/// homeserver gives them.
func defaultRules(enablingMaster: Bool = false, extra: String = "") -> PushRuleSet {
    let user = "@alice:example.org"
    let json = """
    {"global": {
      "override": [
        {"rule_id": ".m.rule.master", "default": true, "enabled": \(enablingMaster), "conditions": [], "actions": []},
        {"rule_id": ".m.rule.suppress_notices", "default": true, "enabled": true,
         "conditions": [{"kind": "event_match", "key": "content.msgtype", "pattern": "m.notice"}], "actions": []},
        {"rule_id": ".m.rule.invite_for_me", "default": true, "enabled": true,
         "conditions": [{"key": "type", "kind": "event_match", "pattern": "m.room.member"},
                        {"key": "content.membership", "kind": "event_match", "pattern": "invite"},
                        {"key": "state_key", "kind": "event_match", "pattern": "\(user)"}],
         "actions": ["notify", {"set_tweak": "sound", "value": "default"}]},
        {"rule_id": ".m.rule.member_event", "default": true, "enabled": true,
         "conditions": [{"key": "type", "kind": "event_match", "pattern": "m.room.member"}], "actions": []},
        {"rule_id": ".m.rule.is_user_mention", "default": true, "enabled": true,
         "conditions": [{"kind": "event_property_contains", "key": "content.m\\\\.mentions.user_ids", "value": "\(user)"}],
         "actions": ["notify", {"set_tweak": "sound", "value": "default"}, {"set_tweak": "highlight"}]},
        {"rule_id": ".m.rule.is_room_mention", "default": true, "enabled": true,
         "conditions": [{"kind": "event_property_is", "key": "content.m\\\\.mentions.room", "value": true},
                        {"kind": "sender_notification_permission", "key": "room"}],
         "actions": ["notify", {"set_tweak": "highlight"}]},
        {"rule_id": ".m.rule.tombstone", "default": true, "enabled": true,
         "conditions": [{"kind": "event_match", "key": "type", "pattern": "m.room.tombstone"},
                        {"kind": "event_match", "key": "state_key", "pattern": ""}],
         "actions": ["notify", {"set_tweak": "highlight"}]},
        {"rule_id": ".m.rule.reaction", "default": true, "enabled": true,
         "conditions": [{"kind": "event_match", "key": "type", "pattern": "m.reaction"}], "actions": []},
        {"rule_id": ".m.rule.room.server_acl", "default": true, "enabled": true,
         "conditions": [{"kind": "event_match", "key": "type", "pattern": "m.room.server_acl"},
                        {"kind": "event_match", "key": "state_key", "pattern": ""}], "actions": []},
        {"rule_id": ".m.rule.suppress_edits", "default": true, "enabled": true,
         "conditions": [{"kind": "event_property_is", "key": "content.m\\\\.relates_to.rel_type", "value": "m.replace"}], "actions": []}
      ],
      "content": [
        {"rule_id": ".m.rule.contains_user_name", "default": true, "enabled": true, "pattern": "alice",
         "actions": ["notify", {"set_tweak": "sound", "value": "default"}, {"set_tweak": "highlight"}]}
      ],
      "room": [\(extra)],
      "sender": [],
      "underride": [
        {"rule_id": ".m.rule.call", "default": true, "enabled": true,
         "conditions": [{"key": "type", "kind": "event_match", "pattern": "m.call.invite"}],
         "actions": ["notify", {"set_tweak": "sound", "value": "ring"}]},
        {"rule_id": ".m.rule.encrypted_room_one_to_one", "default": true, "enabled": true,
         "conditions": [{"kind": "room_member_count", "is": "2"}, {"kind": "event_match", "key": "type", "pattern": "m.room.encrypted"}],
         "actions": ["notify", {"set_tweak": "sound", "value": "default"}]},
        {"rule_id": ".m.rule.room_one_to_one", "default": true, "enabled": true,
         "conditions": [{"kind": "room_member_count", "is": "2"}, {"kind": "event_match", "key": "type", "pattern": "m.room.message"}],
         "actions": ["notify", {"set_tweak": "sound", "value": "default"}]},
        {"rule_id": ".m.rule.message", "default": true, "enabled": true,
         "conditions": [{"kind": "event_match", "key": "type", "pattern": "m.room.message"}], "actions": ["notify"]},
        {"rule_id": ".m.rule.encrypted", "default": true, "enabled": true,
         "conditions": [{"kind": "event_match", "key": "type", "pattern": "m.room.encrypted"}], "actions": ["notify"]}
      ]
    }}
    """
    return try! PushRuleSet.decode(globalOf: Array(json.utf8))
}

/// An event from JSON text, flattened.
func event(_ json: String) -> FlattenedEvent {
    FlattenedEvent(try! JSONValue(parsing: Array(json.utf8)))
}

/// A message from `sender` with `content` (JSON object text).
func message(_ content: String, from sender: String = "@bob:example.org", type: String = "m.room.message") -> FlattenedEvent {
    event(#"{"type": "\#(type)", "sender": "\#(sender)", "room_id": "!r:example.org", "event_id": "$e", "content": \#(content)}"#)
}
