import Foundation
import PushRules
import Upstream

/// What this transport makes of Matrix's identities and rooms. Plain values, tested on their own.
enum MatrixIdentity {
    /// A stable number for a Matrix id (a user or a room), where the engine and the store keep
    /// numbers: 53 bits of FNV-1a, so the page's JavaScript reads it exactly. The Matrix id itself
    /// is what identifies messages (`eventId`); this number only names a stream or a chat, and
    /// two of a person's rooms colliding is a chance of about n² / 2⁵⁴.
    static func number(for id: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(hash & 0x001F_FFFF_FFFF_FFFF)
    }
}

/// The names of the rooms seen so far, as Element names them (the spec's room display name): a
/// room's name, else its canonical alias, else its members (the summary's heroes) by their display
/// names, else, for a direct chat (`m.direct`), the other person. Learnt from the state and
/// timeline of each sync; a restart learns them again from the first sync that mentions the room,
/// and the store keeps the last one given meanwhile.
struct RoomNames: Sendable {
    private var explicit: [String: String] = [:]
    private var aliases: [String: String] = [:]
    private var heroes: [String: [String]] = [:]
    /// Members beside the account, by the summary's counts (joined and invited, less one).
    private var others: [String: Int] = [:]
    /// The other person of each direct chat, from the account's `m.direct`.
    private var directPartners: [String: String] = [:]

    /// Takes in what a sync says of `roomID`: state events, timeline state events, the summary.
    mutating func learn(_ roomID: String, from room: SyncResponse.JoinedRoom) {
        for event in (room.state?.events ?? []) + (room.timeline?.events ?? []) where event.stateKey == "" {
            switch event.type {
            case "m.room.name": explicit[roomID] = event.content?.name.flatMap { $0.isEmpty ? nil : $0 }
            case "m.room.canonical_alias": aliases[roomID] = event.content?.alias
            default: break
            }
        }
        if let members = room.summary?.heroes, !members.isEmpty { heroes[roomID] = members }
        if let joined = room.summary?.joinedMemberCount {
            others[roomID] = max(0, joined + (room.summary?.invitedMemberCount ?? 0) - 1)
        }
    }

    /// Takes in the account's `m.direct` (user id to their direct rooms): the whole of it, as it is now.
    mutating func learnDirect(_ direct: [String: [String]]) {
        directPartners = [:]
        for (user, rooms) in direct.sorted(by: { $0.key < $1.key }) {
            for room in rooms where directPartners[room] == nil { directPartners[room] = user }
        }
    }

    /// The room's name as known now, the members named by `displayName` (as the room names them);
    /// `members` are the account's companions in it, named when the sync gave no heroes (the
    /// first five, as heroes are). nil when nothing was learnt yet (the store keeps the last).
    func name(of roomID: String, members companions: [String] = [], displayName: (String) -> String = RoomNames.displayName) -> String? {
        if let name = explicit[roomID] { return name }
        if let alias = aliases[roomID] { return alias }
        if let members = heroes[roomID] ?? (companions.isEmpty ? nil : Array(companions.prefix(5))) {
            let total = others[roomID] ?? max(members.count, companions.count)
            return Self.listed(members.map(displayName), others: max(0, total - members.count))
        }
        if let partner = directPartners[roomID] { return displayName(partner) }
        return nil
    }

    /// "Bob", "Bob and Carol", "Bob, Carol and Dan", "Bob, Carol and 3 others", as Element says them.
    static func listed(_ names: [String], others: Int) -> String {
        let all = others > 0 ? names + ["\(others) other\(others == 1 ? "" : "s")"] : names
        guard all.count > 1 else { return all.first ?? "" }
        return all.dropLast().joined(separator: ", ") + " and " + all[all.count - 1]
    }

    /// `@alice:example.org` reads as `alice`.
    static func displayName(_ userID: String) -> String {
        guard userID.hasPrefix("@"), let colon = userID.firstIndex(of: ":") else { return userID }
        return String(userID[userID.index(after: userID.startIndex)..<colon])
    }
}

/// What a sync says of each room's members and encryption, learnt in timeline order, so that each
/// message carries the sender's display name as it was when they wrote it (as Element shows it).
struct RoomMembers: Sendable {
    private var displayNames: [String: [String: String]] = [:]
    private var encrypted: Set<String> = []
    /// Who is joined, by room, for the push rules' `room_member_count` where the sync's summary
    /// gave no count.
    private var joined: [String: Set<String>] = [:]
    /// Who is invited, by room: with the joined, the people an unnamed room is named for.
    private var invited: [String: Set<String>] = [:]
    /// The homeserver's own count of joined members, from the sync's summary, when given.
    private var joinedCounts: [String: Int] = [:]
    private var powerLevels: [String: PowerLevels] = [:]

    /// Takes in one state event of `roomID` (a member's display name, the room's encryption).
    mutating func learn(_ event: RoomEvent, in roomID: String) {
        switch event.type {
        case "m.room.member":
            guard let user = event.stateKey, !user.isEmpty else { return }
            if event.content?.membership == "join" { joined[roomID, default: []].insert(user) } else { joined[roomID]?.remove(user) }
            if event.content?.membership == "invite" { invited[roomID, default: []].insert(user) } else { invited[roomID]?.remove(user) }
            let name = event.content?.displayname.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            if let name, !name.isEmpty, event.content?.membership != "leave" && event.content?.membership != "ban" {
                displayNames[roomID, default: [:]][user] = name
            } else {
                displayNames[roomID]?[user] = nil
            }
        case "m.room.encryption" where event.stateKey == "":
            encrypted.insert(roomID)
        case "m.room.power_levels" where event.stateKey == "":
            powerLevels[roomID] = event.powerLevels ?? PowerLevels()
        default:
            break
        }
    }

    /// The sender's display name in the room, else the localpart of their id.
    func name(of user: String, in roomID: String) -> String {
        displayNames[roomID]?[user] ?? RoomNames.displayName(user)
    }

    func isEncrypted(_ roomID: String) -> Bool { encrypted.contains(roomID) }

    /// The room's joined and invited members other than `user`, by id: whom an unnamed room is
    /// named for when the sync gave no heroes (Synapse gives a summary with lazy-loaded members only).
    func others(in roomID: String, besides user: String) -> [String] {
        joined[roomID, default: []].union(invited[roomID, default: []]).subtracting([user]).sorted()
    }

    /// Takes in the summary's count of joined members, when a sync gives one.
    mutating func learn(_ summary: SyncResponse.Summary?, of roomID: String) {
        if let count = summary?.joinedMemberCount { joinedCounts[roomID] = count }
    }

    /// The room as the account's push rules see it now, for `user` (the account).
    func pushContext(of roomID: String, for user: String) -> PushRoomContext {
        PushRoomContext(roomID: roomID, memberCount: joinedCounts[roomID] ?? joined[roomID]?.count ?? 0,
                        displayName: displayNames[roomID]?[user], powerLevels: powerLevels[roomID] ?? PowerLevels())
    }
}

extension UpstreamMessage {
    /// What the page shows for a message this process cannot decrypt.
    static let encryptedText = "Encrypted message: this dashboard cannot read it."

    /// The message kind of an `m.room.message`'s `msgtype`; one not known is a file, as CONTRACT
    /// section 10 says, shown by its body.
    static func kind(ofMessageType type: String?) -> Kind {
        switch type {
        case "m.text", nil: .text
        case "m.notice": .notice
        case "m.emote": .emote
        case "m.image": .image
        default: .file
        }
    }

    /// What an event of chat `roomID` is to the copy (CONTRACT section 10): an `m.room.message`
    /// with a text body is a message (a reply without its quoted fallback); an edit
    /// (`m.replace` with a text `m.new_content`) carries the new text for its target; a redaction,
    /// or a message that comes redacted, removes its target; a reaction
    /// (`m.annotation`) carries its key for its target. nil for anything else (state, an edit
    /// without new content, a reaction without a key or target, an event without an id).
    init?(_ event: RoomEvent, roomID: String, roomName: String?) {
        guard let eventID = event.eventId else { return nil }
        let sentAt = event.originServerTs.map { Timestamp.string(Date(timeIntervalSince1970: Double($0) / 1000)) }
            ?? Timestamp.string(Date(timeIntervalSince1970: 0))
        let chatID = MatrixIdentity.number(for: roomID)
        let sender = event.sender ?? ""
        switch event.type {
        case "m.room.redaction":
            guard let target = event.redacts ?? event.content?.redacts else { return nil }
            self.init(id: 0, chatId: chatID, sender: sender, text: "", sentAt: sentAt, eventId: eventID, chatName: roomName,
                      relation: .redacts(eventId: target), sendKey: event.transactionId)
        case "m.reaction" where event.isRedacted:
            // Taken back before this copy saw it: its id is kept, so it is never stored.
            self.init(id: 0, chatId: chatID, sender: sender, text: "", sentAt: sentAt, eventId: eventID, chatName: roomName,
                      relation: .redacts(eventId: eventID))
        case "m.reaction":
            // An annotation (spec 11.32) with a key; anything else is no reaction.
            guard let relation = event.content?.relatesTo, relation.relType == "m.annotation", let target = relation.eventId,
                  let key = relation.key, !key.isEmpty, key.utf8.count <= Self.maximumReactionKeyBytes else { return nil }
            self.init(id: 0, chatId: chatID, sender: sender, text: key, sentAt: sentAt, eventId: eventID, chatName: roomName,
                      relation: .annotates(eventId: target), sendKey: event.transactionId)
        case "m.room.message" where event.isRedacted:
            self.init(id: 0, chatId: chatID, sender: sender, text: "", sentAt: sentAt, eventId: eventID, chatName: roomName,
                      relation: .redacts(eventId: eventID))
        case "m.room.encrypted":
            self.init(id: 0, chatId: chatID, sender: sender, text: Self.encryptedText, sentAt: sentAt, eventId: eventID, chatName: roomName)
            kind = .encrypted
        case "m.room.message":
            let relation = event.content?.relatesTo
            if relation?.relType == "m.replace" {
                guard let target = relation?.eventId, let newBody = event.content?.newBody else { return nil }
                self.init(id: 0, chatId: chatID, sender: sender, text: newBody, sentAt: sentAt, eventId: eventID, chatName: roomName,
                          relation: .replaces(eventId: target))
                return
            }
            guard let body = event.content?.body else { return nil }
            // A thread's reply names its first message (spec 11.37); its `m.in_reply_to` is a
            // fallback for clients without threads unless the person replied to one message.
            // A thread under itself, or without a first message, is a message of the timeline.
            let inThread = relation?.relType == "m.thread" ? relation?.eventId.flatMap { $0.isEmpty || $0 == eventID ? nil : $0 } : nil
            let reply = inThread != nil && relation?.isFallingBack == true ? nil : relation?.inReplyTo
            let text = reply == nil ? body : ReplyFallback.removed(from: body)
            self.init(id: 0, chatId: chatID, sender: sender, text: text, sentAt: sentAt, eventId: eventID, chatName: roomName,
                      sendKey: event.transactionId)
            replyTo = reply
            threadRoot = inThread
            let kind = Self.kind(ofMessageType: event.content?.msgtype)
            if kind != .text { self.kind = kind }
            if kind == .image || kind == .file, let content = event.content, content.url != nil || content.hasEncryptedFile {
                // The name is `filename` when given (the body is then a caption), else the body.
                media = Media(name: content.filename ?? body, mimetype: content.info?.mimetype, size: content.info?.size,
                              source: content.url.flatMap(MediaReference.init(mxc:))?.path)
            }
        default:
            return nil
        }
    }
}

/// A reply's body starts with the replied-to message quoted (`> <@sender> text` lines, then an
/// empty line) for clients that cannot show replies; the copy keeps the reply's own words only.
enum ReplyFallback {
    static func removed(from body: String) -> String {
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first?.hasPrefix(">") == true else { return body }
        var index = 0
        while index < lines.count, lines[index].hasPrefix(">") { index += 1 }
        if index < lines.count, lines[index].isEmpty { index += 1 }
        return lines[index...].joined(separator: "\n")
    }
}

extension NotificationCounts {
    /// A room's counts from a sync with `unread_thread_notifications`: the main timeline's
    /// (`main`) and each thread's, the chat's figure their sum.
    init(_ main: SyncResponse.UnreadNotifications, threads: [String: SyncResponse.UnreadNotifications]) {
        let perThread = threads.compactMapValues { thread -> NotificationCounts? in
            let counts = NotificationCounts(notifications: Int64(thread.notificationCount ?? 0), highlights: Int64(thread.highlightCount ?? 0))
            return counts.notifications == 0 && counts.highlights == 0 ? nil : counts
        }
        self.init(notifications: Int64(main.notificationCount ?? 0) + perThread.values.reduce(0) { $0 + $1.notifications },
                  highlights: Int64(main.highlightCount ?? 0) + perThread.values.reduce(0) { $0 + $1.highlights },
                  threads: perThread)
    }
}
