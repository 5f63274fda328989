import Foundation
import Logging
import Store
import Upstream

/// What the history fetcher needs of the local copy (`MessageStore` is it).
public protocol HistoryStore: Sendable {
    func pendingHistory(of account: AccountRole) async throws(StoreError) -> [HistoryStart]
    func historyProgress(of account: AccountRole) async throws(StoreError) -> HistoryProgress?
    func applyOlder(_ batch: [UpstreamMessage], to account: AccountRole, chat chatID: Int64, receivedAt: String,
                    next: String?) async throws(StoreError) -> AppliedBatch
}

extension MessageStore: HistoryStore {}

/// Fetches each chat's older history into the copy in the background (CONTRACT section 10), beside
/// the engine's sync and never in its way: its own requests, one page at a time (from a fast
/// homeserver, the next asked for while the last is stored), while syncing is live, with the
/// engine's session. What to do next is `HistoryPolicy`'s; this actor performs it.
///
/// Where each chat's history starts is kept by the store with the sync batch that first saw the
/// chat, and every page moves it in the page's own transaction, so a restart (a kill included)
/// resumes at the page after the last one stored, and nothing is stored twice.
public actor HistoryFetcher {
    private let store: any HistoryStore
    private let upstream: any OlderHistory
    private let account: AccountRole
    /// The engine's token while syncing is live, else nil.
    private let liveSession: @Sendable () -> String?
    private let environment: EngineEnvironment
    private let emit: @Sendable (EngineEvent) -> Void
    private var policy: HistoryPolicy
    private var random: any RandomNumberGenerator & Sendable
    private var announced: HistoryProgress?
    /// The wait in progress, which `wake()` ends early, and what it waits for.
    private var sleeper: Task<Void, Never>?
    private var waitingFor: HistoryPause?
    /// Messages arrived live since the last look.
    private var liveMessagesCame = false
    private var copyFilled = false
    private var skippedLogged = false
    /// The page after the one being stored, asked for meanwhile: the homeserver reads it while
    /// this process writes the last one (still one request at a time). Taken when the policy's
    /// next fetch is that page, else cancelled.
    private var ahead: (position: HistoryPosition, request: Task<Fetched, Never>)?
    private let log = Logger("history")

    /// A page as the homeserver answered, and how long it took to.
    private typealias Fetched = (page: Result<OlderHistoryPage, UpstreamError>, took: Duration)

    public init(store: any HistoryStore, upstream: any OlderHistory, account: AccountRole = .primary, policy: HistoryPolicy = HistoryPolicy(),
                environment: EngineEnvironment = EngineEnvironment(), liveSession: @escaping @Sendable () -> String?,
                emit: @escaping @Sendable (EngineEvent) -> Void) {
        self.store = store
        self.upstream = upstream
        self.account = account
        self.policy = policy
        self.environment = environment
        self.random = environment.random
        self.liveSession = liveSession
        self.emit = emit
    }

    /// How far it is, as last told (nil: this account has no history to fetch).
    public func progress() -> HistoryProgress? { announced }

    /// Something it waits for may have happened (syncing went live, a sync saw new chats): a wait
    /// for those ends now instead of at its next look. A wait a 429 or a backoff asked for is kept.
    public func wake() {
        guard let sleeper, waitingFor == .notSyncing || waitingFor == .nothingPending else { return }
        sleeper.cancel()
    }

    /// Messages arrived live: the next page waits until they have stopped for a while.
    public func liveMessagesArrived() {
        liveMessagesCame = true
    }

    /// A sync filled the copy (a first start's, told to nobody as news): the next page waits a
    /// moment, while the page shows those chats, instead of starting at once.
    public func copyWasFilled() {
        copyFilled = true
        wake()
    }

    /// Runs until the task is cancelled.
    public func run() async {
        defer { ahead?.request.cancel() }
        await announce()
        while !Task.isCancelled {
            let action = await nextAction()
            switch action {
            case .fetch(let start, let limit):
                if let next = await fetch(start, limit: limit) { await perform(next) }
            case .wait, .finish:
                await perform(action)
            }
        }
    }

    private func nextAction() async -> HistoryPolicy.Action {
        let token = liveSession()
        let pending: [HistoryStart]
        do {
            pending = token == nil ? [] : try await store.pendingHistory(of: account)
        } catch {
            log.warning("cannot read where history stands: \(error)")
            return policy.storageFull()
        }
        // Chats to fetch came (the first sync, a room joined): the page hears so before the first page.
        if !pending.isEmpty, announced?.complete ?? true { await announce() }
        let action = policy.next(live: token != nil, pending: pending, liveMessagesCame: liveMessagesCame, copyFilled: copyFilled)
        // A quiet period after live messages is a longer wait than the one after a fill: it covers both.
        if case .wait(_, .liveMessages) = action { (liveMessagesCame, copyFilled) = (false, false) }
        if case .wait(_, .pageFilling) = action { copyFilled = false }
        return action
    }

    /// Fetches and stores the page of at most `limit` events before `start`; what to wait for
    /// after a failure, if any.
    private func fetch(_ start: HistoryStart, limit: Int) async -> HistoryPolicy.Action? {
        guard let token = liveSession() else { return nil }
        let position = HistoryPosition(chatId: start.chatId, upstreamChat: start.upstreamChat, token: start.position)
        let fetched: Fetched
        if let ahead, ahead.position == position {
            fetched = await ahead.request.value
        } else {
            ahead?.request.cancel()
            fetched = await request(position, limit: limit, token: token).value
        }
        ahead = nil
        let page: OlderHistoryPage
        switch fetched.page {
        case .success(let answer):
            page = answer
        case .failure(let error):
            if error != .cancelled { log.info("history of \(start.upstreamChat): \(error)") }
            return policy.failed(error, at: start, jitter: Double(random.next() >> 11) / Double(UInt64(1) << 53))
        }
        policy.read(events: page.messages.count + page.skipped, took: fetched.took)
        if let next = page.next, policy.readsAhead {
            ahead = (next, request(next, limit: policy.pageSize, token: token))
        }
        if page.skipped > 0, !skippedLogged {
            skippedLogged = true
            log.info("history: \(page.skipped) event(s) of \(start.upstreamChat) are no messages or reactions (state and the like); such events are skipped quietly from now on")
        }
        let applied: AppliedBatch
        do {
            applied = try await store.applyOlder(page.messages, to: account, chat: start.chatId,
                                                 receivedAt: Timestamp.string(environment.now()), next: page.next?.token)
        } catch {
            // Full storage is the usual reason, and live sync reports it; anything else is logged.
            if case .outOfSpace = error {} else { log.warning("cannot store history of \(start.upstreamChat): \(error)") }
            return policy.storageFull()
        }
        log.debug("history of \(start.upstreamChat): \(page.messages.count + page.skipped) event(s) of \(limit) asked for, read by the homeserver in \(fetched.took); the next page asks for \(policy.pageSize)")
        if !applied.changed.isEmpty || !applied.removed.isEmpty {
            emit(.messagesChanged(account: account, changed: applied.changed, removed: applied.removed))
        }
        // The storage figure moves as the pages are stored, not only when live messages come.
        if let usage = applied.usage, !applied.fresh.isEmpty || !applied.removed.isEmpty { emit(.storage(usage)) }
        if page.next == nil { log.info("history of \(start.upstreamChat) is complete") }
        await announce(grew: applied.fresh.isEmpty ? nil : start.chatId)
        return nil
    }

    /// The page before `position`, asked for now.
    private func request(_ position: HistoryPosition, limit: Int, token: String) -> Task<Fetched, Never> {
        let upstream = upstream, stopwatch = environment.stopwatch()
        return Task {
            do throws(UpstreamError) {
                let page = try await upstream.olderHistory(token: token, before: position, limit: limit)
                return (.success(page), stopwatch())
            } catch {
                return (.failure(error), stopwatch())
            }
        }
    }

    /// Tells the page how far it is, when that changed.
    private func announce(grew chatID: Int64? = nil) async {
        guard let progress = try? await store.historyProgress(of: account), progress != announced else { return }
        announced = progress
        emit(.history(account: account, progress: progress, grew: chatID))
    }

    private func perform(_ action: HistoryPolicy.Action) async {
        switch action {
        case .fetch:
            return
        case .finish(let start):
            log.info("history of \(start.upstreamChat) ends here: the homeserver lets this account see no further back")
            _ = try? await store.applyOlder([], to: account, chat: start.chatId, receivedAt: Timestamp.string(environment.now()), next: nil)
            await announce()
        case .wait(let duration, let reason):
            await pause(duration, reason)
        }
    }

    private func pause(_ duration: Duration, _ reason: HistoryPause) async {
        guard duration > .zero else { return }
        let clock = environment.clock
        let sleeper = Task<Void, Never> { try? await clock.sleep(for: duration) }
        (self.sleeper, waitingFor) = (sleeper, reason)
        // The run's own cancellation ends the wait too.
        await withTaskCancellationHandler { await sleeper.value } onCancel: { sleeper.cancel() }
        (self.sleeper, waitingFor) = (nil, nil)
    }
}
