import Engine
import Foundation
import Store
import Synchronization
import TestSupport
import Testing
import Upstream

/// A room that takes reactions and redactions of them, as a homeserver does: each under its
/// transaction id once, a reaction answered with its own event id. Its first send can be held
/// until the test lets it go: the moment the person takes back what is on its way.
private final class ReactionRoom: MessageSending {
    private struct State {
        var actions: [OutgoingMessage.Action] = []
        var holdFirst = true
        var held: CheckedContinuation<Void, Never>?
        var arrival: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    var actions: [OutgoingMessage.Action] { state.withLock { $0.actions } }

    /// Suspends until the first send is held.
    func waitUntilHeld() async {
        await withCheckedContinuation { continuation in
            let already = state.withLock { state -> Bool in
                if state.held != nil { return true }
                state.arrival = continuation
                return false
            }
            if already { continuation.resume() }
        }
    }

    func release() {
        state.withLock { state in
            state.holdFirst = false
            state.held?.resume()
            state.held = nil
        }
    }

    func send(_ message: OutgoingMessage, token: String, deadline: Duration) async throws(UpstreamError) -> UpstreamMessage {
        let number = state.withLock { state -> Int in
            state.actions.append(message.action)
            return state.actions.count
        }
        if number == 1 {
            await withCheckedContinuation { continuation in
                let hold = state.withLock { state -> Bool in
                    guard state.holdFirst else { return false }
                    state.held = continuation
                    state.arrival?.resume()
                    state.arrival = nil
                    return true
                }
                if !hold { continuation.resume() }
            }
        }
        var answer = UpstreamMessage(id: 0, chatId: message.chatId, sender: "@me:test", text: message.text, sentAt: message.writtenAt,
                                     eventId: "$event\(number)", sendKey: message.key)
        answer.byAccount = true
        switch message.action {
        case .message: break
        case .react(let target): answer.relation = .annotates(eventId: target)
        case .takeBack(let reaction): answer.relation = .redacts(eventId: reaction)
        }
        return answer
    }
}

@Suite("Sending reactions")
struct ReactionSendingTests {
    let store: MessageStore

    init() throws {
        store = try MessageStore(location: .memory)
    }

    /// Chat 1 holding bob's message `$m`; its stored id.
    private func aMessage() async throws -> Int64 {
        try await store.setAccountIDs(AccountIDs(primaryUserId: 42, linkedUserId: nil))
        _ = try await store.apply([UpstreamMessage(id: 0, chatId: 1, sender: "@bob:test", text: "lunch?", sentAt: "2026-12-06T08:00:00.000Z", eventId: "$m")],
                                  to: .primary, receivedAt: "2026-12-06T08:00:00.000Z", cursor: "s1")
        return try #require(try await store.messages(of: .primary).messages.first?.id)
    }

    private func sender(_ room: ReactionRoom, events sink: AsyncStream<EngineEvent>.Continuation) -> OutboxSender {
        OutboxSender(store: store, upstream: room, environment: EngineEnvironment(clock: ManualClock()),
                     liveSession: { SendSession(token: "token", userId: 42) }, emit: { sink.yield($0) })
    }

    @Test(.timeLimit(.minutes(1))) func takingBackAReactionOnItsWayRedactsItOnceItIsThereAndNothingIsLeft() async throws {
        let id = try await aMessage()
        let room = ReactionRoom()
        let (events, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        let sender = sender(room, events: sink)
        let task = Task { await sender.run() }
        defer { task.cancel() }
        guard case .queued = try await sender.react("👍", adding: true, to: id, in: 1) else { throw CancellationError() }
        await room.waitUntilHeld()
        // On its way: taking it back cannot delete it, so it goes after it.
        guard case .queued(let undo) = try await sender.react("👍", adding: false, to: id, in: 1) else {
            Issue.record("taking back what is on its way queues the redaction")
            throw CancellationError()
        }
        #expect(undo.action == .unreact(target: "$m", reaction: nil))
        room.release()
        var iterator = events.makeAsyncIterator()
        var left = 0
        while left < 2, let event = await iterator.next() {
            if case .outboxLeft = event { left += 1 }
        }
        #expect(room.actions == [.react(to: "$m"), .takeBack(reaction: "$event1")], "the reaction that went is the one taken back")
        #expect(try await store.outbox().isEmpty)
        #expect(try await store.messages(of: .primary).messages.first?.reactions == [])
    }

    @Test(.timeLimit(.minutes(1))) func takingBackAReactionThatHasNotGoneDeletesItAndNothingGoes() async throws {
        let id = try await aMessage()
        let room = ReactionRoom()
        room.release()
        let (_, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        // Not running: nothing is sent meanwhile.
        let sender = sender(room, events: sink)
        guard case .queued = try await sender.react("🎉", adding: true, to: id, in: 1) else { throw CancellationError() }
        #expect(try await sender.react("🎉", adding: false, to: id, in: 1) == .already)
        #expect(try await store.outbox().isEmpty)
        #expect(room.actions.isEmpty)
    }
}
