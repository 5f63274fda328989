import Foundation
import Logging
import Store
import Upstream

/// What the sender needs of the local copy (`MessageStore` is it).
public protocol OutboxStore: Sendable {
    func enqueue(_ text: String, to chat: Int64, of account: AccountRole, requestKey: String, upstreamKey: String,
                 createdAt: String, inThreadOf thread: Int64?) async throws(StoreError) -> OutboxAdmission
    func outbox(of account: AccountRole) async throws(StoreError) -> [OutboxEntry]
    func nextToSend(of account: AccountRole, limit: Int) async throws(StoreError) -> [(entry: OutboxEntry, upstreamChat: String?)]
    func setOutboxState(_ id: Int64, to state: OutboxState, refusal: SendRefusal?, endingATry: Bool) async throws(StoreError) -> OutboxEntry?
    func discardOutbox(_ id: Int64) async throws(StoreError) -> OutboxRemoval
    func recordSent(_ messages: [UpstreamMessage], to account: AccountRole, receivedAt: String) async throws(StoreError) -> AppliedBatch
    func enqueueReaction(_ key: String, adding: Bool, to messageID: Int64, in chat: Int64, of account: AccountRole, behindUnsent: Bool,
                         upstreamKey: String, createdAt: String) async throws(StoreError) -> ReactionAdmission
}

extension MessageStore: OutboxStore {}

/// Who the account is on the upstream while syncing is live: the token to send with and the
/// user id this project's protocol sends as.
public struct SendSession: Sendable, Equatable {
    public var token: String
    public var userId: Int64

    public init(token: String, userId: Int64) {
        self.token = token
        self.userId = userId
    }
}

/// What a Try again on a failed message came to.
public enum SendTryResult: Sendable, Equatable {
    /// The upstream has it now.
    case sent
    /// Refused again, for this reason.
    case refused(SendRefusal)
    /// Not sent yet: no answer came, or syncing is not live; it stays queued and goes by itself.
    case queued
    /// No failed message with that id (sent, deleted, or never there).
    case notFailed
}

/// Sends what the person wrote in one account's chats (CONTRACT section 11), apart from the sync
/// cycle: its own loop, one request at a time, oldest first, each under the key written into the
/// outbox before the first try. What to do next is `SendPolicy`'s; this actor performs it.
///
/// Nothing is lost and nothing is sent twice: an entry is in the store before it is sent, it
/// leaves in the transaction that stores the sent message (the answer, or its echo through sync
/// if that comes first), and a try whose answer did not come goes again under the same key.
///
/// The entry on its way is known here alone, not written into the store: a restart sends again
/// whatever is still in the outbox, under its key, so a mark in the file would change nothing
/// but cost a commit per message. This actor answers for it: it is `sending` to the page, and its
/// Delete is refused.
///
/// Requests go one at a time, but the store does not hold them up: sent messages are stored
/// behind the sends, together, while the last of the line read goes (or once a line's worth
/// waits, a try fails, or the loop is to wait). A crash in between leaves them in the outbox, and
/// the same key again is the same message upstream. Meanwhile their echoes usually come through
/// sync and take them out of the outbox in the sync's own commit, so a run of sends costs the
/// store little more than what it receives. The line is read a few dozen entries at a time,
/// leaving out the ones still being stored.
public actor OutboxSender {
    private let store: any OutboxStore
    private let upstream: any MessageSending
    private let account: AccountRole
    /// The session while syncing is live, else nil.
    private let liveSession: @Sendable () -> SendSession?
    private let environment: EngineEnvironment
    private let emit: @Sendable (EngineEvent) -> Void
    private var policy: SendPolicy
    private var random: any RandomNumberGenerator & Sendable
    /// The wait in progress, which a wake may end (as the policy says), and what it waits for.
    private var sleeper: Task<Void, Never>?
    private var waitingFor: SendPause?
    /// A wake that came while no wait was in progress: the next wait it would end is skipped.
    private var pendingWake: SendWake?
    /// The entry on its way now, if any.
    private var entryBeingSent: Int64?
    /// Sent entries whose storing has not ended yet.
    private var entriesStoring: Set<Int64> = []
    /// Sent messages waiting to be stored, in the order sent.
    private var toStore: [(sent: UpstreamMessage, entry: OutboxEntry)] = []
    /// Stores what `toStore` holds, all that waits in one transaction, until it is empty.
    private var storing: Task<Void, Never>?
    /// A sent message could not be stored: sending waits until the store takes writes again.
    private var storeFailing = false
    /// Entries whose Delete has begun: never put in the line, whatever a read that was under way
    /// meanwhile found. A Delete that answered `removed` means the entry is never sent.
    private var deleting: Set<Int64> = []
    /// Deleted entries whose row is gone: a read that starts after that cannot find them, so they
    /// leave `deleting` at the next read's start.
    private var deleted: Set<Int64> = []
    /// Entries a try of which got no answer that says the upstream did not take it
    /// (``SendPolicy/mayHaveArrived(after:)``), and, from before this process, every entry tried
    /// and kept: they may be in the chat already, so Delete refuses them until a try answers.
    private var answerUnknown: Set<Int64> = []
    /// The entries tried before this process started have been read into `answerUnknown`.
    private var knowsEarlierTries = false
    /// Entries a try of this process got a telling answer for (sent, or refused under their key),
    /// so an earlier process's try no longer leaves them unknown.
    private var answered: Set<Int64> = []
    /// The account's oldest queued entries as last read, sent in turn before the store is read again.
    private var line: [(entry: OutboxEntry, upstreamChat: String?)] = []
    /// How many entries one read of the line takes.
    static let lineLength = 64
    /// Try again's callers, by outbox id, told what the next try of that entry came to.
    private var tryWaiters: [Int64: Waiters<SendTryResult>] = [:]
    private let log = Logger("outbox")

    public init(store: any OutboxStore, upstream: any MessageSending, account: AccountRole = .primary, policy: SendPolicy = SendPolicy(),
                environment: EngineEnvironment = EngineEnvironment(), liveSession: @escaping @Sendable () -> SendSession?,
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

    /// Writes `text` into the outbox of `chat` under the page's `requestKey` (the same key again
    /// is the first answer), with a new key for the upstream, and wakes the loop.
    public func write(_ text: String, to chat: Int64, inThreadOf thread: Int64? = nil, requestKey: String) async throws(StoreError) -> OutboxAdmission {
        let now = environment.now()
        let admission = try await store.enqueue(text, to: chat, of: account, requestKey: requestKey, upstreamKey: SendKey.make(at: now, random: { random.next() }),
                                                createdAt: Timestamp.string(now), inThreadOf: thread)
        if case .queued(let entry) = admission {
            emit(.outbox(entry, requestKey: requestKey))
            wake(.written)
        }
        return admission
    }

    /// Writes into the outbox the reaction `key` to give to (`adding`) or take back from the
    /// message `messageID` of `chat`, and wakes the loop. Taking back a reaction whose entry has
    /// not gone yet deletes that entry instead (`already`: nothing is left to send); one on its
    /// way is taken back once it is there.
    public func react(_ key: String, adding: Bool, to messageID: Int64, in chat: Int64) async throws(StoreError) -> ReactionAdmission {
        var admission = try await enqueueReaction(key, adding: adding, to: messageID, in: chat, behindUnsent: false)
        if case .unsentReaction(let giving) = admission {
            switch try await discard(giving.id) {
            case .removed, .notFound: return .already
            case .sending: admission = try await enqueueReaction(key, adding: false, to: messageID, in: chat, behindUnsent: true)
            }
        }
        if case .queued(let entry) = admission {
            emit(.outbox(entry))
            wake(.written)
        }
        return admission
    }

    private func enqueueReaction(_ key: String, adding: Bool, to messageID: Int64, in chat: Int64,
                                 behindUnsent: Bool) async throws(StoreError) -> ReactionAdmission {
        let now = environment.now()
        return try await store.enqueueReaction(key, adding: adding, to: messageID, in: chat, of: account, behindUnsent: behindUnsent,
                                               upstreamKey: SendKey.make(at: now, random: { random.next() }), createdAt: Timestamp.string(now))
    }

    /// The entries on their way (sent, or sent and not yet stored): `sending` to the page, and
    /// not to be deleted.
    public var entriesBeingSent: Set<Int64> {
        entryBeingSent.map { entriesStoring.union([$0]) } ?? entriesStoring
    }

    /// Something the loop may wait for happened; whether it ends the wait in progress is the policy's.
    public func wake(_ reason: SendWake) {
        guard let sleeper, let waitingFor else {
            pendingWake = reason
            return
        }
        if policy.ends(waitingFor, by: reason) { sleeper.cancel() }
    }

    /// Puts a failed entry back in the line, wakes the loop and answers what its next try came to.
    public func tryAgain(_ id: Int64) async -> SendTryResult {
        let entry: OutboxEntry?
        do {
            guard try await store.outbox(of: account).contains(where: { $0.id == id && $0.state == .failed }) else { return .notFailed }
            entry = try await store.setOutboxState(id, to: .queued, refusal: nil, endingATry: false)
        } catch {
            log.warning("cannot put message \(id) back in the outbox: \(error)")
            return .notFailed
        }
        guard let entry else { return .notFailed }
        emit(.outbox(entry))
        line = []  // read again, so it goes in its place, the oldest first
        // Not live: it goes by itself once syncing is, and the person need not wait for that.
        guard liveSession() != nil else { return .queued }
        var waiters = tryWaiters[id] ?? Waiters()
        let waiterID = waiters.makeID()
        tryWaiters[id] = waiters
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(returning: .queued) }
                tryWaiters[id, default: Waiters()].add(continuation, id: waiterID)
                wake(.tryAgain)
            }
        } onCancel: {
            Task { await self.forgetTryWaiter(id, waiterID) }
        }
    }

    private func forgetTryWaiter(_ id: Int64, _ waiterID: UInt64) {
        tryWaiters[id]?.cancel(waiterID, returning: .queued)
    }

    /// Takes an entry out unsent (Delete); one being sent right now, or that may have arrived, stays.
    public func discard(_ id: Int64) async throws(StoreError) -> OutboxRemoval {
        if !knowsEarlierTries { try await readEarlierTries() }
        guard !entriesBeingSent.contains(id) else { return .sending }
        if answerUnknown.contains(id) {
            // Its echo may have come through the sync meanwhile and taken it out of the outbox.
            guard try await store.outbox(of: account).contains(where: { $0.id == id }) else {
                answerUnknown.remove(id)
                return .notFound
            }
            return .sending
        }
        line.removeAll { $0.entry.id == id }
        // From here the loop will not take it, even from a read of the line that is under way.
        deleting.insert(id)
        let removal: OutboxRemoval
        do {
            removal = try await store.discardOutbox(id)
        } catch {
            deleting.remove(id)
            throw error
        }
        guard case .removed(let entry) = removal else {
            deleting.remove(id)
            return removal
        }
        deleted.insert(id)
        emit(.outboxLeft(account: account, outboxId: entry.id, chatId: entry.chatId, sent: false))
        settle(id, .notFailed)
        return removal
    }

    /// An entry an earlier process tried and kept (a try that ended unsent is counted) may have
    /// arrived with one of those tries. A try cut by the process itself stopping is not counted,
    /// so such an entry reads as never tried: the one case Delete cannot tell.
    private func readEarlierTries() async throws(StoreError) {
        let tried = try await store.outbox(of: account).filter { $0.attempts > 0 && $0.state != .failed }.map(\.id)
        // A try of this process may have answered while the store was read: what it learnt holds.
        if !knowsEarlierTries { answerUnknown.formUnion(tried.filter { !answered.contains($0) }) }
        knowsEarlierTries = true
    }

    /// Sends until the task is cancelled, then lets what was sent be stored; what was on its way
    /// when the process stopped is still in the outbox and goes again, under its key.
    public func run() async {
        while !Task.isCancelled {
            let (action, session, upstreamChat) = await nextAction()
            switch action {
            case .send(let entry, let deadline):
                guard let session else { continue }
                await send(entry, to: upstreamChat, deadline: deadline, session: session)
            case .wait(let duration, let reason):
                await pause(duration, reason)
            }
        }
        storeWhatWasSent()
        await storing?.value
    }

    /// The policy's next step, and the session to send with (asked only when something waits).
    /// The entry it would send is `sending` from here, so a Delete in between cannot slip past.
    private func nextAction() async -> (SendPolicy.Action, SendSession?, upstreamChat: String?) {
        if line.isEmpty {
            storeWhatWasSent()
            do {
                if !storeFailing {
                    // What is being stored is still in the outbox until it is stored: read past it.
                    // (Only this loop adds to them, so what was being stored when it read is all.)
                    let beingStored = entriesStoring
                    deleting.subtract(deleted)
                    deleted = []
                    line = try await store.nextToSend(of: account, limit: Self.lineLength + beingStored.count)
                        .filter { !beingStored.contains($0.entry.id) && !deleting.contains($0.entry.id) }
                }
            } catch {
                log.warning("cannot read the outbox: \(error)")
                storeFailing = true
            }
        }
        if storeFailing {
            storeFailing = false
            line = []
            return (policy.storeFailed(), nil, nil)
        }
        guard let next = line.first else { return (policy.next(live: false, oldestQueued: nil), nil, nil) }
        entryBeingSent = next.entry.id
        var session = liveSession()
        if let live = session, live.userId != next.entry.ownerUserId {
            // Written by another user than the one signed in now: never sent as this one. The
            // line was read before the account changed; the next read leaves it behind.
            log.warning("message \(next.entry.id) was written by user \(next.entry.ownerUserId.map(String.init) ?? "unknown"), not \(live.userId): not sent")
            session = nil
            line = []
        }
        let action = policy.next(live: session != nil, oldestQueued: next.entry)
        if case .send = action {
            line.removeAll { $0.entry.id == next.entry.id }
            // If this is the last of the line, what was sent before it is stored while it goes.
            storeWhatWasSent()
        } else {
            entryBeingSent = nil
            storeWhatWasSent()
        }
        return (action, session, next.upstreamChat)
    }

    /// One try of `entry`, `sending` from now until its outcome is stored. The upstream cuts the
    /// request at `deadline` itself (its transport's timer), and no answer by then is a lost answer.
    private func send(_ entry: OutboxEntry, to upstreamChat: String?, deadline: Duration, session: SendSession) async {
        entryBeingSent = entry.id
        defer { entryBeingSent = nil }
        var sending = entry
        sending.state = .sending
        sending.attempts += 1  // this try counts from its start
        emit(.outbox(sending))
        var message = OutgoingMessage(userId: session.userId, chatId: entry.chatId, upstreamChat: upstreamChat, text: entry.text,
                                      key: entry.upstreamKey, writtenAt: entry.createdAt)
        switch entry.action {
        case .message: message.threadRoot = entry.threadRoot
        case .react(let target): message.action = .react(to: target)
        case .unreact(_, let reaction):
            guard let reaction = await reactionToTakeBack(entry, known: reaction) else {
                // Never given, or taken back already (in another client): nothing is left to send.
                await leaveUnsent(entry)
                return
            }
            message.action = .takeBack(reaction: reaction)
        }
        do throws(UpstreamError) {
            let sent = try await upstream.send(message, token: session.token, deadline: deadline)
            answered.insert(entry.id)
            answerUnknown.remove(entry.id)
            policy.sent()
            storeBehind(sent, for: sending)
        } catch {
            if error != .cancelled { log.info("message \(entry.id) (try \(sending.attempts)): \(error)") }
            if SendPolicy.mayHaveArrived(after: error) { answerUnknown.insert(entry.id) }
            line = []  // an entry not sent goes first again, in its place
            storeWhatWasSent()
            let outcome = policy.failed(error, jitter: Double(random.next() >> 11) / Double(UInt64(1) << 53))
            if case .refused = outcome {
                // Refused under its key: the upstream took none of its tries (one it had taken, the
                // same key would answer as sent). A message refused for good is the person's to delete.
                answerUnknown.remove(entry.id)
                answered.insert(entry.id)
            }
            await perform(outcome, for: sending)
        }
    }

    /// The event id of the reaction `entry` takes back. One given from here a moment ago may be
    /// sent and not yet stored: what was sent is stored first, and the entry read again.
    private func reactionToTakeBack(_ entry: OutboxEntry, known: String?) async -> String? {
        if let known { return known }
        while let pending = storing ?? (toStore.isEmpty ? nil : Task { await self.storeWhatWaits() }) {
            if storing == nil { storing = pending }
            await pending.value
        }
        guard let now = try? await store.outbox(of: account).first(where: { $0.id == entry.id }),
              case .unreact(_, let reaction) = now.action else { return nil }
        return reaction
    }

    /// An entry with nothing to send leaves the outbox as done.
    private func leaveUnsent(_ entry: OutboxEntry) async {
        do {
            guard case .removed = try await store.discardOutbox(entry.id) else { return }
            emit(.outboxLeft(account: account, outboxId: entry.id, chatId: entry.chatId, sent: true))
            settle(entry.id, .sent)
        } catch {
            log.warning("reaction \(entry.id) has nothing to take back, and cannot leave the outbox: \(error)")
            storeFailing = true
        }
    }

    /// Keeps what the upstream answered to be stored after the messages sent before it, which
    /// takes the entry out of the outbox; the next send does not wait for it. It is stored with
    /// the rest of its line, or as soon as a line's worth waits.
    private func storeBehind(_ sent: UpstreamMessage, for entry: OutboxEntry) {
        entriesStoring.insert(entry.id)
        toStore.append((sent, entry))
        storeWhatWasSent()
    }

    /// Whether what waits to be stored should go now rather than with more: the line is sent, a
    /// line's worth waits, or nothing is being sent.
    private var storingIsDue: Bool {
        !toStore.isEmpty && (line.isEmpty || toStore.count >= Self.lineLength || entryBeingSent == nil)
    }

    /// Starts storing what waits if that is due, unless a store is under way (which takes it
    /// next, in one transaction, if it is due by then).
    private func storeWhatWasSent() {
        guard storing == nil, storingIsDue else { return }
        storing = Task {
            await self.storeWhatWaits()
        }
    }

    private func storeWhatWaits() async {
        repeat {
            let batch = toStore
            toStore = []
            do {
                // On the shared pool, not on the thread the sends are read on (where the run may
                // be): the commit goes beside the next send instead of before its answer is read.
                let applied = try await withTaskExecutorPreference(globalConcurrentExecutor) { [store, account, environment] () async throws(StoreError) in
                    try await store.recordSent(batch.map(\.sent), to: account, receivedAt: Timestamp.string(environment.now()))
                }
                if let usage = applied.usage, !applied.fresh.isEmpty {
                    emit(.messages(account: account, messages: applied.fresh, delivery: .silent, usage: usage, chats: applied.chats))
                }
                // A reaction given or taken back changes the message it is on.
                if !applied.changed.isEmpty || !applied.removed.isEmpty {
                    emit(.messagesChanged(account: account, changed: applied.changed, removed: applied.removed))
                }
                for (_, entry) in batch {
                    emit(.outboxLeft(account: account, outboxId: entry.id, chatId: entry.chatId, sent: true))
                    settle(entry.id, .sent)
                }
            } catch {
                // The upstream has them: the same key again later answers the same message, and
                // storing it is tried then.
                for (_, entry) in batch {
                    log.warning("message \(entry.id) was sent but cannot be stored yet: \(error)")
                    if let queued = try? await store.setOutboxState(entry.id, to: .queued, refusal: nil, endingATry: true) { emit(.outbox(queued)) }
                    settle(entry.id, .queued)
                }
                storeFailing = true
            }
            entriesStoring.subtract(batch.map(\.entry.id))
        } while storingIsDue
        storing = nil
    }

    /// What a try that was not sent comes to.
    private func perform(_ outcome: SendPolicy.Failure, for entry: OutboxEntry) async {
        switch outcome {
        case .refused(let refusal):
            log.info("message \(entry.id) was refused for good: \(refusal.reason.rawValue) \(refusal.detail)")
            if let failed = try? await store.setOutboxState(entry.id, to: .failed, refusal: refusal, endingATry: true) { emit(.outbox(failed)) }
            settle(entry.id, .refused(refusal))
        case .retry(let wait, let reason):
            if let queued = try? await store.setOutboxState(entry.id, to: .queued, refusal: nil, endingATry: true) { emit(.outbox(queued)) }
            settle(entry.id, .queued)
            entryBeingSent = nil
            await pause(wait, reason)
        }
    }

    private func settle(_ id: Int64, _ result: SendTryResult) {
        guard var waiters = tryWaiters.removeValue(forKey: id) else { return }
        waiters.resumeAll(returning: result)
    }

    private func pause(_ duration: Duration, _ reason: SendPause) async {
        if let wake = pendingWake {
            pendingWake = nil
            if policy.ends(reason, by: wake) { return }
        }
        guard duration > .zero else { return }
        let clock = environment.clock
        let sleeper = Task<Void, Never> { try? await clock.sleep(for: duration) }
        (self.sleeper, waitingFor) = (sleeper, reason)
        // The run's own cancellation ends the wait too.
        await withTaskCancellationHandler { await sleeper.value } onCancel: { sleeper.cancel() }
        (self.sleeper, waitingFor) = (nil, nil)
    }
}
