import Engine
import Foundation
import Store
import Synchronization
import TestSupport
import Testing
import Upstream

/// An upstream that takes messages in memory, keeps each key once (as the protocol and Matrix
/// do), and fails or hangs on request. Like the real ones, it keeps the deadline each send is
/// given: a request that hangs is cut then, on the test's clock.
private final class ChatInbox: MessageSending {
    enum Script: Sendable {
        /// Keep it and answer, as when nothing is scripted.
        case answer
        /// Refuse or fail before anything is stored.
        case fail(UpstreamError)
        /// Store the message, then lose the answer.
        case loseAnswer(UpstreamError)
        /// No answer: the request is cut at its deadline (`.timedOut`), or when it is cancelled.
        case hang
    }

    private struct State {
        var script: [Script] = []
        var calls: [OutgoingMessage] = []
        var deadlines: [Duration] = []
        var stored: [String: UpstreamMessage] = [:]
        var order: [String] = []
        var tokens: [String] = []
    }

    private let state = Mutex(State())
    private let clock: ManualClock
    /// Called with the message the upstream just kept, before it answers (an echo through sync).
    let onStored: @Sendable (UpstreamMessage) async -> Void

    init(clock: ManualClock, onStored: @escaping @Sendable (UpstreamMessage) async -> Void = { _ in }) {
        self.clock = clock
        self.onStored = onStored
    }

    func next(_ steps: Script...) { state.withLock { $0.script += steps } }
    var calls: [OutgoingMessage] { state.withLock { $0.calls } }
    var keysCalled: [String] { calls.map(\.key) }
    /// What the chat holds, in the order it was kept.
    var kept: [String] { state.withLock { state in state.order.map { state.stored[$0]!.text } } }
    var tokens: [String] { state.withLock { $0.tokens } }
    /// The deadline each call was given.
    var deadlines: [Duration] { state.withLock { $0.deadlines } }

    func send(_ message: OutgoingMessage, token: String, deadline: Duration) async throws(UpstreamError) -> UpstreamMessage {
        let step = state.withLock { state -> Script? in
            state.calls.append(message)
            state.deadlines.append(deadline)
            state.tokens.append(token)
            return state.script.isEmpty ? nil : state.script.removeFirst()
        }
        if case .fail(let error) = step { throw error }
        if case .hang = step {
            do {
                try await clock.sleep(for: deadline)
            } catch {
                throw .cancelled
            }
            throw .timedOut
        }
        let (kept, isNew) = state.withLock { state -> (UpstreamMessage, Bool) in
            if let earlier = state.stored[message.key] { return (earlier, false) }
            let kept = UpstreamMessage(id: Int64(state.order.count + 100), chatId: message.chatId, sender: UpstreamMessage.ownSender,
                                       text: message.text, sentAt: message.writtenAt, sendKey: message.key)
            state.stored[message.key] = kept
            state.order.append(message.key)
            return (kept, true)
        }
        if isNew { await onStored(kept) }
        if case .loseAnswer(let error) = step { throw error }
        return kept
    }
}

/// The real store, whose next `recordSent` can be held at a gate until the test lets it go.
private final class HeldRecording: OutboxStore {
    private let store: MessageStore
    private struct Gate {
        var holdNext = false
        var held: CheckedContinuation<Void, Never>?
        var arrival: CheckedContinuation<Void, Never>?
        var batches: [[String]] = []
    }
    private let gate = Mutex(Gate())

    init(_ store: MessageStore) {
        self.store = store
    }

    func holdNextRecording() { gate.withLock { $0.holdNext = true } }

    /// The texts of each `recordSent` call, in the order called.
    var batches: [[String]] { gate.withLock { $0.batches } }

    /// Suspends until a held `recordSent` is waiting at the gate.
    func waitUntilHeld() async {
        await withCheckedContinuation { continuation in
            let already = gate.withLock { gate -> Bool in
                if gate.held != nil { return true }
                gate.arrival = continuation
                return false
            }
            if already { continuation.resume() }
        }
    }

    func release() {
        gate.withLock { gate in
            defer { gate.held = nil }
            return gate.held
        }?.resume()
    }

    func recordSent(_ messages: [UpstreamMessage], to account: AccountRole, receivedAt: String) async throws(StoreError) -> AppliedBatch {
        if gate.withLock({ gate in
            defer { gate.holdNext = false }
            gate.batches.append(messages.map(\.text))
            return gate.holdNext
        }) {
            await withCheckedContinuation { continuation in
                gate.withLock { gate in
                    defer { gate.arrival = nil }
                    gate.held = continuation
                    return gate.arrival
                }?.resume()
            }
        }
        return try await store.recordSent(messages, to: account, receivedAt: receivedAt)
    }

    func enqueue(_ text: String, to chat: Int64, of account: AccountRole, requestKey: String, upstreamKey: String,
                 createdAt: String, inThreadOf thread: Int64?) async throws(StoreError) -> OutboxAdmission {
        try await store.enqueue(text, to: chat, of: account, requestKey: requestKey, upstreamKey: upstreamKey, createdAt: createdAt, inThreadOf: thread)
    }

    func outbox(of account: AccountRole) async throws(StoreError) -> [OutboxEntry] { try await store.outbox(of: account) }

    func nextToSend(of account: AccountRole, limit: Int) async throws(StoreError) -> [(entry: OutboxEntry, upstreamChat: String?)] {
        try await store.nextToSend(of: account, limit: limit)
    }

    func setOutboxState(_ id: Int64, to state: OutboxState, refusal: SendRefusal?, endingATry: Bool) async throws(StoreError) -> OutboxEntry? {
        try await store.setOutboxState(id, to: state, refusal: refusal, endingATry: endingATry)
    }

    func discardOutbox(_ id: Int64) async throws(StoreError) -> OutboxRemoval { try await store.discardOutbox(id) }

    func enqueueReaction(_ key: String, adding: Bool, to messageID: Int64, in chat: Int64, of account: AccountRole, behindUnsent: Bool,
                         upstreamKey: String, createdAt: String) async throws(StoreError) -> ReactionAdmission {
        try await store.enqueueReaction(key, adding: adding, to: messageID, in: chat, of: account, behindUnsent: behindUnsent,
                                        upstreamKey: upstreamKey, createdAt: createdAt)
    }
}

/// The real store, whose next read of the line (`nextToSend`) can be held at a gate after the
/// store answered and before the sender has the answer: the moment a Delete can slip in.
private final class HeldLineRead: OutboxStore {
    private let store: MessageStore
    private struct Gate {
        var holdNext = false
        var held: CheckedContinuation<Void, Never>?
        var arrival: CheckedContinuation<Void, Never>?
    }
    private let gate = Mutex(Gate())

    init(_ store: MessageStore) {
        self.store = store
    }

    func holdNextRead() { gate.withLock { $0.holdNext = true } }

    /// Suspends until a held read is waiting at the gate.
    func waitUntilHeld() async {
        await withCheckedContinuation { continuation in
            let already = gate.withLock { gate -> Bool in
                if gate.held != nil { return true }
                gate.arrival = continuation
                return false
            }
            if already { continuation.resume() }
        }
    }

    func release() {
        gate.withLock { gate in
            defer { gate.held = nil }
            return gate.held
        }?.resume()
    }

    func nextToSend(of account: AccountRole, limit: Int) async throws(StoreError) -> [(entry: OutboxEntry, upstreamChat: String?)] {
        let read = try await store.nextToSend(of: account, limit: limit)
        if gate.withLock({ gate in
            defer { gate.holdNext = false }
            return gate.holdNext
        }) {
            await withCheckedContinuation { continuation in
                gate.withLock { gate in
                    defer { gate.arrival = nil }
                    gate.held = continuation
                    return gate.arrival
                }?.resume()
            }
        }
        return read
    }

    func recordSent(_ messages: [UpstreamMessage], to account: AccountRole, receivedAt: String) async throws(StoreError) -> AppliedBatch {
        try await store.recordSent(messages, to: account, receivedAt: receivedAt)
    }

    func enqueue(_ text: String, to chat: Int64, of account: AccountRole, requestKey: String, upstreamKey: String,
                 createdAt: String, inThreadOf thread: Int64?) async throws(StoreError) -> OutboxAdmission {
        try await store.enqueue(text, to: chat, of: account, requestKey: requestKey, upstreamKey: upstreamKey, createdAt: createdAt, inThreadOf: thread)
    }

    func outbox(of account: AccountRole) async throws(StoreError) -> [OutboxEntry] { try await store.outbox(of: account) }

    func setOutboxState(_ id: Int64, to state: OutboxState, refusal: SendRefusal?, endingATry: Bool) async throws(StoreError) -> OutboxEntry? {
        try await store.setOutboxState(id, to: state, refusal: refusal, endingATry: endingATry)
    }

    func discardOutbox(_ id: Int64) async throws(StoreError) -> OutboxRemoval { try await store.discardOutbox(id) }

    func enqueueReaction(_ key: String, adding: Bool, to messageID: Int64, in chat: Int64, of account: AccountRole, behindUnsent: Bool,
                         upstreamKey: String, createdAt: String) async throws(StoreError) -> ReactionAdmission {
        try await store.enqueueReaction(key, adding: adding, to: messageID, in: chat, of: account, behindUnsent: behindUnsent,
                                        upstreamKey: upstreamKey, createdAt: createdAt)
    }
}

/// The outbox sender performing `SendPolicy` against a real store, in virtual time.
@Suite("Outbox sender")
struct OutboxSenderTests {
    let clock = ManualClock()
    let store: MessageStore

    init() throws {
        store = try MessageStore(location: .memory)
    }

    /// Chats 1 and 2 of the primary account (user 42), from messages of someone else.
    private func chats() async throws {
        try await store.setAccountIDs(AccountIDs(primaryUserId: 42, linkedUserId: nil))
        _ = try await store.apply([UpstreamMessage(id: 1, chatId: 1, sender: "ann", text: "hi", sentAt: "2026-12-03T08:00:00.000Z"),
                                   UpstreamMessage(id: 2, chatId: 2, sender: "bob", text: "yo", sentAt: "2026-12-03T08:00:00.000Z")],
                                  to: .primary, receivedAt: "2026-12-03T08:00:00.000Z", cursor: "2")
    }

    private struct Running {
        let sender: OutboxSender
        var events: AsyncStream<EngineEvent>.Iterator
        let task: Task<Void, Never>
    }

    private func start(_ inbox: ChatInbox, live: @escaping @Sendable () -> Bool = { true }, policy: SendPolicy = SendPolicy(backoff: Backoff(base: .seconds(1), cap: .seconds(8))),
                       store: (any OutboxStore)? = nil, signedIn: @escaping @Sendable () -> Int64 = { 42 }) -> Running {
        let (events, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        let sender = OutboxSender(store: store ?? self.store, upstream: inbox, policy: policy, environment: EngineEnvironment(clock: clock),
                                  liveSession: { live() ? SendSession(token: "token", userId: signedIn()) : nil },
                                  emit: { sink.yield($0) })
        return Running(sender: sender, events: events.makeAsyncIterator(), task: Task { await sender.run() })
    }

    /// Waits for the events up to the one `until` accepts; what came, in order.
    @discardableResult
    private func events(of running: inout Running, until done: (EngineEvent) -> Bool) async -> [EngineEvent] {
        var seen: [EngineEvent] = []
        while let event = await running.events.next() {
            seen.append(event)
            if done(event) { break }
        }
        return seen
    }

    /// An entry's state changed to `state` (after its `attempts`-th try, when given).
    private func became(_ state: OutboxState, afterTry attempts: Int? = nil) -> (EngineEvent) -> Bool {
        { event in
            guard case .outbox(let entry, _) = event else { return false }
            return entry.state == state && (attempts == nil || entry.attempts == attempts)
        }
    }

    private func left(_ count: Int) -> (EngineEvent) -> Bool {
        var sent = 0
        return { event in
            if case .outboxLeft = event { sent += 1 }
            return sent == count
        }
    }

    private func write(_ running: Running, _ text: String, chat: Int64 = 1, key: String? = nil) async throws -> OutboxEntry {
        guard case .queued(let entry) = try await running.sender.write(text, to: chat, requestKey: key ?? text) else {
            Issue.record("not queued")
            throw CancellationError()
        }
        return entry
    }

    private func storedTexts(chat: Int64 = 1) async throws -> [String] {
        try await store.messages(of: .primary, chat: chat, limit: 100).messages.reversed().map(\.text)
    }

    @Test func messagesGoOneAtATimeOldestFirstEachUnderItsOwnKeyAndLeaveTheOutbox() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        var running = start(inbox)
        defer { running.task.cancel() }
        let first = try await write(running, "one")
        let second = try await write(running, "two", chat: 2)
        let third = try await write(running, "three")
        await events(of: &running, until: left(3))
        #expect(inbox.kept == ["one", "two", "three"])
        #expect(inbox.keysCalled == [first.upstreamKey, second.upstreamKey, third.upstreamKey])
        #expect(Set(inbox.keysCalled).count == 3)
        #expect(inbox.calls.allSatisfy { $0.userId == 42 }, "as the account's user")
        #expect(try await store.outbox().isEmpty)
        #expect(try await storedTexts() == ["hi", "one", "three"])
        #expect(try await storedTexts(chat: 2) == ["yo", "two"])
        #expect(try await store.chats(of: .primary).allSatisfy { $0.unread == 0 }, "what the person wrote is never unread")
    }

    @Test(.timeLimit(.minutes(1))) func whatOneReadOfTheLineSentIsStoredTogetherWhileItsLastGoes() async throws {
        try await chats()
        // All in the line before the sender's first look, so its first read takes them together.
        var written: [OutboxEntry] = []
        for text in ["one", "two", "three", "four"] {
            guard case .queued(let entry) = try await store.enqueue(text, to: 1, of: .primary, requestKey: text, upstreamKey: "lp-\(text)",
                                                                    createdAt: "2026-12-03T08:00:00.000Z") else { return }
            written.append(entry)
        }
        let inbox = ChatInbox(clock: clock)
        inbox.next(.answer, .answer, .answer, .hang)  // the last stays on its way: all before it were answered
        let gated = HeldRecording(store)
        gated.holdNextRecording()
        var running = start(inbox, store: gated)
        defer { running.task.cancel() }
        await gated.waitUntilHeld()
        await events(of: &running, until: { event in
            guard case .outbox(let entry, _) = event else { return false }
            return entry.id == written[3].id && entry.state == .sending
        })
        #expect(inbox.kept == ["one", "two", "three"], "none waited for a store")
        #expect(try await store.outbox().map(\.text) == ["one", "two", "three", "four"], "each in the outbox until stored")
        #expect(await running.sender.entriesBeingSent == Set(written.map(\.id)), "each sending to the page")
        #expect(try await running.sender.discard(written[0].id) == .sending)
        gated.release()
        await events(of: &running, until: left(3))
        #expect(gated.batches == [["one", "two", "three"]], "one transaction for the line, begun as its last went")
        #expect(try await store.outbox().map(\.text) == ["four"])
        #expect(try await storedTexts() == ["hi", "one", "two", "three"])
        #expect(await running.sender.entriesBeingSent == [written[3].id])
    }

    @Test(.timeLimit(.minutes(1))) func whatWasSentBeforeALostAnswerIsStoredBeforeTheBackoffIsWaitedOut() async throws {
        try await chats()
        for text in ["one", "two", "three"] {
            guard case .queued = try await store.enqueue(text, to: 1, of: .primary, requestKey: text, upstreamKey: "lp-\(text)",
                                                         createdAt: "2026-12-03T08:00:00.000Z") else { return }
        }
        let inbox = ChatInbox(clock: clock)
        // The second's answer is lost with the third still in the line: the first waits for no more.
        inbox.next(.answer, .loseAnswer(.unreachable("connection reset")))
        var running = start(inbox)
        defer { running.task.cancel() }
        await events(of: &running, until: left(1))
        await clock.waitForSleepers(1)
        #expect(try await storedTexts() == ["hi", "one"], "stored with the clock still at the start of the backoff")
        #expect(try await store.outbox().map(\.text) == ["two", "three"])
        #expect(await running.sender.entriesBeingSent.isEmpty)
    }

    @Test func aLostAnswerGoesAgainUnderTheSameKeyAfterABackoffAndTheChatKeepsItOnce() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        inbox.next(.loseAnswer(.unreachable("connection reset")))
        var running = start(inbox)
        defer { running.task.cancel() }
        let entry = try await write(running, "hello")
        await events(of: &running, until: became(.queued, afterTry: 1))
        await clock.waitForSleepers(1)
        let wait = try #require(clock.nextDeadline)
        #expect(wait <= .seconds(1), "a full-jitter draw within the first ceiling")
        #expect(try await store.outbox().map(\.state) == [.queued], "no answer is not a failure")
        clock.advance(by: wait)
        await events(of: &running, until: left(1))
        #expect(inbox.keysCalled == [entry.upstreamKey, entry.upstreamKey])
        #expect(inbox.kept == ["hello"])
        #expect(try await storedTexts() == ["hi", "hello"])
    }

    @Test func eachRequestCarriesTheSendersDeadlineAndOneCutThereGoesAgainUnderItsKey() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        inbox.next(.hang)
        var running = start(inbox, policy: SendPolicy(backoff: Backoff(base: .seconds(1), cap: .seconds(8)), deadline: .seconds(20)))
        defer { running.task.cancel() }
        let entry = try await write(running, "slow")
        await events(of: &running, until: became(.sending, afterTry: 1))
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == .seconds(20), "the request's own deadline, not the sync's")
        clock.advance(by: .seconds(20))
        await events(of: &running, until: became(.queued, afterTry: 1))
        await clock.waitForSleepers(1)
        clock.advance(by: clock.nextDeadline ?? .zero)
        await events(of: &running, until: left(1))
        #expect(inbox.keysCalled == [entry.upstreamKey, entry.upstreamKey])
        #expect(inbox.kept == ["slow"])
        #expect(inbox.deadlines == [.seconds(20), .seconds(20)], "every try under the sender's deadline")
    }

    @Test func whileSyncingIsNotLiveEntriesStayQueuedAndSyncingGoingLiveSendsThemAtOnce() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        let live = Mutex(false)
        var running = start(inbox, live: { live.withLock { $0 } })
        defer { running.task.cancel() }
        for text in ["a", "b", "c", "d", "e"] { _ = try await write(running, text) }
        await clock.waitForSleepers(1)
        #expect(inbox.calls.isEmpty)
        #expect(try await store.outbox().map(\.state) == Array(repeating: .queued, count: 5))
        live.withLock { $0 = true }
        await running.sender.wake(.syncing)
        await events(of: &running, until: left(5))
        #expect(inbox.kept == ["a", "b", "c", "d", "e"], "in the order written, without the clock moving")
    }

    @Test func aNewMessageDoesNotCutABackoffShortButSyncingComingBackDoes() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        inbox.next(.fail(.unreachable("refused")), .fail(.unreachable("refused")), .fail(.unreachable("refused")))
        var running = start(inbox, policy: SendPolicy(backoff: Backoff(base: .seconds(8), cap: .seconds(8))))
        defer { running.task.cancel() }
        _ = try await write(running, "first")
        await events(of: &running, until: became(.queued, afterTry: 1))
        await clock.waitForSleepers(1)
        let backoff = clock.nextDeadline
        _ = try await write(running, "second")
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == backoff, "still the same backoff")
        #expect(inbox.calls.count == 1)
        await running.sender.wake(.syncing)
        await events(of: &running, until: became(.queued, afterTry: 2))
        #expect(inbox.calls.count == 2, "tried again at once, without the clock moving")
    }

    @Test func aRefusalFailsTheEntryAndEachTryAgainIsOneRealTry() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        let forbidden = SendRefusal(.forbidden, detail: "not allowed here")
        inbox.next(.fail(.refused(forbidden)), .fail(.refused(forbidden)))
        var running = start(inbox)
        defer { running.task.cancel() }
        let entry = try await write(running, "hey")
        let seen = await events(of: &running, until: { event in
            if case .outbox(let changed, _) = event { return changed.state == .failed }
            return false
        })
        guard case .outbox(let failed, _) = seen.last else { return }
        #expect(failed.failure == forbidden)
        #expect(try await store.outbox().map(\.state) == [.failed])
        #expect(await running.sender.tryAgain(entry.id) == .refused(forbidden))
        #expect(inbox.calls.count == 2, "one real try")
        #expect(await running.sender.tryAgain(entry.id) == .sent)
        #expect(inbox.calls.count == 3, "and another")
        #expect(inbox.keysCalled == Array(repeating: entry.upstreamKey, count: 3))
        #expect(try await store.outbox().isEmpty)
        #expect(await running.sender.tryAgain(entry.id) == .notFailed)
    }

    @Test func aRateLimitIsWaitedOutWhateverWakesTheSender() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        inbox.next(.fail(.rateLimited(retryAfter: .seconds(9))))
        var running = start(inbox)
        defer { running.task.cancel() }
        _ = try await write(running, "easy")
        await events(of: &running, until: became(.queued, afterTry: 1))
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == .seconds(9))
        await running.sender.wake(.syncing)
        _ = try await write(running, "there")
        #expect(clock.nextDeadline == .seconds(9))
        #expect(inbox.calls.count == 1)
        clock.advance(by: .seconds(9))
        await events(of: &running, until: left(2))
        #expect(inbox.kept == ["easy", "there"])
    }

    @Test func whatWasBeingSentWhenTheProcessStoppedGoesAgainFirstUnderItsKey() async throws {
        try await chats()
        // Still in the outbox, as a send cut short by the process stopping leaves it.
        guard case .queued = try await store.enqueue("in flight", to: 1, of: .primary, requestKey: "r", upstreamKey: "lp-kept",
                                                     createdAt: "2026-12-03T08:00:00.000Z") else { return }
        let inbox = ChatInbox(clock: clock)
        var running = start(inbox)
        defer { running.task.cancel() }
        await events(of: &running, until: left(1))
        #expect(inbox.keysCalled == ["lp-kept"])
        #expect(try await storedTexts() == ["hi", "in flight"])
    }

    @Test func anEchoThatComesBeforeTheAnswerShowsTheMessageOnce() async throws {
        try await chats()
        let store = self.store
        // The sync brings the message back (with its key) before the send's answer arrives.
        let inbox = ChatInbox(clock: clock, onStored: { echo in
            _ = try? await store.apply([echo], to: .primary, receivedAt: "2026-12-03T08:00:01.000Z", cursor: String(echo.id))
        })
        var running = start(inbox)
        defer { running.task.cancel() }
        _ = try await write(running, "once")
        await events(of: &running, until: left(1))
        #expect(try await storedTexts() == ["hi", "once"])
        #expect(try await store.outbox().isEmpty)
    }

    @Test func aMessageBeingSentCannotBeDeletedButAQueuedOneCan() async throws {
        try await chats()
        // Both written before the sender's first look: the one behind is in the line it read.
        guard case .queued(let sending) = try await store.enqueue("on its way", to: 1, of: .primary, requestKey: "a", upstreamKey: "lp-a",
                                                                  createdAt: "2026-12-03T08:00:00.000Z"),
              case .queued(let waiting) = try await store.enqueue("behind it", to: 1, of: .primary, requestKey: "b", upstreamKey: "lp-b",
                                                                  createdAt: "2026-12-03T08:00:00.000Z") else { return }
        let inbox = ChatInbox(clock: clock)
        inbox.next(.hang)
        var running = start(inbox)
        defer { running.task.cancel() }
        await events(of: &running, until: became(.sending, afterTry: 1))
        #expect(try await running.sender.discard(sending.id) == .sending)
        guard case .removed = try await running.sender.discard(waiting.id) else {
            Issue.record("a queued message is deleted")
            return
        }
        await clock.waitForSleepers(1)
        clock.advance(by: clock.nextDeadline ?? .zero)  // the deadline: no answer
        await events(of: &running, until: became(.queued, afterTry: 1))
        await clock.waitForSleepers(1)
        clock.advance(by: clock.nextDeadline ?? .zero)  // the backoff
        await events(of: &running, until: left(1))
        #expect(inbox.kept == ["on its way"], "the deleted one never went")
    }

    @Test func aMessageWhoseAnswerWasLostMayHaveArrivedSoItIsNotDeletedButGoesAgainOnce() async throws {
        try await chats()
        let inbox = ChatInbox(clock: clock)
        inbox.next(.loseAnswer(.unreachable("connection reset")))
        var running = start(inbox)
        defer { running.task.cancel() }
        let entry = try await write(running, "maybe there")
        await events(of: &running, until: became(.queued, afterTry: 1))
        #expect(inbox.kept == ["maybe there"], "the upstream has it; only its answer was lost")
        #expect(try await running.sender.discard(entry.id) == .sending, "a 204 would promise it was never sent")
        await clock.waitForSleepers(1)
        clock.advance(by: clock.nextDeadline ?? .zero)
        await events(of: &running, until: left(1))
        #expect(inbox.kept == ["maybe there"] && inbox.keysCalled == [entry.upstreamKey, entry.upstreamKey], "kept once, under its key")
        #expect(try await running.sender.discard(entry.id) == .notFound)
    }

    @Test func aMessageAnEarlierProcessTriedIsNotDeletedButOneNeverTriedOrRefusedForGoodIs() async throws {
        try await chats()
        guard case .queued(let tried) = try await store.enqueue("tried before", to: 1, of: .primary, requestKey: "a", upstreamKey: "lp-a",
                                                                createdAt: "2026-12-03T08:00:00.000Z"),
              case .queued(let untried) = try await store.enqueue("never tried", to: 1, of: .primary, requestKey: "b", upstreamKey: "lp-b",
                                                                  createdAt: "2026-12-03T08:00:00.000Z"),
              case .queued(let refused) = try await store.enqueue("refused", to: 1, of: .primary, requestKey: "c", upstreamKey: "lp-c",
                                                                  createdAt: "2026-12-03T08:00:00.000Z") else { return }
        try await store.setOutboxState(tried.id, to: .queued, endingATry: true)
        try await store.setOutboxState(refused.id, to: .failed, refusal: SendRefusal(.forbidden, detail: "no"), endingATry: true)
        // Not live: the sender sends nothing, so only what the store says of earlier tries decides.
        let running = start(ChatInbox(clock: clock), live: { false })
        defer { running.task.cancel() }
        #expect(try await running.sender.discard(tried.id) == .sending, "an earlier try may have arrived")
        guard case .removed = try await running.sender.discard(untried.id), case .removed = try await running.sender.discard(refused.id) else {
            Issue.record("a message never tried, or refused for good, is the person's to delete")
            return
        }
    }

    @Test(.timeLimit(.minutes(1))) func aDeleteWhileTheSenderReadsItsLineMeansTheMessageIsNeverSent() async throws {
        try await chats()
        let gated = HeldLineRead(store)
        gated.holdNextRead()
        guard case .queued(let doomed) = try await store.enqueue("deleted before it went", to: 1, of: .primary, requestKey: "a", upstreamKey: "lp-a",
                                                                createdAt: "2026-12-03T08:00:00.000Z") else { return }
        let inbox = ChatInbox(clock: clock)
        var running = start(inbox, store: gated)
        defer { running.task.cancel() }
        // The store has read the line (the doomed entry in it); the sender has not seen it yet.
        await gated.waitUntilHeld()
        guard case .removed = try await running.sender.discard(doomed.id) else {
            Issue.record("a queued message is deleted")
            return
        }
        gated.release()
        _ = try await write(running, "written after")
        await events(of: &running, until: left(2))
        #expect(inbox.kept == ["written after"], "204 means never sent: the deleted one did not go")
        #expect(try await store.outbox(of: .primary).isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func aLineReadBeforeAnotherUserSignedInIsNeverSentAsThem() async throws {
        try await chats()
        let gated = HeldLineRead(store)
        gated.holdNextRead()
        _ = try await store.enqueue("written by 42", to: 1, of: .primary, requestKey: "a", upstreamKey: "lp-a", createdAt: "2026-12-03T08:00:00.000Z")
        let user = Mutex<Int64>(42)
        let inbox = ChatInbox(clock: clock)
        let running = start(inbox, store: gated, signedIn: { user.withLock { $0 } })
        defer { running.task.cancel() }
        await gated.waitUntilHeld()  // the line holds 42's entry
        user.withLock { $0 = 43 }     // and now 43 holds the account
        gated.release()
        await clock.waitForSleepers(1)  // the sender waits instead of sending
        #expect(inbox.calls.isEmpty, "not a byte sent as a user who did not write it")
    }
}
