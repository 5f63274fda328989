import Engine
import Foundation
import Synchronization
import Upstream

/// An upstream in memory. Every call waits until the test answers it (or an automatic answer
/// applies), so a test decides exactly when and how each request ends.
final class FakeUpstream: UpstreamAPI, Sendable {
    enum Kind: Sendable, Equatable {
        case session, lastMessageInfo, messages, purchase
    }

    /// One call in flight.
    final class Call: Sendable {
        let id: Int
        let kind: Kind
        let token: String
        let cursors: StreamCursors?
        /// What a `messages` call asked the server to hold it for.
        let wait: PollWait?
        private struct State {
            var continuation: CheckedContinuation<any Sendable, any Error>?
            var cancelled = false
            var answered = false
            /// An answer given before the continuation was attached (a cancellation can be that early).
            var early: Result<any Sendable, UpstreamError>?
        }

        private let state = Mutex(State())

        init(id: Int, kind: Kind, token: String, cursors: StreamCursors?, wait: PollWait? = nil) {
            self.id = id
            self.kind = kind
            self.token = token
            self.cursors = cursors
            self.wait = wait
        }

        var isCancelled: Bool { state.withLock { $0.cancelled } }
        var isOpen: Bool { state.withLock { !$0.answered } }

        func attach(_ continuation: CheckedContinuation<any Sendable, any Error>) {
            let early = state.withLock { state -> Result<any Sendable, UpstreamError>? in
                if let early = state.early { return early }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(with: early.mapError { $0 as any Error }) }
        }

        func markCancelled() {
            state.withLock { $0.cancelled = true }
        }

        /// Answers the call; a no-op when it was answered already.
        func answer(_ result: Result<any Sendable, UpstreamError>) {
            let continuation = state.withLock { state -> CheckedContinuation<any Sendable, any Error>? in
                guard !state.answered else { return nil }
                state.answered = true
                if state.continuation == nil { state.early = result }
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(with: result.mapError { $0 as any Error })
        }

        func succeed(_ value: any Sendable) { answer(.success(value)) }
        func fail(_ error: UpstreamError) { answer(.failure(error)) }
    }

    struct Settings: Sendable {
        /// Answer sessions at once with this (nil: wait for the test).
        var session: UpstreamSession? = UpstreamSession(token: "t1", primaryUserId: 1, linkedUserId: 2, storageQuotaBytes: 1_000_000)
        /// Answer cursor syncs at once with this (nil: wait for the test).
        var lastMessageInfo: LastMessageInfo? = LastMessageInfo(primaryLastId: 0, linkedLastId: 0)
        /// Like URLSession: a cancelled call ends at once with `.cancelled`. False lets a test
        /// answer it later, as a response that raced the cancellation would arrive.
        var endCancelledCalls = true
        /// False: like a Matrix homeserver, the upstream has no newest ids (`lastMessageInfo` is nil).
        var tellsNewestIDs = true
    }

    let location = "fake://upstream"
    let settings: Mutex<Settings>
    private struct State {
        var calls: [Call] = []
        var nextID = 1
        var waiters: [(Kind, CheckedContinuation<Call, Never>)] = []
        /// Calls already handed to the test by `next(_:)`.
        var handedOut: Set<Int> = []
        /// The most `messages` calls ever open and not cancelled at the moment one was made.
        var mostConcurrentPolls = 0
        /// The highest id delivered per user id, so the automatic cursor sync is never behind
        /// what this fake already handed out (a server does not forget its messages).
        var delivered: [String: Int64] = [:]
    }

    private let state = Mutex(State())

    init(_ settings: Settings = Settings()) {
        self.settings = Mutex(settings)
    }

    /// All calls so far, in order.
    var calls: [Call] { state.withLock { $0.calls } }

    /// The most polls the engine ever had running at once (open and not cancelled).
    var mostConcurrentPolls: Int { state.withLock { $0.mostConcurrentPolls } }

    /// `messages` calls still open and not cancelled: the polls the engine is running.
    var livePolls: Int { calls.filter { $0.kind == .messages && $0.isOpen && !$0.isCancelled }.count }

    /// Open calls of `kind` that were not handed out by `next(_:)`, without waiting.
    func openCalls(_ kind: Kind) -> [Call] {
        calls.filter { $0.kind == kind && $0.isOpen }
    }

    /// The next open call of `kind`, waiting for one to arrive if needed.
    func next(_ kind: Kind) async -> Call {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Call? in
                if let call = state.calls.first(where: { $0.kind == kind && $0.isOpen && !state.handedOut.contains($0.id) }) {
                    state.handedOut.insert(call.id)
                    return call
                }
                state.waiters.append((kind, continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func perform<T: Sendable>(_ kind: Kind, token: String, cursors: StreamCursors? = nil, wait: PollWait? = nil,
                                      automatic: T? = nil) async throws(UpstreamError) -> T {
        if let automatic { return automatic }
        let endCancelled = settings.withLock { $0.endCancelledCalls }
        let call = state.withLock { state -> Call in
            defer { state.nextID += 1 }
            return Call(id: state.nextID, kind: kind, token: token, cursors: cursors, wait: wait)
        }
        // A call made by a task that is already cancelled ends at once, as URLSession's would.
        do {
            let value = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any Sendable, any Error>) in
                    call.attach(continuation)
                    let waiter = state.withLock { state -> CheckedContinuation<Call, Never>? in
                        state.calls.append(call)
                        if kind == .messages {
                            let live = state.calls.filter { $0.kind == .messages && $0.isOpen && !$0.isCancelled }.count
                            state.mostConcurrentPolls = max(state.mostConcurrentPolls, live)
                        }
                        guard let index = state.waiters.firstIndex(where: { $0.0 == kind }) else { return nil }
                        state.handedOut.insert(call.id)
                        return state.waiters.remove(at: index).1
                    }
                    waiter?.resume(returning: call)
                }
            } onCancel: {
                call.markCancelled()
                if endCancelled { call.fail(.cancelled) }
            }
            if let answer = value as? MessagesAnswer {
                state.withLock { state in
                    for (user, messages) in answer.messages {
                        state.delivered[user] = max(state.delivered[user] ?? 0, messages.map(\.id).max() ?? 0)
                    }
                }
            }
            return value as! T
        } catch let error as UpstreamError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    func createSession() async throws(UpstreamError) -> UpstreamSession {
        try await perform(.session, token: "", automatic: settings.withLock { $0.session })
    }

    func lastMessageInfo(token: String) async throws(UpstreamError) -> LastMessageInfo? {
        guard settings.withLock({ $0.tellsNewestIDs }) else { return nil }
        let (configured, linkedUser) = settings.withLock { ($0.lastMessageInfo, $0.session?.linkedUserId) }
        let automatic = configured.map { info in
            state.withLock { state in
                LastMessageInfo(primaryLastId: max(info.primaryLastId, state.delivered["1"] ?? 0),
                                linkedLastId: info.linkedLastId.map { last in max(last, linkedUser.flatMap { state.delivered[String($0)] } ?? 0) })
            }
        }
        return try await perform(.lastMessageInfo, token: token, automatic: automatic)
    }

    func messages(token: String, after cursors: StreamCursors, wait: PollWait) async throws(UpstreamError) -> MessagesAnswer {
        try await perform(.messages, token: token, cursors: cursors, wait: wait)
    }

    func purchaseStorage(token: String, bytes: Int64, idempotencyKey: String) async throws(UpstreamError) -> Int64 {
        try await perform(.purchase, token: token)
    }
}

/// Records what the engine emits and lets a test await an event.
final class EventRecorder: Sendable {
    private let state = Mutex<(events: [EngineEvent], waiters: [(predicate: @Sendable (EngineEvent) -> Bool, continuation: CheckedContinuation<EngineEvent, Never>)])>(([], []))

    var events: [EngineEvent] { state.withLock { $0.events } }

    func record(_ event: EngineEvent) {
        eventsForPredicates.withLock { $0.append(event) }
        let ready = state.withLock { state -> [CheckedContinuation<EngineEvent, Never>] in
            state.events.append(event)
            let matching = state.waiters.filter { $0.predicate(event) }.map(\.continuation)
            state.waiters.removeAll { $0.predicate(event) }
            return matching
        }
        ready.forEach { $0.resume(returning: event) }
    }

    /// Suspends until `condition` holds for all events recorded so far (checked at every new event).
    func waitUntil(_ condition: @escaping @Sendable ([EngineEvent]) -> Bool) async {
        let done = state.withLock { condition($0.events) }
        if done { return }
        _ = await next { [weak self] _ in
            guard let self else { return true }
            // Called under the lock with the event already appended.
            return condition(self.unsafeEvents)
        }
    }

    /// The events, read while the lock is already held by `record` (from a waiter's predicate).
    private var unsafeEvents: [EngineEvent] { eventsForPredicates.withLock { $0 } }
    private let eventsForPredicates = Mutex<[EngineEvent]>([])

    /// The first future event matching `predicate`.
    func next(where predicate: @escaping @Sendable (EngineEvent) -> Bool) async -> EngineEvent {
        await withCheckedContinuation { continuation in
            state.withLock { $0.waiters.append((predicate, continuation)) }
        }
    }

    /// Suspends until a connection event with `state` is emitted (or returns at once if the last connection event has it).
    func connectionState(_ wanted: ConnectionState) async -> ConnectionStatus {
        let event = await withCheckedContinuation { (continuation: CheckedContinuation<EngineEvent, Never>) in
            let current = state.withLock { state -> EngineEvent? in
                let last = state.events.last { if case .connection = $0 { true } else { false } }
                if case .connection(let status)? = last, status.state == wanted { return last }
                state.waiters.append(({ event in
                    if case .connection(let status) = event { return status.state == wanted }
                    return false
                }, continuation))
                return nil
            }
            if let current { continuation.resume(returning: current) }
        }
        guard case .connection(let status) = event else { fatalError("not a connection event") }
        return status
    }

    var messageEvents: [(account: String, ids: [Int64], notify: Bool, delivery: MessageDelivery)] {
        events.compactMap {
            if case let .messages(account, messages, delivery, _, _) = $0 { return (account.description, messages.map(\.id), delivery.notifies, delivery) }
            return nil
        }
    }
}

/// A test network whose state the test flips.
final class FakeNetwork: NetworkMonitor {
    private let state = Mutex<(online: Bool, subscribers: [AsyncStream<Bool>.Continuation])>((true, []))

    var isOnline: Bool { state.withLock { $0.online } }

    func transitions() -> AsyncStream<Bool> {
        AsyncStream { continuation in state.withLock { $0.subscribers.append(continuation) } }
    }

    func set(online: Bool) {
        let subscribers = state.withLock { state -> [AsyncStream<Bool>.Continuation] in
            guard state.online != online else { return [] }
            state.online = online
            return state.subscribers
        }
        subscribers.forEach { $0.yield(online) }
    }
}
