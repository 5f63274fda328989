import Synchronization

/// Cutting answers on purpose, for a server that plays a broken network (the chat simulator's
/// faults): a responder marks the connection its request came on, and the connection cuts the
/// next answer it writes there. The core's one hook for this; a server without it
/// (`HTTPServerConfiguration.wireFaults` nil) never cuts an answer.
public final class WireFaults: Sendable {
    public enum Cut: Sendable, Equatable {
        /// Close without writing anything, as a network that drops the connection would.
        case beforeAnswer
        /// Write only the first `bytes` bytes of the encoded answer, then close.
        case after(bytes: Int)
    }

    private let marks = Mutex<[UInt64: Cut]>([:])

    public init() {}

    /// Cuts the next answer written on connection `connectionID` (`RequestContext.connectionID`).
    public func cutNextAnswer(on connectionID: UInt64, _ cut: Cut) {
        marks.withLock { $0[connectionID] = cut }
    }

    /// Cuts the answer to this request before any of it is written; returns what stands in for it.
    public func dropConnection(of context: RequestContext) -> HTTPResponse {
        cutNextAnswer(on: context.connectionID, .beforeAnswer)
        return HTTPResponse(status: .internalServerError)
    }

    /// The cut waiting for the connection's next answer, if any.
    public func pendingCut(on connectionID: UInt64) -> Cut? {
        marks.withLock { $0[connectionID] }
    }

    func takeCut(on connectionID: UInt64) -> Cut? {
        marks.withLock { $0.removeValue(forKey: connectionID) }
    }

    func forget(_ connectionID: UInt64) {
        marks.withLock { _ = $0.removeValue(forKey: connectionID) }
    }
}
