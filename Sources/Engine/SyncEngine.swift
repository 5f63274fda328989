import Foundation
import Logging
import Store
import Upstream

/// The long-poll engine: keeps the store in sync with the upstream, one cycle at a time.
///
/// An actor, which is the seeds' "one serial context": every piece of mutable state (the cycle's
/// freshness tag, cursors, counters, the retry wait) changes only here. A cycle is
/// session token -> cursor sync -> hanging `messages` request -> store the batch -> again. Each
/// cycle gets a fresh tag; every step checks, after each suspension, that its tag is still the
/// current one and otherwise drops its result (counted in `staleResultsDropped`). `stop()`
/// clears the tag and cancels the cycle's task, which cancels the request in flight and any wait.
public actor SyncEngine {
    public nonisolated let options: EngineOptions
    private let store: MessageStore
    private let upstream: any UpstreamAPI
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private var random: AnyRandomGenerator
    private let network: any NetworkMonitor
    private let emit: @Sendable (EngineEvent) -> Void
    private let log = Logger("engine")

    // The current cycle.
    private var tag: UUID?
    private var cycleTask: Task<Void, Never>?
    private var retryWait: Task<Void, Never>?
    /// After connecting with someone waiting on `retryAndWait`: the time the poll has to be refused in.
    private var settleWait: Task<Void, Never>?

    /// Whether a cycle should run, when to wait, when a refused token is a loop: decided there,
    /// performed here (`perform`).
    private var policy: SyncPolicy
    private var graceTask: Task<Void, Never>?
    /// The accounts whose newest id is ahead of the upstream's (`upstreamBehind`).
    private var behindAccounts: [AccountRole] = []

    // What the cycle knows.
    private var statusBoard: StatusBoard
    private var status: ConnectionStatus { statusBoard.status }
    private var counters = EngineCounters()
    private var token: String?
    private var accounts = AccountIDs(primaryUserId: nil, linkedUserId: nil)
    /// Which stored messages are history, which were missed while away, which are live.
    private var deliveries = DeliveryRules()
    private var problemBoard = ProblemBoard()
    private var tokenIssuedAt: Date?
    /// Who waits for the next try to end (`retryAndWait`): true when it connected and the poll was
    /// not refused within `tryAgainSettle` (or answered).
    private var outcomeWaiters = Waiters<Bool>()
    /// Who waits for the next batch after a pause (`resumeAndWait`).
    private var batchWaiters = Waiters<BatchOutcome>()
    private var networkWatch: Task<Void, Never>?

    public init(store: MessageStore, upstream: any UpstreamAPI, options: EngineOptions = EngineOptions(),
                environment: EngineEnvironment = EngineEnvironment(), emit: @escaping @Sendable (EngineEvent) -> Void = { _ in }) {
        self.store = store
        self.upstream = upstream
        self.options = options
        self.clock = environment.clock
        self.now = environment.now
        self.random = AnyRandomGenerator(environment.random)
        self.network = environment.network
        self.emit = emit
        self.policy = SyncPolicy(alwaysOn: options.alwaysOn, lifecycleGrace: options.lifecycleGrace, online: environment.network.isOnline,
                                 anotherPollerWait: options.anotherPollerWait)
        self.statusBoard = StatusBoard(ConnectionStatus(upstream: upstream.location, holdSeconds: options.holdSeconds))
    }

    // MARK: Inputs

    /// Begins watching the network and syncs whenever it should (see `shouldRun`).
    public func activate() {
        guard networkWatch == nil else { return }
        let transitions = network.transitions()
        networkWatch = Task { [weak self] in
            for await online in transitions {
                await self?.networkChanged(online: online)
            }
        }
        perform(policy.activate())
    }

    /// `POST /api/engine/start`: sync again (when a tab is visible, or always with `--always-on`).
    public func start() {
        perform(policy.start())
    }

    /// `POST /api/engine/stop`: stop syncing until `start()`. Connection problems end with it:
    /// nothing is being tried that could fail.
    public func stop() {
        perform(policy.stop())
    }

    /// Skips the wait before the next try.
    public func retryNow() {
        perform(policy.retryNow())
    }

    /// Skips the wait (or starts the cycle) and suspends until that try has connected and its
    /// poll was answered or not refused within `tryAgainSettle` (true), or failed (false); true at
    /// once when the connection is live. What a "Try again" button runs. A cancelled caller stops
    /// waiting (false); the try itself goes on.
    public func retryAndWait() async -> Bool {
        if tag != nil && status.state == .live { return true }
        if tag == nil && !policy.shouldRun { return false }
        let id = outcomeWaiters.makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(returning: false) }
                outcomeWaiters.add(continuation, id: id)
                retryNow()
            }
        } onCancel: {
            Task { await self.forgetOutcomeWaiter(id) }
        }
    }

    private func reportOutcome(_ connected: Bool) {
        settleWait?.cancel()
        settleWait = nil
        outcomeWaiters.resumeAll(returning: connected)
    }

    /// How the wait for the next batch ended (`resumeAndWait`).
    public enum BatchOutcome: Sendable, Equatable {
        /// The next answered poll was stored.
        case stored
        /// It was not: `problem` says why (out of space again, a connection failure); nil when
        /// syncing stopped or the caller was cancelled.
        case notStored(EngineProblem?)
    }

    /// Resumes after a pause (or skips a retry wait) and suspends until the next answered poll
    /// was stored or it became clear that it was not. What Free space and Buy more space wait on
    /// before they call the error recovered.
    public func resumeAndWait() async -> BatchOutcome {
        let id = batchWaiters.makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(returning: .notStored(nil)) }
                batchWaiters.add(continuation, id: id)
                perform(policy.paused ? policy.resume() : policy.retryNow())
                if !policy.shouldRun { reportBatch(.notStored(nil)) }
            }
        } onCancel: {
            Task { await self.forgetBatchWaiter(id) }
        }
    }

    private func reportBatch(_ outcome: BatchOutcome) {
        batchWaiters.resumeAll(returning: outcome)
    }

    private func settled(_ tag: UUID) {
        guard isCurrent(tag), status.state == .live else { return }
        reportOutcome(true)
    }

    private func forgetOutcomeWaiter(_ id: UInt64) {
        outcomeWaiters.cancel(id, returning: false)
    }

    private func forgetBatchWaiter(_ id: UInt64) {
        batchWaiters.cancel(id, returning: .notStored(nil))
    }

    /// After space was freed or bought: fetch again from the same cursors. The out-of-space
    /// problem stays open until a batch is stored: only that shows the space is enough.
    public func resume() {
        perform(policy.resume())
    }

    /// For an upstream that went back: sets the messages of the accounts it is behind on aside
    /// (archived, still stored and counted), forgets their cursors and syncs them from the
    /// beginning, silently, as a first sync. Suspends like `retryAndWait`.
    public func resyncFromServer() async -> Bool {
        guard policy.pausedBy == .upstreamBehind else { return await retryAndWait() }
        let at = Timestamp.string(now())
        for account in behindAccounts {
            do {
                let count = try await store.archiveAccount(account, at: at)
                log.info("set \(count) \(account) message(s) aside; syncing the \(account) account from the beginning")
            } catch {
                raise(EngineProblem(kind: .storageFailure, debug: "archiving the \(account) account failed: \(error)"))
                return false
            }
            deliveries.forget(account)
        }
        behindAccounts = []
        perform(policy.resume())
        return await retryAndWait()
    }

    /// Whether any dashboard tab is visible now. Syncing runs while one is and for the grace
    /// period after the last one goes.
    public func setDashboardVisible(_ visible: Bool) {
        perform(policy.dashboardVisibility(visible))
    }

    private func graceEnded() {
        graceTask = nil
        perform(policy.graceEnded())
    }

    func networkChanged(online: Bool) {
        guard online != policy.online else { return }
        log.info(online ? "network is back" : "network is gone")
        perform(policy.network(online: online))
    }

    /// Adds purchased bytes to the quota (when `--quota` overrides the upstream's figure); returns
    /// the quota now in force.
    @discardableResult
    public func noteStoragePurchased(bytes: Int64, newUpstreamQuota: Int64) async -> Int64 {
        // Kept in the store: a restart must not forget what was bought on top of `--quota`.
        try? await store.addPurchasedBytes(bytes)
        let purchased = (try? await store.purchasedBytes()) ?? bytes
        let quota = options.quotaOverride.map { $0 + purchased } ?? newUpstreamQuota
        try? await store.setQuota(quota)
        emit(.storage(await store.storageUsage()))
        return quota
    }

    // MARK: Outputs

    public func connectionStatus() -> ConnectionStatus { status }

    public func engineCounters() -> EngineCounters { counters }

    public func problems() -> [EngineProblem] {
        problemBoard.problems
    }

    public func currentToken() -> String? { token }

    /// A token for a call outside the cycle (a purchase while paused): the cycle's, or a new session's.
    public func tokenForCall() async throws(UpstreamError) -> String {
        if let token { return token }
        return try await upstream.createSession().token
    }

    /// The upstream, for calls the recovery layer makes (purchases).
    public nonisolated var upstreamAPI: any UpstreamAPI { upstream }

    // MARK: Performing what the policy decides

    private func perform(_ actions: [SyncPolicy.Action]) {
        for action in actions {
            switch action {
            case .startCycle(let reconnect):
                startCycle(reconnect: reconnect)
            case .stopCycle:
                stopCycle()
            case .wait:
                break  // waitBeforeRetry performs it: the cycle's task is the one that waits
            case .endWait:
                retryWait?.cancel()
            case .startGrace(let grace):
                let clock = self.clock
                graceTask = Task { [weak self] in
                    guard (try? await clock.sleep(for: grace)) != nil else { return }
                    await self?.graceEnded()
                }
            case .cancelGrace:
                graceTask?.cancel()
                graceTask = nil
            case .raise(let problem):
                raise(problem)
            case .raiseNoInternet:
                raise(EngineProblem(kind: .noInternet, debug: "no network interface is up"))
            case .clear(let kinds):
                kinds.forEach(clear)
            case .reportFailure(let problem):
                reportOutcome(false)
                reportBatch(.notStored(problem))
            case .forgetBehind:
                behindAccounts = []
            case .show(let state):
                update { $0.state = state; $0.retryAt = nil }
            case .resetAttemptCount:
                update { $0.attempt = 0 }
            }
        }
    }

    private func startCycle(reconnect: Bool) {
        let tag = UUID()
        self.tag = tag
        counters.cyclesStarted += 1
        if reconnect { counters.reconnects += 1 }
        update { $0.activeCycles = 1; $0.state = .connecting; $0.retryAt = nil }
        cycleTask = Task { await self.runCycle(tag) }
    }

    private func stopCycle() {
        reportOutcome(false)
        reportBatch(.notStored(nil))
        tag = nil
        cycleTask?.cancel()
        cycleTask = nil
        retryWait?.cancel()
        retryWait = nil
        token = nil
        update { $0.activeCycles = 0 }
    }

    private func isCurrent(_ tag: UUID) -> Bool {
        self.tag == tag
    }

    /// Counts and drops a result of a cycle that is no longer current. Returns true when stale.
    private func dropIfStale(_ tag: UUID) -> Bool {
        guard !isCurrent(tag) else { return false }
        counters.staleResultsDropped += 1
        return true
    }

    // MARK: The cycle

    private func runCycle(_ tag: UUID) async {
        while isCurrent(tag) {
            do {
                try await connect(tag)
                while isCurrent(tag) {
                    try await pollOnce(tag)
                }
                return
            } catch let failure as CycleFailure {
                if dropIfStale(tag) { return }
                switch failure {
                case .stale:
                    return
                case .paused(let problem):
                    perform(policy.paused(by: problem))
                    return
                case .retry(let problem, let atLeast):
                    await waitBeforeRetry(tag, after: problem, atLeast: atLeast)
                }
            } catch {
                if dropIfStale(tag) { return }
                log.error("unexpected failure in the cycle: \(error)")
                await waitBeforeRetry(tag, after: nil, atLeast: .zero)
            }
        }
    }

    /// Why a cycle step did not go on.
    private enum CycleFailure: Error {
        /// The cycle is no longer current.
        case stale
        /// Storage is full: stop until `resume()`.
        case paused(EngineProblem)
        /// Wait (backoff, at least `atLeast`) and start again from the token.
        case retry(EngineProblem, atLeast: Duration)
    }

    /// What an upstream call brought: its answer, or word that the token expired (a 401 the
    /// policy renews silently): the caller starts a new session and makes the call again.
    private enum Call<Value: Sendable> {
        case answered(Value)
        case tokenExpired
    }

    /// Session, accounts, quota, a check of the store after it failed, and the cursor sync:
    /// everything before the first hanging request.
    private func connect(_ tag: UUID) async throws {
        try await startSession(tag, reconnecting: true)
        if problemBoard.isOpen(.storageFailure) {
            do {
                try await store.checkWritable()
            } catch {
                throw storeFailure(error)
            }
            clear(.storageFailure)
        }
        connected()
    }

    /// One hanging request and its batch.
    private func pollOnce(_ tag: UUID) async throws {
        var call = try await poll(tag)
        while case .tokenExpired = call {
            try await startSession(tag, reconnecting: false)
            call = try await poll(tag)
        }
        guard case .answered(let answer) = call else { return }
        counters.pollsSucceeded += 1
        policy.pollAnswered()
        reportOutcome(true)
        update { $0.attempt = 0; $0.lastSuccessAt = now() }
        try await store(answer, tag)
        reportBatch(.stored)
    }

    private func poll(_ tag: UUID) async throws -> Call<MessagesAnswer> {
        // Cursors are read each time: a new session may have detached the linked account.
        let cursors = StreamCursors(primary: await store.cursor(for: .primary), includesLinked: accounts.linkedUserId != nil,
                                    linked: await store.cursor(for: .linked))
        guard isCurrent(tag) else { throw CycleFailure.stale }
        counters.pollsStarted += 1
        let hold = options.holdSeconds
        return try await request(tag, important: false) { upstream, token throws(UpstreamError) in
            try await upstream.messages(token: token, after: cursors, holdSeconds: hold)
        }
    }

    /// A new session token and what the session says, then the cursor sync, which tells what is
    /// history (silent) and what arrived while syncing was interrupted (one summary). Every new
    /// token is followed by a cursor sync, so an account attached mid-cycle is known as history.
    private func startSession(_ tag: UUID, reconnecting: Bool) async throws {
        while true {
            // The session call carries no token: a 401 to it is a refusal, never an expiry.
            guard case .answered(let session) = try await request(tag, important: true, withToken: false, { upstream, _ throws(UpstreamError) in
                try await upstream.createSession()
            }) else { continue }
            token = session.token
            tokenIssuedAt = now()
            try await adopt(session, tag)
            let call = try await request(tag, important: true) { upstream, token throws(UpstreamError) in
                try await upstream.lastMessageInfo(token: token)
            }
            // Taken back already (linking or unlinking expires tokens): another session.
            guard case .answered(let info) = call else { continue }
            try await noteServerPosition(info, reconnecting: reconnecting)
            return
        }
    }

    /// Sets, per stream, which ids are history and which were missed while away; an upstream
    /// behind the local cursor pauses syncing (`upstreamBehind`) rather than waiting silently for
    /// ids it may never reach, or reach with other messages.
    private func noteServerPosition(_ info: LastMessageInfo, reconnecting: Bool) async throws {
        var behind: [(account: AccountRole, server: Int64, local: Int64)] = []
        for (role, lastID) in [(AccountRole.primary, info.primaryLastId), (.linked, info.linkedLastId)] {
            guard let lastID, let newest = await store.newestID(for: role), lastID < newest else { continue }
            behind.append((role, lastID, newest))
        }
        if !behind.isEmpty {
            behindAccounts = behind.map(\.account)
            counters.upstreamBehind += 1
            let debug = behind.map { "\($0.account): the server's newest id is \($0.server), the newest stored \($0.local)" }.joined(separator: "; ")
            throw CycleFailure.paused(EngineProblem(kind: .upstreamBehind, debug: debug))
        }
        for (role, lastID) in [(AccountRole.primary, info.primaryLastId), (.linked, info.linkedLastId)] {
            guard let lastID else { continue }
            let synced = await store.cursor(for: role) != nil
            switch deliveries.serverNewest(lastID, for: role, newestStored: synced ? (await store.newestID(for: role) ?? 0) : nil,
                                           reconnecting: reconnecting) {
            case .history(let count) where count > 0:
                log.info("first sync of the \(role) account: \(count) message(s) of history, delivered without notifications")
            case .missed(let count) where count > 0:
                log.info("\(count) \(role) message(s) arrived while syncing was interrupted")
            default:
                break
            }
        }
    }

    /// Runs one upstream call for the current cycle.
    ///
    /// - A 401 means the token expired: the caller starts a new session, silently, and builds the
    ///   call again (`Call.tokenExpired`), however often tokens expire (linking and
    ///   unlinking expires them). The user-visible `tokenRefused` is a session call answered 401,
    ///   or more than `silentQuickExpiries` tokens taken back within `quickExpiry` of being
    ///   issued, in a row without a backoff between: that would be a loop.
    /// - An `important` call (session, cursor sync) is tried a few more times under the hood, after
    ///   short pauses, when the failure looks transient, before its failure counts.
    /// - Whatever comes back for a cycle that is no longer current is dropped (`CycleFailure.stale`).
    private func request<T: Sendable>(_ tag: UUID, important: Bool, withToken: Bool = true,
                                      _ call: @Sendable (any UpstreamAPI, String) async throws(UpstreamError) -> T) async throws -> Call<T> {
        var pauses = important ? options.importantRetryDelays[...] : []
        while true {
            guard isCurrent(tag) else { throw CycleFailure.stale }
            let currentToken = withToken ? (token ?? "") : ""
            let error: UpstreamError
            do {
                let value = try await call(upstream, currentToken)
                guard isCurrent(tag) else { throw CycleFailure.stale }
                return .answered(value)
            } catch let upstreamError as UpstreamError {
                error = upstreamError
            }
            guard isCurrent(tag) else { throw CycleFailure.stale }
            let lasted = tokenIssuedAt.map { Duration.seconds(now().timeIntervalSince($0)) } ?? .seconds(3600)
            switch policy.callFailed(error, withToken: withToken, tokenLasted: lasted, mayTryAgain: !pauses.isEmpty) {
            case .renewToken:
                counters.tokenRefreshes += 1
                log.info("token expired; getting a new one")
                return .tokenExpired
            case .tryAgain:
                log.debug("retrying under the hood after \(error)")
                do {
                    try await clock.sleep(for: pauses.removeFirst())
                } catch {
                    throw CycleFailure.stale
                }
            case .fail(let problem, let atLeast):
                throw CycleFailure.retry(problem, atLeast: atLeast)
            case .cancelled:
                throw CycleFailure.stale
            }
        }
    }

    /// Backoff after a failed cycle: full jitter, and at least `atLeast` (3 s after a 409).
    private func waitBeforeRetry(_ tag: UUID, after problem: EngineProblem?, atLeast: Duration) async {
        counters.pollsFailed += 1
        let actions = policy.tryFailed(problem, atLeast: atLeast)
        perform(actions)
        guard case .wait(let attempt, let least) = actions.last else { return }
        let delay = max(options.backoff.delay(afterFailure: attempt, using: &random), least)
        counters.backoff.observe(delay.inSeconds)
        token = nil
        let retryAt = now().addingTimeInterval(delay.inSeconds)
        update { $0.attempt = attempt; $0.state = .waiting; $0.retryAt = retryAt }
        let clock = self.clock
        let wait = Task { _ = try? await clock.sleep(for: delay) }
        retryWait = wait
        await wait.value
        guard isCurrent(tag) else { return }
        retryWait = nil
        counters.reconnects += 1
        perform(policy.waitEnded())
    }

    /// Token and cursors are in place and the hanging request goes out: the connection is live.
    /// The failure count resets only when a poll answers, so a server that fails every poll
    /// still backs off further each time.
    private func connected() {
        clear(.upstreamBehind)
        // Live shows no failure count; the backoff keeps its own until a poll answers.
        update { $0.state = .live; $0.attempt = 0; $0.retryAt = nil; $0.lastSuccessAt = now() }
        if !outcomeWaiters.isEmpty, let tag {
            // Connected is not yet recovered: a poll refused at once (409, 500) would say otherwise.
            let clock = self.clock, settle = options.tryAgainSettle
            settleWait?.cancel()
            settleWait = Task { [weak self] in
                guard (try? await clock.sleep(for: settle)) != nil else { return }
                await self?.settled(tag)
            }
        }
        for kind in EngineProblem.Kind.allCases where kind.isConnectionProblem || kind == .noInternet {
            clear(kind)
        }
    }

    // MARK: Sessions and batches

    /// Takes in what a session answer says: another primary user, linked account attached or
    /// detached, the quota.
    private func adopt(_ session: UpstreamSession, _ tag: UUID) async throws {
        var outcome = SessionAdoption.Outcome()
        let failure: StoreError?
        do {
            try await SessionAdoption(store: store, quotaOverride: options.quotaOverride).adopt(session, into: &outcome)
            failure = nil
        } catch {
            failure = error
        }
        if outcome.everythingForgotten { deliveries = DeliveryRules() }
        if outcome.linkedForgotten { deliveries.forget(.linked) }
        for note in outcome.notes {
            if note.warning { log.warning(note.text) } else { log.info(note.text) }
        }
        outcome.events.forEach(emit)
        if let failure { throw storeFailure(failure) }
        guard isCurrent(tag) else { throw CycleFailure.stale }
        accounts = AccountIDs(primaryUserId: session.primaryUserId, linkedUserId: session.linkedUserId)
    }

    /// Stores each stream's messages (its own transaction and cursor) and tells the feed.
    private func store(_ answer: MessagesAnswer, _ tag: UUID) async throws {
        let receivedAt = Timestamp.string(now())
        // A stream may come with messages and its new cursor, or with a new cursor only.
        for key in Set(answer.messages.keys).union(answer.cursors.keys).sorted() {
            let list = answer.messages[key] ?? []
            guard let userID = Int64(key), let account = role(of: userID) else {
                if !list.isEmpty {
                    counters.unknownStreamsIgnored += 1
                    log.warning("ignoring \(list.count) message(s) for unknown user id \(key.debugDescription)")
                }
                continue
            }
            let incoming = list.map { IncomingMessage(id: $0.id, chatId: $0.chatId, sender: $0.sender, text: $0.text, sentAt: $0.sentAt) }
            let fresh: [StoredMessage]
            do {
                fresh = try await store.apply(incoming, to: account, receivedAt: receivedAt, cursor: answer.cursors[key])
            } catch {
                throw storeFailure(error)
            }
            // A result for a cycle stopped meanwhile is still stored (it is committed and correct),
            // but the feed hears of it only from the current cycle.
            guard isCurrent(tag) else { throw CycleFailure.stale }
            counters.messagesStored[account.description, default: 0] += fresh.count
            var groups: [MessageDelivery: [StoredMessage]] = [:]
            let rule = deliveries.thresholds(for: account)
            for message in fresh {
                groups[rule.delivery(of: message.id), default: []].append(message)
            }
            for delivery in [MessageDelivery.silent, .caughtUp, .live] {
                if let messages = groups[delivery] { emit(.messages(account: account, messages: messages, delivery: delivery)) }
            }
        }
        // A stored answer shows the store takes writes and the batch fitted.
        clear(.outOfSpace)
        clear(.storageFailure)
        // No separate storage event per batch: the feed puts the usage into the messages event,
        // so one batch wakes each dashboard tab once.
    }

    private func role(of userID: Int64) -> AccountRole? {
        if userID == accounts.primaryUserId { return .primary }
        if let linked = accounts.linkedUserId, userID == linked { return .linked }
        return nil
    }

    private func storeFailure(_ error: StoreError) -> CycleFailure {
        switch error {
        case let .outOfSpace(used, quota, needed, diskFull):
            return .paused(EngineProblem(kind: .outOfSpace,
                                         debug: diskFull ? "SQLITE_FULL: the disk is full" : "quota of \(quota ?? 0) bytes reached",
                                         usage: StorageUsage(usedBytes: used, quotaBytes: quota), neededBytes: needed,
                                         diskFull: diskFull))
        default:
            return .retry(EngineProblem(kind: .storageFailure, debug: "\(error)"), atLeast: .zero)
        }
    }

    // MARK: Problems and status

    private func raise(_ problem: EngineProblem) {
        let events = problemBoard.raise(problem)
        if case .problemRaised = events.last { log.info("problem: \(problem.kind.rawValue): \(problem.debug)") }
        events.forEach(emit)
    }

    private func clear(_ kind: EngineProblem.Kind) {
        problemBoard.clear(kind).forEach(emit)
    }

    /// Changes the status; the page hears of what is worth saying (`StatusBoard`).
    private func update(_ change: (inout ConnectionStatus) -> Void) {
        let activeCycles = tag == nil ? 0 : 1
        if let announced = statusBoard.change({ change(&$0); $0.activeCycles = activeCycles }) {
            emit(.connection(announced))
        }
    }

}
