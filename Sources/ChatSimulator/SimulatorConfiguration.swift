/// How the simulator starts.
public struct SimulatorConfiguration: Sendable {
    /// The quota the dashboard's built-in simulator starts with: small enough that Fill storage
    /// fills it with a few hundred messages, large enough for a long demo.
    public static let builtInQuotaBytes: Int64 = 5_000_000

    public var seed: UInt64
    public var primaryUserId: Int64
    /// Whether a linked account is attached at start.
    public var linkedAtStart: Bool
    public var storageQuotaBytes: Int64
    /// The most messages per account in one `messages` answer.
    public var maxBatch: Int
    /// How long the `slow` fault delays an answer.
    public var slowDelay: Duration
    /// Every fault mode strikes a poll at most this late; the hold of a poll is capped by it too, so
    /// a test can shorten waits.
    public var maxHold: Duration
    /// The built-in demo: a new world starts with a short history in its chats, messages published
    /// without a text say what people say, and `startDemo()` sends one now and then.
    public var demo: Bool

    public init(seed: UInt64 = 1, primaryUserId: Int64 = 1, linkedAtStart: Bool = true, storageQuotaBytes: Int64 = 50_000_000,
                maxBatch: Int = 1000, slowDelay: Duration = .seconds(2), maxHold: Duration = .seconds(60), demo: Bool = false) {
        self.seed = seed
        self.primaryUserId = primaryUserId
        self.linkedAtStart = linkedAtStart
        self.storageQuotaBytes = storageQuotaBytes
        self.maxBatch = maxBatch
        self.slowDelay = slowDelay
        self.maxHold = maxHold
        self.demo = demo
    }
}
