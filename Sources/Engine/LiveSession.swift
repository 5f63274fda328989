import Store
import Synchronization

/// The engine's session as work riding on it reads it (the outbox's senders, the history
/// fetcher): the token while syncing is live, and who each account is.
///
/// The engine writes it whenever the token, the connection state or the accounts change; a
/// reader takes it under a lock, on its own thread. A sender asks before every message, and an
/// `await` on the engine for it would cost a hop onto the engine's executor and back, each time.
public final class LiveSession: Sendable {
    private struct State {
        var token: String?
        var accounts = AccountIDs(primaryUserId: nil, linkedUserId: nil)
    }

    private let state = Mutex(State())

    public init() {}

    /// The session's token while syncing is live, else nil.
    public var token: String? { state.withLock { $0.token } }

    /// Who `account` sends as while syncing is live, else nil (the sender waits then: offline,
    /// backing off and stopped are all "not yet").
    public func sending(as account: AccountRole) -> SendSession? {
        state.withLock { state in
            guard let token = state.token else { return nil }
            let userId = switch account {
            case .primary: state.accounts.primaryUserId
            case .linked: state.accounts.linkedUserId
            }
            return userId.map { SendSession(token: token, userId: $0) }
        }
    }

    /// The engine's side: `token` is the live token (nil while not live).
    func update(token: String?, accounts: AccountIDs) {
        state.withLock { $0 = State(token: token, accounts: accounts) }
    }
}
