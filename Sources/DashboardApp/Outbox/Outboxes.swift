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

    /// Every sender, primary first.
    public var all: [OutboxSender] {
        AccountRole.allCases.compactMap { senders[$0] }
    }
}
