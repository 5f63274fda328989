import Store
import Upstream

/// The decisions of fetching older history (CONTRACT section 10), as a plain value: what the
/// fetcher learnt goes in, what it does next comes out. No clock, task or socket, so every rule is
/// tested on its own; `HistoryFetcher` performs the actions.
///
/// - One page at a time, the most recently active chat first, a chat to its beginning before the
///   next: the chat a person opens first is whole first.
/// - Only while syncing is live: a stop, an outage or a pause for space stops it too (the engine
///   has the session; the fetcher never signs in by itself).
/// - A 429 waits what it asks (at least `minimumRateLimitWait`); other failures back off with
///   full jitter and do not count against the connection (live sync reports those).
/// - A page that does not fit into the storage pauses history until storage changes; live
///   messages go first.
/// - While messages are flowing live (a conversation), it steps aside: the next page waits until
///   `quietAfterLive` has passed without one. A homeserver serves a live message more slowly
///   while it is reading history for anyone (Synapse on SQLite does its database work on one
///   connection), so the person's conversation goes first.
/// - After the sync that filled the copy (a first start: every chat's last messages at once), the
///   first page waits `settleAfterFill`: the page is showing those chats then, and history read
///   at the same moment takes the cores the page draws with.
/// - A live message that comes while a page is being read still waits for that page, so pages are
///   kept to about `targetPageDuration` of the homeserver's time: the first is small, and each next
///   one is sized from how long the last took (at most twice as big, within `pageSizes`). Big
///   pages are cheaper per message, so a fast homeserver still gets them.
/// - A homeserver that reads even the largest page in less than `targetPageDuration` has time to
///   spare: the next page is asked for while the last is stored (`readsAhead`). One at its target
///   (Synapse on SQLite) is never asked ahead, or a live message would wait behind a page nearly
///   always.
public struct HistoryPolicy: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Fetch the page of at most `limit` events before this position.
        case fetch(HistoryStart, limit: Int)
        /// Wait this long, then ask again (`reason` for the log and the page).
        case wait(Duration, HistoryPause)
        /// The account may see no further back in this chat (a room it was banned from): its
        /// history ends where it is.
        case finish(HistoryStart)
    }

    public var backoff: Backoff
    /// How often to look again while syncing is not live or nothing is pending (new rooms come
    /// with syncs).
    public var idleWait: Duration
    public var minimumRateLimitWait: Duration
    public var fullStorageWait: Duration
    public var quietAfterLive: Duration
    public var settleAfterFill: Duration
    /// How long a page should keep the homeserver busy.
    public var targetPageDuration: Duration
    /// The smallest and largest page asked for.
    public var pageSizes: ClosedRange<Int>
    /// Failures in a row since the last page read.
    public private(set) var failures = 0
    /// Events to ask for in the next page.
    public private(set) var pageSize: Int
    /// Whether the next page is to be asked for while the last is stored.
    public private(set) var readsAhead = false

    public init(backoff: Backoff = Backoff(base: .seconds(1), cap: .seconds(60)), idleWait: Duration = .seconds(2),
                minimumRateLimitWait: Duration = .milliseconds(500), fullStorageWait: Duration = .seconds(30),
                quietAfterLive: Duration = .seconds(5), settleAfterFill: Duration = .seconds(2),
                targetPageDuration: Duration = .milliseconds(150), pageSizes: ClosedRange<Int> = 25...250) {
        self.backoff = backoff
        self.idleWait = idleWait
        self.minimumRateLimitWait = minimumRateLimitWait
        self.fullStorageWait = fullStorageWait
        self.quietAfterLive = quietAfterLive
        self.settleAfterFill = settleAfterFill
        self.targetPageDuration = targetPageDuration
        self.pageSizes = pageSizes
        self.pageSize = pageSizes.lowerBound
    }

    /// What to do when ready for the next page: `live` is whether syncing is live now, `pending`
    /// the chats still to fetch, most recently active first, `liveMessagesCame` whether messages
    /// arrived live since the last look, `copyFilled` whether a sync filled the copy since then.
    public func next(live: Bool, pending: [HistoryStart], liveMessagesCame: Bool = false, copyFilled: Bool = false) -> Action {
        guard live else { return .wait(idleWait, .notSyncing) }
        guard let first = pending.first else { return .wait(idleWait, .nothingPending) }
        if liveMessagesCame { return .wait(quietAfterLive, .liveMessages) }
        if copyFilled { return .wait(settleAfterFill, .pageFilling) }
        return .fetch(first, limit: pageSize)
    }

    /// A page of `events` came; reading it took the homeserver `took`. Failures are over, and the
    /// next page is sized so that it takes about `targetPageDuration`.
    public mutating func read(events: Int, took: Duration) {
        failures = 0
        // A chat's last page is short whatever was asked: it says little about the cost of a page.
        guard events * 2 >= pageSize else { return }
        readsAhead = pageSize == pageSizes.upperBound && took < targetPageDuration
        let scale = took > .zero ? min(targetPageDuration / took, 2) : 2
        pageSize = min(max(Int((Double(pageSize) * scale).rounded()), pageSizes.lowerBound), pageSizes.upperBound)
    }

    /// The page before `start` could not be fetched; `jitter` is a draw in 0...1 for the backoff.
    public mutating func failed(_ error: UpstreamError, at start: HistoryStart, jitter: Double) -> Action {
        failures += 1
        switch error {
        case .forbidden:
            failures = 0
            return .finish(start)
        case .rateLimited(let asked):
            return .wait(max(asked ?? backoff.ceiling(afterFailure: failures), minimumRateLimitWait), .rateLimited)
        case .unauthorized:
            // The engine's own sync hears the same and signs in again (or asks the person).
            return .wait(idleWait, .notSyncing)
        case .cancelled:
            return .wait(.zero, .failed)
        default:
            let ceiling = backoff.ceiling(afterFailure: failures)
            return .wait(ceiling * min(max(jitter, 0), 1), .failed)
        }
    }

    /// The page does not fit into the storage.
    public func storageFull() -> Action {
        .wait(fullStorageWait, .storageFull)
    }
}

/// Why history fetching waits.
public enum HistoryPause: String, Sendable, Equatable {
    case notSyncing
    case nothingPending
    case rateLimited
    case failed
    case storageFull
    /// Messages are flowing live: the conversation goes first.
    case liveMessages
    /// A sync has just filled the copy: the page shows those chats first.
    case pageFilling
}
