import Engine
import Store

/// The senders of an upstream one can write to, one per account (CONTRACT section 11); empty for
/// one that takes no messages.
public struct Outboxes: Sendable {
    private let senders: [AccountRole: OutboxSender]

    public init(_ senders: [AccountRole: OutboxSender] = [:]) {
        self.senders = senders
    }

    /// Whether the person can write at all.
    public var canSend: Bool { !senders.isEmpty }

    public func sender(for account: AccountRole) -> OutboxSender? {
        senders[account]
    }

    /// `entries` as they stand now: those a sender has on their way (sent and not stored yet
    /// included) are `sending`; the store, which they were read from, knows nothing of that.
    public func asTheyStand(_ entries: [OutboxEntry]) async -> [OutboxEntry] {
        var beingSent: Set<Int64> = []
        for sender in all {
            beingSent.formUnion(await sender.entriesBeingSent)
        }
        guard !beingSent.isEmpty else { return entries }
        return entries.map { entry in
            var entry = entry
            if beingSent.contains(entry.id) { entry.state = .sending }
            return entry
        }
    }

    /// Every sender, primary first.
    public var all: [OutboxSender] {
        AccountRole.allCases.compactMap { senders[$0] }
    }
}
