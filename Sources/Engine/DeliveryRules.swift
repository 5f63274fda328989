import Store

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
    /// `newestStored` is nil for a stream never synced. `reconnecting`: after an interruption
    /// (a new cycle), not a token renewed mid-cycle.
    mutating func serverNewest(_ serverNewest: Int64, for account: AccountRole, newestStored: Int64?,
                               reconnecting: Bool) -> Position {
        guard let newestStored else {
            silentThrough[account] = max(silentThrough[account] ?? 0, serverNewest)
            return .history(serverNewest)
        }
        if reconnecting { caughtUpThrough[account] = serverNewest > newestStored ? serverNewest : nil }
        return .missed(max(0, serverNewest - newestStored))
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
