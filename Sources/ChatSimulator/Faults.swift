/// The failures the simulator can be told to inject (`POST /sim/faults`).
public enum FaultMode: String, Sendable, CaseIterable, Codable {
    case none
    /// New upstream connections are cut before any answer, held polls are cut.
    case offline
    /// Upstream calls answer 500.
    case error500
    /// Upstream answers are delayed.
    case slow
    /// Upstream answers carry broken JSON (truncated, or an HTML page).
    case malformed
    /// The connection is cut in the middle of the answer.
    case drop
    /// Purchases are declined with 402.
    case decline
    /// Calls that need a token answer 401, fresh tokens too (the engine's "token refused").
    case unauthorized
    /// `messages` answers 409, as when another poller with the same token took over.
    case conflict
    /// Sends (`POST /v1/messages`) are refused with 403, as in a chat the account may not write in.
    case refuseSend = "refuse-send"
}

/// The active fault and how often it strikes.
public struct FaultSettings: Sendable, Equatable {
    public var mode: FaultMode
    /// 0...1: the share of upstream calls the fault applies to.
    public var rate: Double
    /// For `slow`: how long an answer is delayed (nil: the configuration's `slowDelay`).
    public var delay: Duration?

    public init(mode: FaultMode = .none, rate: Double = 1, delay: Duration? = nil) {
        self.mode = mode
        self.rate = rate
        self.delay = delay
    }
}
