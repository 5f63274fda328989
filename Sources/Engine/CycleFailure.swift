import Store
import Upstream

/// Why a cycle step did not go on.
enum CycleFailure: Error {
    /// The cycle is no longer current.
    case stale
    /// Storage is full: stop until `resume()`.
    case paused(EngineProblem)
    /// Wait (backoff, at least `atLeast`) and start again from the token.
    case retry(EngineProblem, atLeast: Duration)
}

/// What an upstream call brought: its answer, or word that the token expired (a 401 the
/// policy renews silently): the caller starts a new session and makes the call again.
enum CallOutcome<Value: Sendable> {
    case answered(Value)
    case tokenExpired
}

extension CycleFailure {
    /// What a store failure means for the cycle: out of space pauses it (until Free space or a
    /// purchase), anything else is tried again after a backoff.
    init(_ error: StoreError) {
        switch error {
        case let .outOfSpace(used, quota, needed, diskFull):
            self = .paused(EngineProblem(kind: .outOfSpace,
                                         debug: diskFull ? "SQLITE_FULL: the disk is full" : "quota of \(quota ?? 0) bytes reached",
                                         usage: StorageUsage(usedBytes: used, quotaBytes: quota), neededBytes: needed,
                                         diskFull: diskFull))
        default:
            self = .retry(EngineProblem(kind: .storageFailure, debug: "\(error)"), atLeast: .zero)
        }
    }
}
