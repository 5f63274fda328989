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
    let store: any EngineStore
    let upstream: any UpstreamAPI
    let clock: any Clock<Duration>
    let now: @Sendable () -> Date
    private var random: AnyRandomGenerator
    private let network: any NetworkMonitor
    private let executor: (any TaskExecutor)?
    let emit: @Sendable (EngineEvent) -> Void
    let log = Logger("engine")

    // The current cycle.
    var tag: UUID?
    private var cycleTask: Task<Void, Never>?
    private var retryWait: Task<Void, Never>?
    /// After connecting with someone waiting on `retryAndWait`: the time the poll has to be refused in.
    var settleWait: Task<Void, Never>?

    /// Whether a cycle should run, when to wait, when a refused token is a loop: decided there,
    /// performed here (`perform`).
    var policy: SyncPolicy
    private var graceTask: Task<Void, Never>?
    /// The accounts whose newest id is ahead of the upstream's (`upstreamBehind`).
    var behindAccounts: [AccountRole] = []

    // What the cycle knows.
    private var statusBoard: StatusBoard { didSet { publishLiveSession() } }
    var status: ConnectionStatus { statusBoard.status }
    private var counters = EngineCounters()
    var token: String? { didSet { publishLiveSession() } }
    private var accounts = AccountIDs(primaryUserId: nil, linkedUserId: nil) { didSet { publishLiveSession() } }
    /// The token while live and the accounts, for the work that rides on the session, readable
    /// without waiting for this actor.
    public nonisolated let liveSession = LiveSession()
    /// Which stored messages are history, which were missed while away, which are live.
    var deliveries = DeliveryRules()
    private var problemBoard = ProblemBoard()
    private var tokenIssuedAt: Date?
    /// The next poll answers at once: a catch-up after a reconnection, for an upstream without
    /// `lastMessageInfo` (its answer then says it is what was missed).
    private var catchUpPending = false
    /// Connected to an upstream that catches up through its first answer (Matrix's first sync of
    /// a new device can take seconds): the connection is live once that answer is stored, since
    /// a message sent before then shows only after it.
    private var liveOnFirstAnswer = false
    /// Who waits for the next try to end (`retryAndWait`): true when it connected and the poll was
    /// not refused within `tryAgainSettle` (or answered).
    var outcomeWaiters = Waiters<Bool>()
    /// Who waits for the next batch after a pause (`resumeAndWait`).
    var batchWaiters = Waiters<BatchOutcome>()
    private var networkWatch: Task<Void, Never>?
    /// The seeds' loud guard: one long poll in flight at a time, which the single tag already
    /// ensures; a second would be refused, counted and logged.
    private var pollGuard = SinglePollGuard()

    public init(store: any EngineStore, upstream: any UpstreamAPI, options: EngineOptions = EngineOptions(),
                environment: EngineEnvironment = EngineEnvironment(), emit: @escaping @Sendable (EngineEvent) -> Void = { _ in }) {
        self.store = store
        self.upstream = upstream
        self.options = options
        self.clock = environment.clock
        self.now = environment.now
        self.random = AnyRandomGenerator(environment.random)
        self.network = environment.network
        self.executor = environment.executor
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
        // The network may have changed between this engine's creation (when the policy learned
        // whether it is online) and the subscription above, which reports transitions only.
        networkChanged(online: network.isOnline)
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

    /// After space was freed or bought: fetch again from the same cursors. The out-of-space
    /// problem stays open until a batch is stored: only that shows the space is enough.
    public func resume() {
        perform(policy.resume())
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

    // MARK: Outputs

    public func connectionStatus() -> ConnectionStatus { status }

    public func engineCounters() -> EngineCounters { counters }

    public func problems() -> [EngineProblem] {
        problemBoard.problems
    }

    /// Tells the upstream, when it keeps read markers, that `place` (a chat, or a thread in it)
    /// is read up to `eventId`, so the account's other clients show it read too. A failure is
    /// logged and not retried: it is read here either way, and the next read sends the marker again.
    public func markReadUpstream(_ place: ReadPlace, eventId: String) async {
        guard let markers = upstream as? any ReadMarkers, let token else { return }
        do {
            try await markers.markRead(token: token, chatId: place.chatId, eventId: eventId, thread: place.thread)
        } catch {
            log.info("could not tell the upstream that \(place) was read: \(error)")
        }
    }

    /// Whether the upstream serves messages' files (`MediaSource`).
    public nonisolated var servesMedia: Bool { upstream is any MediaSource }

    /// A message's file from the upstream, with the session's token; `.unauthorized` before there
    /// is a session, `.badResponse` from an upstream without files.
    public func fetchMedia(_ reference: MediaReference, thumbnail: Bool, maxBytes: Int) async throws(UpstreamError) -> FetchedMedia {
        guard let source = upstream as? any MediaSource else { throw .badResponse("this upstream serves no files") }
        guard let token else { throw .unauthorized }
        return try await source.media(token: token, reference, thumbnail: thumbnail, maxBytes: maxBytes)
    }

    /// The session's token while syncing is live, else nil: background work that rides on the
    /// engine's session (history, sending) goes on only then. It reads it from `liveSession`.
    public func liveToken() -> String? { status.state == .live ? token : nil }

    private func publishLiveSession() {
        liveSession.update(token: liveToken(), accounts: accounts)
    }

    // MARK: Performing what the policy decides

    func perform(_ actions: [SyncPolicy.Action]) {
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
        cycleTask = Task(executorPreference: executor) { await self.runCycle(tag) }
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
        // The stopped cycle's poll, if in flight, is cancelled and its result dropped: its slot is free.
        pollGuard.cycleStopped()
        update { $0.activeCycles = 0 }
    }

    func isCurrent(_ tag: UUID) -> Bool {
        self.tag == tag
    }

    /// Counts and drops a result of a cycle that is no longer current. Returns true when stale.
    private func dropIfStale(_ tag: UUID) -> Bool {
        guard !isCurrent(tag) else { return false }
        counters.staleResultsDropped += 1
        return true
    }

    /// After every await of a cycle: a cycle that is no longer current goes no further.
    private func ensureCurrent(_ tag: UUID) throws(CycleFailure) {
        guard isCurrent(tag) else { throw .stale }
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

    /// Session, accounts, quota, a check of the store after it failed, and the cursor sync:
    /// everything before the first hanging request.
    private func connect(_ tag: UUID) async throws {
        try await startSession(tag, reconnecting: true)
        try ensureCurrent(tag)
        if problemBoard.isOpen(.storageFailure) {
            do {
                try await store.checkWritable()
            } catch {
                throw CycleFailure(error)
            }
            try ensureCurrent(tag)
            clear(.storageFailure)
        }
        liveOnFirstAnswer = catchUpPending
        if !liveOnFirstAnswer { connected() }
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
        let answeredAt = now()
        if answer.messages.values.contains(where: { !$0.isEmpty }) { statusBoard.successShown(at: answeredAt) }
        update { $0.attempt = 0; $0.lastSuccessAt = answeredAt }
        try await store(answer, tag)
        reportBatch(.stored)
        if liveOnFirstAnswer {
            liveOnFirstAnswer = false
            connected()
        }
    }

    private func poll(_ tag: UUID) async throws -> CallOutcome<MessagesAnswer> {
        // Cursors are read each time: a new session may have detached the linked account.
        let cursors = StreamCursors(primary: await store.cursor(for: .primary), includesLinked: accounts.linkedUserId != nil,
                                    linked: await store.cursor(for: .linked))
        try ensureCurrent(tag)
        guard pollGuard.begin(tag) else {
            counters.secondPollsRefused = pollGuard.refused
            log.error("a second long poll was about to start while one is in flight; refused (\(pollGuard.refused) so far)")
            throw CycleFailure.stale
        }
        defer { pollGuard.end(tag) }
        counters.pollsStarted += 1
        let wait: PollWait = catchUpPending ? .catchUp : .hold(seconds: options.holdSeconds)
        catchUpPending = false
        return try await request(tag, important: false) { upstream, token throws(UpstreamError) in
            try await upstream.messages(token: token, after: cursors, wait: wait)
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
            try ensureCurrent(tag)
            let call = try await request(tag, important: true) { upstream, token throws(UpstreamError) in
                try await upstream.lastMessageInfo(token: token)
            }
            // Taken back already (linking or unlinking expires tokens): another session.
            guard case .answered(let info) = call else { continue }
            // An upstream that cannot tell its newest ids says what each answer is instead; after a
            // reconnection it is asked to answer at once, with what arrived meanwhile.
            if let info {
                try await noteServerPosition(info, tag, reconnecting: reconnecting)
            } else if reconnecting {
                catchUpPending = true
            }
            if !reconnecting {
                // A token renewed mid-cycle: the upstream answered, and the next poll's silence
                // counts from now (else the page would call a quiet account slow after a renewal).
                update(successIsNews: true) { $0.lastSuccessAt = now() }
            }
            return
        }
    }

    /// Sets, per stream, which ids are history and which were missed while away (`DeliveryRules`);
    /// an upstream behind the local copy pauses syncing (`upstreamBehind`).
    private func noteServerPosition(_ info: LastMessageInfo, _ tag: UUID, reconnecting: Bool) async throws {
        var stored: [AccountRole: DeliveryRules.StoredPosition] = [:]
        for role in AccountRole.allCases {
            stored[role] = .init(synced: await store.cursor(for: role) != nil, newestID: await store.newestID(for: role))
        }
        try ensureCurrent(tag)
        switch deliveries.cursorSync(info, stored: stored, reconnecting: reconnecting) {
        case .behind(let accounts, let debug):
            behindAccounts = accounts
            counters.upstreamBehind += 1
            throw CycleFailure.paused(EngineProblem(kind: .upstreamBehind, debug: debug))
        case .noted(let notes):
            notes.forEach { log.info($0) }
        }
    }

    /// Runs one upstream call for the current cycle.
    ///
    /// - A 401 means the token expired: the caller starts a new session, silently, and builds the
    ///   call again (`CallOutcome.tokenExpired`), however often tokens expire (linking and
    ///   unlinking expires them). The user-visible `tokenRefused` is a session call answered 401,
    ///   or more than `silentQuickExpiries` tokens taken back within `quickExpiry` of being
    ///   issued, in a row without a backoff between: that would be a loop.
    /// - An `important` call (session, cursor sync) is tried a few more times under the hood, after
    ///   short pauses, when the failure looks transient, before its failure counts.
    /// - Whatever comes back for a cycle that is no longer current is dropped (`CycleFailure.stale`).
    private func request<T: Sendable>(_ tag: UUID, important: Bool, withToken: Bool = true,
                                      _ call: @Sendable (any UpstreamAPI, String) async throws(UpstreamError) -> T) async throws -> CallOutcome<T> {
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
        startSettleWait()
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
        if let failure { throw CycleFailure(failure) }
        guard isCurrent(tag) else { throw CycleFailure.stale }
        accounts = AccountIDs(primaryUserId: session.primaryUserId, linkedUserId: session.linkedUserId)
    }

    /// Stores each stream's messages (its own transaction and cursor) and tells the feed.
    private func store(_ answer: MessagesAnswer, _ tag: UUID) async throws {
        let receivedAt = Timestamp.string(now())
        // A stream may come with messages and its new cursor, or with a new cursor only.
        for key in Set(answer.messages.keys).union(answer.cursors.keys).union(answer.historyStarts.keys).union(answer.inChat.keys).sorted() {
            let list = answer.messages[key] ?? []
            guard let userID = Int64(key), let account = role(of: userID) else {
                if !list.isEmpty {
                    counters.unknownStreamsIgnored += 1
                    log.warning("ignoring \(list.count) message(s) for unknown user id \(key.debugDescription)")
                }
                continue
            }
            let outcome: Store.AppliedBatch
            do {
                let starts = (answer.historyStarts[key] ?? []).map {
                    HistoryStart(chatId: $0.chatId, upstreamChat: $0.upstreamChat, position: $0.token)
                }
                outcome = try await store.applyBatch(list, to: account, receivedAt: receivedAt, cursor: answer.cursors[key],
                                                     unread: deliveries.unreadCounting(for: account, declared: answer.delivery),
                                                     chats: ChatChanges(historyStarts: starts, readElsewhere: answer.readElsewhere[key] ?? [],
                                                                        membership: (answer.inChat[key] ?? [:]).mapValues { $0 ? .join : .leave },
                                                                        counts: answer.notificationCounts[key] ?? [:]))
            } catch {
                throw CycleFailure(error)
            }
            let fresh = outcome.fresh
            // The store says what is in use once the batch is in; a store that does not is asked.
            let usage: StorageUsage
            if let stored = outcome.usage { usage = stored } else { usage = await store.storageUsage() }
            if !outcome.changed.isEmpty || !outcome.removed.isEmpty {
                emit(.messagesChanged(account: account, changed: outcome.changed, removed: outcome.removed))
            }
            if !outcome.read.isEmpty { emit(.chatsRead(account: account, chatIds: outcome.read)) }
            if !outcome.membershipChanged.isEmpty {
                emit(.chatsChanged(account: account, chats: outcome.chats.filter { outcome.membershipChanged.contains($0.id) }))
            }
            counters.messagesStored[account.description, default: 0] += fresh.count
            // A batch committed for a cycle that went stale meanwhile (a stop, the grace ending, the
            // network going) is stored all the same, so every tab is told, silently: nobody asked
            // to hear of it now, and a tab that missed it would have a hole until it reloads.
            guard isCurrent(tag) else {
                if !fresh.isEmpty { emit(.messages(account: account, messages: fresh, delivery: .silent, usage: usage, chats: outcome.chats)) }
                throw CycleFailure.stale
            }
            for group in deliveries.grouped(fresh, of: account, declared: answer.delivery) {
                emit(.messages(account: account, messages: group.messages, delivery: group.delivery, usage: usage, chats: outcome.chats))
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

    // MARK: Problems and status

    func raise(_ problem: EngineProblem) {
        if !problemBoard.problems.contains(problem) { log.info("problem: \(problem.kind.rawValue): \(problem.debug)") }
        problemBoard.raise(problem).forEach(emit)
    }

    private func clear(_ kind: EngineProblem.Kind) {
        problemBoard.clear(kind).forEach(emit)
    }

    /// Changes the status; the page hears of what is worth saying (`StatusBoard`).
    private func update(successIsNews: Bool = false, _ change: (inout ConnectionStatus) -> Void) {
        let activeCycles = tag == nil ? 0 : 1
        if let announced = statusBoard.change(successIsNews: successIsNews, { change(&$0); $0.activeCycles = activeCycles }) {
            emit(.connection(announced))
        }
    }

}
