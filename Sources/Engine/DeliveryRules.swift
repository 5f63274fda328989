import Store
import Upstream

/// How each stored message reaches the page (the seeds' first load): history of a first sync or
/// of a newly attached account arrives silently, what arrived while syncing was interrupted as
/// one summary, everything else live. Decided per stream from the server's newest id, told at
/// each cursor sync, against what the store already holds. A plain value, tested on its own.
struct DeliveryRules: Sendable, Equatable {
    /// Per stream: ids up to this are history: stored silently.
    private(set) var silentThrough: [AccountRole: Int64] = [:]
    /// Per stream: ids up to this arrived while syncing was interrupted: announced as one summary.
    private(set) var caughtUpThrough: [AccountRole: Int64] = [:]

    enum Position: Equatable {
        /// Never synced: this many messages are history.
        case history(Int64)
        /// Synced before: this many arrived meanwhile.
        case missed(Int64)
    }

    /// The cursor sync said the server's newest id of `account`'s stream is `serverNewest`;
    /// `newestStored` is nil for a stream with nothing stored since it began. `reconnecting`: after an interruption
    /// (a new cycle), not a token renewed mid-cycle.
    mutating func serverNewest(_ serverNewest: Int64, for account: AccountRole, newestStored: Int64?,
                               reconnecting: Bool) -> Position {
        // A stream noted before in this run but with nothing stored yet (an empty account, or its
        // history still on the way) is known up to its history: what came after is no history.
        guard let known = newestStored ?? silentThrough[account] else {
            silentThrough[account] = serverNewest
            return .history(serverNewest)
        }
        if reconnecting { caughtUpThrough[account] = serverNewest > known ? serverNewest : nil }
        return .missed(max(0, serverNewest - known))
    }

    /// Where a stream stands in the local copy when the cursor sync answers.
    struct StoredPosition: Equatable {
        /// Whether the stream has a cursor (was synced before).
        var synced: Bool
        /// The newest id stored since the stream began; nil before its first message.
        var newestID: Int64?
    }

    enum CursorSyncOutcome: Equatable {
        /// The upstream's newest id is below what the local copy holds for these accounts: it went
        /// back, and waiting for ids it may never reach (or reach with other messages) would be
        /// silent loss. `debug` says by how much.
        case behind([AccountRole], debug: String)
        /// The streams' positions are noted; lines for the log.
        case noted([String])
    }

    /// The cursor sync (`info`) against what the store holds (`stored`): either the upstream is
    /// behind, or each stream's history and missed messages are noted (`serverNewest`).
    mutating func cursorSync(_ info: LastMessageInfo, stored: [AccountRole: StoredPosition], reconnecting: Bool) -> CursorSyncOutcome {
        let servers: [(AccountRole, Int64?)] = [(.primary, info.primaryLastId), (.linked, info.linkedLastId)]
        let behind = servers.compactMap { role, lastID -> (AccountRole, String)? in
            guard let lastID, let newest = stored[role]?.newestID, lastID < newest else { return nil }
            return (role, "\(role): the server's newest id is \(lastID), the newest stored \(newest)")
        }
        if !behind.isEmpty {
            return .behind(behind.map(\.0), debug: behind.map(\.1).joined(separator: "; "))
        }
        var notes: [String] = []
        for (role, lastID) in servers {
            guard let lastID else { continue }
            let position = stored[role] ?? StoredPosition(synced: false, newestID: nil)
            switch serverNewest(lastID, for: role, newestStored: position.synced ? (position.newestID ?? 0) : nil, reconnecting: reconnecting) {
            case .history(let count) where count > 0:
                notes.append("first sync of the \(role) account: \(count) message(s) of history, delivered without notifications")
            case .missed(let count) where count > 0:
                notes.append("\(count) \(role) message(s) arrived while syncing was interrupted")
            default:
                break
            }
        }
        return .noted(notes)
    }

    /// Newly stored messages of one stream, grouped by how they reach the page, in the order the
    /// page hears of them (history, the summary, live), empty groups left out. An answer whose
    /// upstream said what it is (`declared`) decides for all its messages. A message written here
    /// (it left the outbox) is never news to the person who wrote it, whichever way it came: the
    /// send's answer or its echo through sync, which a homeserver may deliver first.
    func grouped(_ fresh: [StoredMessage], of account: AccountRole,
                 declared: AnswerDelivery? = nil) -> [(delivery: MessageDelivery, messages: [StoredMessage])] {
        let rule = thresholds(for: account)
        var groups: [MessageDelivery: [StoredMessage]] = [:]
        for message in fresh {
            let delivery: MessageDelivery
            if message.outboxId != nil {
                delivery = .silent
            } else {
                switch declared {
                case .history: delivery = .silent
                case .missed: delivery = .caughtUp
                case .live: delivery = .live
                case nil: delivery = rule.delivery(of: message.id)
                }
            }
            groups[delivery, default: []].append(message)
        }
        return [MessageDelivery.silent, .caughtUp, .live].compactMap { delivery in groups[delivery].map { (delivery, $0) } }
    }

    /// Which of a stream's new messages raise their chat's unread count: those that reach the
    /// page live; history and a catch-up after an outage are not news.
    func unreadCounting(for account: AccountRole, declared: AnswerDelivery? = nil) -> UnreadCounting {
        if let declared { return declared == .live ? .all : .none }
        let rule = thresholds(for: account)
        return .above(max(rule.silentThrough, rule.caughtUpThrough))
    }

    /// The rule for one stream, looked up once for a whole batch.
    func thresholds(for account: AccountRole) -> Thresholds {
        Thresholds(silentThrough: silentThrough[account] ?? 0, caughtUpThrough: caughtUpThrough[account] ?? 0)
    }

    struct Thresholds {
        let silentThrough: Int64
        let caughtUpThrough: Int64

        func delivery(of id: Int64) -> MessageDelivery {
            id <= silentThrough ? .silent : id <= caughtUpThrough ? .caughtUp : .live
        }
    }

    /// The account's stream starts again from nothing (detached, set aside).
    mutating func forget(_ account: AccountRole) {
        silentThrough[account] = nil
        caughtUpThrough[account] = nil
    }
}
