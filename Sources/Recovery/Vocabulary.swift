/// Every kind of recoverable error this product raises, by the `type` the API and the page know
/// it by (CONTRACT section 6). The page's own copy of these strings is `Public/js/vocabulary.js`;
/// a test holds both against `Public/openapi.json`.
///
/// A new kind is a compile error in every exhaustive switch until each place that must handle
/// it (the catalog's words, the attempter's options, the feed's facts) does.
public enum ProblemKind: String, Sendable, CaseIterable {
    case upstreamError = "/problems/upstream-error"
    case badResponse = "/problems/bad-response"
    case upstreamUnreachable = "/problems/upstream-unreachable"
    case noInternet = "/problems/no-internet"
    case outOfSpace = "/problems/out-of-space"
    case purchaseDeclined = "/problems/purchase-declined"
    case tokenRefused = "/problems/token-refused"
    case anotherPoller = "/problems/another-poller"
    case upstreamBehind = "/problems/upstream-behind"
    case storageFailure = "/problems/storage-failure"
    /// A message written here that the upstream refused for good (CONTRACT section 11).
    case sendFailed = "/problems/send-failed"
    /// Messages written by a user who no longer holds their account (another user signed in, the
    /// linked account was detached): kept, never sent as anyone else, until saved or deleted.
    case unsentLeftBehind = "/problems/unsent-left-behind"
}

/// Every option an error can offer, by the id the page posts back. Each id means one thing, and
/// its option is titled by what it does.
public enum OptionID: String, Sendable, CaseIterable {
    /// Tries what failed again (a purchase: the same purchase, under the same key).
    case tryAgain = "try-again"
    /// Hides the error for now and changes nothing else ("Not now": out of space stays paused and
    /// goes on in the status bar).
    case notNow = "not-now"
    /// Stops syncing, so nothing is left that could fail ("Stop syncing"; the status bar then
    /// offers Start syncing).
    case stopSyncing = "stop-syncing"
    /// Closes the error and does nothing ("Don't buy" on a declined purchase).
    case dismiss = "dismiss"
    /// Deletes the oldest stored messages to make room.
    case freeSpace = "free-space"
    /// Buys more storage from the upstream (it costs money: asked first, never retried by itself).
    case buySpace = "buy-space"
    /// Asks for the account's password and signs in with it.
    case signIn = "sign-in"
    /// Sets the stored messages aside and syncs again from the upstream.
    case resync = "resync"
    /// Deletes a message that was not sent ("Delete"), or the unsent messages left behind by an
    /// account that went ("Delete them").
    case discard = "discard"
    /// Saves the unsent messages an account left behind to a file on this computer, then takes
    /// them out of the outbox ("Save to a file").
    case export = "export"

    /// The id CONTRACT section 6 names for backing out of any error: an attempt with it runs the
    /// error's own backing-out option (the one whose role is `cancel`), whichever that is.
    public static let contractCancel = "cancel"
}

/// What an error knows beyond its words, by kind: the figures the page shows and the attempter
/// needs. Nothing here is a secret or user text.
public enum ProblemFacts: Sendable, Equatable {
    /// Nothing beyond the words.
    case none
    /// Out of space: the storage figures, and what Free space would remove.
    case space(SpaceShortfall)
    /// A purchase that did not go through: what it was for, under which key.
    case purchase(PurchaseAttempt)
    /// A message the upstream refused: which one, where.
    case send(UnsentMessage)
    /// Unsent messages left behind by an account that went: how many, and whose.
    case leftBehind(LeftBehindMessages)
}

/// The unsent messages of users who no longer hold their account, as one error tells of them.
public struct LeftBehindMessages: Sendable, Equatable {
    public var count: Int
    /// The users who wrote them.
    public var writers: [Int64]

    public init(count: Int, writers: [Int64]) {
        self.count = count
        self.writers = writers
    }

    /// One error for all of them, whoever wrote them.
    public static let causeKey = ProblemKind.unsentLeftBehind.rawValue
}

/// The message of a failed send (CONTRACT section 11), shown at the message in its chat.
public struct UnsentMessage: Sendable, Equatable {
    /// Its outbox entry.
    public var outboxId: Int64
    /// `primary` or `linked`.
    public var account: String
    public var chatId: Int64

    public init(outboxId: Int64, account: String, chatId: Int64) {
        self.outboxId = outboxId
        self.account = account
        self.chatId = chatId
    }

    /// The cause key of its error: one open error per unsent message.
    public var causeKey: String { Self.causeKey(of: outboxId) }

    /// The cause key of the error of the unsent message `outboxId`.
    public static func causeKey(of outboxId: Int64) -> String { "\(ProblemKind.sendFailed.rawValue)#\(outboxId)" }
}

/// The storage figures of an out-of-space error.
public struct SpaceShortfall: Sendable, Equatable {
    /// What Free space would remove to make room.
    public struct FreeSpaceOffer: Sendable, Equatable {
        public var messages: Int
        public var bytes: Int64

        public init(messages: Int, bytes: Int64) {
            self.messages = messages
            self.bytes = bytes
        }
    }

    public var usedBytes: Int64?
    /// Nil when the disk, not a quota, is what is full.
    public var quotaBytes: Int64?
    /// What the waiting messages need.
    public var neededBytes: Int64
    /// The disk itself is full (SQLITE_FULL), not the quota.
    public var diskFull: Bool
    /// What Free space would remove, when it can make room.
    public var freeSpace: FreeSpaceOffer?
    /// The key of a purchase whose answer never came: trying it again uses the same key.
    public var purchaseKey: String?

    public init(usedBytes: Int64?, quotaBytes: Int64?, neededBytes: Int64, diskFull: Bool, freeSpace: FreeSpaceOffer? = nil,
                purchaseKey: String? = nil) {
        self.usedBytes = usedBytes
        self.quotaBytes = quotaBytes
        self.neededBytes = neededBytes
        self.diskFull = diskFull
        self.freeSpace = freeSpace
        self.purchaseKey = purchaseKey
    }
}

/// A purchase made to store waiting messages.
public struct PurchaseAttempt: Sendable, Equatable {
    /// The `Idempotency-Key` it went under; trying again uses it again, so it is never charged twice.
    public var key: String
    /// What the waiting messages need.
    public var neededBytes: Int64

    public init(key: String, neededBytes: Int64) {
        self.key = key
        self.neededBytes = neededBytes
    }
}
