import Store

/// Something the engine tells the rest of the process: the feed turns these into page events.
public enum EngineEvent: Sendable {
    case connection(ConnectionStatus)
    /// New messages of one account, whether and how the person should hear of them, the storage in
    /// use once they were stored and the chats they changed, as those stand now (what storing
    /// them returned: nobody asks the store again).
    case messages(account: AccountRole, messages: [StoredMessage], delivery: MessageDelivery, usage: StorageUsage, chats: [ChatSummary])
    /// Stored messages of one account an edit changed, and those a redaction removed.
    case messagesChanged(account: AccountRole, changed: [StoredMessage], removed: [RemovedMessage])
    /// Chats of the account it left or came back to (their membership changed), as they stand now.
    case chatsChanged(account: AccountRole, chats: [ChatSummary])
    /// Chats of the account read in another client: their unread counts are 0 now.
    case chatsRead(account: AccountRole, chatIds: [Int64])
    /// How far fetching the account's older history is; `grew` is the chat a page was just stored
    /// for (nil: only the progress changed).
    case history(account: AccountRole, progress: HistoryProgress, grew: Int64?)
    /// A linked account is there; `firstSync` when it came with the very first session (nothing to announce).
    case accountLinked(userId: Int64, firstSync: Bool)
    case accountUnlinked(userId: Int64)
    /// The upstream signed in another primary user than the store held: the previous user's
    /// messages (both accounts) were removed so the two are never mixed.
    case primaryAccountChanged(from: Int64, to: Int64, removedMessages: Int)
    case storage(StorageUsage)
    /// The account's stored messages were set aside (kept, not shown) and it syncs again from the
    /// upstream's beginning: what was shown of it goes, and what comes now is new, whatever its ids.
    case accountSetAside(account: AccountRole, messages: Int, usage: StorageUsage)
    /// An outbox entry's state changed (written, being sent, back in the line, failed). The event of
    /// an entry just written carries the request key it was written under, so the page that wrote
    /// it knows the entry as its own local echo.
    case outbox(OutboxEntry, requestKey: String? = nil)
    /// An entry left the outbox: sent (its message came with `outboxId`), or deleted unsent.
    case outboxLeft(account: AccountRole, outboxId: Int64, chatId: Int64, sent: Bool)
    /// The account changed: these entries (all there are now, perhaps none) were written by a user
    /// who no longer holds their account. They are kept and never sent, until saved or deleted.
    case outboxLeftBehind([OutboxEntry])
    /// A condition the user should know about (the recovery layer decides how to show it).
    case problemRaised(EngineProblem)
    /// The condition of this kind is over.
    case problemCleared(EngineProblem.Kind)
}

/// How new messages reach the person (CONTRACT section 4.6).
public enum MessageDelivery: Sendable, Equatable {
    /// History: an account's very first sync, or a newly attached account's messages. No notification.
    case silent
    /// Arrived while the dashboard was live: each burst notifies.
    case live
    /// Arrived while syncing was interrupted (an outage, a hidden stretch, a restart): one summary.
    case caughtUp

    public var notifies: Bool { self != .silent }
}

/// A failure the engine could not hide.
public struct EngineProblem: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The upstream answered 5xx.
        case upstreamError
        /// The upstream's answer was not the expected JSON.
        case badResponse
        /// The upstream could not be reached (refused, reset, timed out).
        case unreachable
        /// The machine has no network.
        case noInternet
        /// A batch does not fit into the quota or onto the disk.
        case outOfSpace
        /// The upstream refused a fresh token too (401 twice in a row).
        case tokenRefused
        /// Another poller with the same token took over (409).
        case anotherPoller
        /// The local store failed for another reason.
        case storageFailure
        /// The upstream's newest message is older than the newest stored one: it was reset or
        /// restored from a backup, or another account answers at the same address.
        case upstreamBehind

        /// Problems of the connection to the upstream: only the latest one is open at a time.
        public var isConnectionProblem: Bool {
            switch self {
            case .upstreamError, .badResponse, .unreachable, .tokenRefused, .anotherPoller: true
            case .noInternet, .outOfSpace, .storageFailure, .upstreamBehind: false
            }
        }
    }

    public var kind: Kind
    /// The technical cause, for the debug section only.
    public var debug: String
    /// For `outOfSpace`: the bytes in use, the quota and what the batch needed.
    public var usage: StorageUsage?
    public var neededBytes: Int64?
    /// For `outOfSpace`: the disk is full, not the quota.
    public var diskFull: Bool

    public init(kind: Kind, debug: String, usage: StorageUsage? = nil, neededBytes: Int64? = nil, diskFull: Bool = false) {
        self.kind = kind
        self.debug = debug
        self.usage = usage
        self.neededBytes = neededBytes
        self.diskFull = diskFull
    }
}
