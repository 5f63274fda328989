import Engine
import Foundation
import Store
import Synchronization
import TestSupport
import Testing
import Upstream

/// One room's history in memory, served a page at a time backwards, with faults on request.
private final class RoomHistory: OlderHistory {
    private struct State {
        var faults: [UpstreamError] = []
        var calls: [String] = []
        var tokens: [String] = []
        var limits: [Int] = []
    }

    let room = "!room"
    let chatID: Int64 = 7
    let count: Int
    let pageSize: Int
    private let state = Mutex(State())

    /// How long the homeserver takes per event asked for, on `clock` (nil: no time at all).
    let costPerEvent: (clock: ManualClock, duration: Duration)?

    init(count: Int, pageSize: Int, costPerEvent: (clock: ManualClock, duration: Duration)? = nil) {
        self.count = count
        self.pageSize = pageSize
        self.costPerEvent = costPerEvent
    }

    func failNext(with errors: UpstreamError...) { state.withLock { $0.faults += errors } }
    var positionsAsked: [String] { state.withLock { $0.calls } }
    var tokensUsed: [String] { state.withLock { $0.tokens } }
    var limitsAsked: [Int] { state.withLock { $0.limits } }

    /// Message `n` (1 is the room's first).
    func message(_ number: Int) -> UpstreamMessage {
        UpstreamMessage(id: 0, chatId: chatID, sender: "@bob:test", text: "message \(number)",
                        sentAt: "2026-11-29T12:00:00.000Z", eventId: "$\(number)")
    }

    /// Positions are "before N": the page holds the messages below N, newest first.
    func olderHistory(token: String, before position: HistoryPosition, limit: Int) async throws(UpstreamError) -> OlderHistoryPage {
        let fault = state.withLock { state -> UpstreamError? in
            state.calls.append(position.token)
            state.limits.append(limit)
            state.tokens.append(token)
            return state.faults.isEmpty ? nil : state.faults.removeFirst()
        }
        if let fault { throw fault }
        if let (clock, duration) = costPerEvent { clock.advance(by: duration * limit) }
        let below = Int(position.token.dropFirst("before ".count))!
        let low = max(1, below - min(pageSize, limit))
        let messages = (low..<below).reversed().map(message)
        var next = position
        next.token = "before \(low)"
        return OlderHistoryPage(messages: messages, next: low == 1 ? nil : next)
    }
}

/// A homeserver that says when each page is asked for.
private struct SignallingHistory: OlderHistory {
    let room: RoomHistory
    let asked: AsyncStream<String>.Continuation

    func olderHistory(token: String, before position: HistoryPosition, limit: Int) async throws(UpstreamError) -> OlderHistoryPage {
        asked.yield(position.token)
        return try await room.olderHistory(token: token, before: position, limit: limit)
    }
}

/// The real store, whose first page of older history is stored only once the homeserver has been
/// asked for the page after it.
private final class StoreWaitingForTheNextRequest: HistoryStore {
    let store: MessageStore
    let nextAsked: @Sendable () async -> Void
    private let first = Mutex(true)

    init(_ store: MessageStore, nextAsked: @escaping @Sendable () async -> Void) {
        self.store = store
        self.nextAsked = nextAsked
    }

    func pendingHistory(of account: AccountRole) async throws(StoreError) -> [HistoryStart] { try await store.pendingHistory(of: account) }
    func historyProgress(of account: AccountRole) async throws(StoreError) -> HistoryProgress? { try await store.historyProgress(of: account) }
    func applyOlder(_ batch: [UpstreamMessage], to account: AccountRole, chat chatID: Int64, receivedAt: String,
                    next: String?) async throws(StoreError) -> AppliedBatch {
        if first.withLock({ let was = $0; $0 = false; return was }) { await nextAsked() }
        return try await store.applyOlder(batch, to: account, chat: chatID, receivedAt: receivedAt, next: next)
    }
}

/// The history fetcher performing `HistoryPolicy` against a real store, in virtual time.
@Suite("History fetcher")
struct HistoryFetcherTests {
    let clock = ManualClock()
    let store: MessageStore

    init() throws {
        store = try MessageStore(location: .memory)
    }

    /// Pages of a fixed size, for the tests that are not about sizing them.
    static let pagesOf250 = HistoryPolicy(pageSizes: 250...250)

    /// The newest `live` messages came with the first sync, which said where the rest begins.
    private func firstSync(_ room: RoomHistory, live: Int) async throws {
        let newest = ((room.count - live + 1)...room.count).map { number -> UpstreamMessage in
            let message = room.message(number)
            return UpstreamMessage(id: 0, chatId: message.chatId, sender: message.sender, text: message.text, sentAt: message.sentAt,
                                   eventId: message.eventId)
        }
        _ = try await store.applyBatch(newest, to: .primary, receivedAt: "now", cursor: "s1",
                                       chats: ChatChanges(historyStarts: [HistoryStart(chatId: room.chatID, upstreamChat: room.room, position: "before \(room.count - live + 1)")]))
    }

    private func texts() async throws -> [String] {
        try await store.messages(of: .primary, chat: 7, limit: 10_000).messages.reversed().map(\.text)
    }

    /// Runs a fetcher until its progress says `complete`, giving the clock's sleeps what `waits` says.
    private func runUntilComplete(_ room: RoomHistory, policy: HistoryPolicy = Self.pagesOf250,
                                  live: @escaping @Sendable () -> String? = { "token" },
                                  onSleep: @escaping @Sendable (Duration?) -> Void = { _ in },
                                  onStorage: (StorageUsage) -> Void = { _ in }) async throws -> [HistoryProgress] {
        let (events, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        let fetcher = HistoryFetcher(store: store, upstream: room, policy: policy, environment: EngineEnvironment(clock: clock),
                                     liveSession: { live() }, emit: { sink.yield($0) })
        let task = Task { await fetcher.run() }
        defer { task.cancel() }
        var seen: [HistoryProgress] = []
        let watcher = Task { [clock] in
            // Each sleep of the fetcher is a wait the policy decided; the test lets it pass.
            while !Task.isCancelled {
                await clock.waitForSleepers(1)
                if Task.isCancelled { break }
                let next = clock.nextDeadline
                onSleep(next)
                clock.advance(by: next ?? .zero)
            }
        }
        defer { watcher.cancel() }
        for await event in events {
            if case .storage(let usage) = event { onStorage(usage) }
            if case .history(_, let progress, _) = event {
                seen.append(progress)
                if progress.complete { break }
            }
        }
        return seen
    }

    @Test func aRoomIsFetchedBackToItsFirstMessageOnceAndInOrder() async throws {
        let room = RoomHistory(count: 1_000, pageSize: 250)
        try await firstSync(room, live: 50)
        var used: [Int64] = []
        let seen = try await runUntilComplete(room, onStorage: { used.append($0.usedBytes) })
        #expect(try await texts() == (1...1_000).map { "message \($0)" })
        #expect(used.count == 4 && used == used.sorted() && Set(used).count == 4, "the storage figure moves with every page stored: \(used)")
        #expect(used.last == (await store.storageUsage()).usedBytes)
        #expect(seen.last == HistoryProgress(roomsPending: 0, fetched: 950))
        #expect(seen.map(\.fetched) == [0, 250, 500, 750, 950], "told after every page")
        #expect(room.positionsAsked == ["before 951", "before 701", "before 451", "before 201"])
        #expect(room.tokensUsed.allSatisfy { $0 == "token" }, "the engine's session")
    }

    @Test func failuresAndRateLimitsAreWaitedOutAndThePageIsAskedAgain() async throws {
        let room = RoomHistory(count: 300, pageSize: 250)
        try await firstSync(room, live: 50)
        room.failNext(with: .rateLimited(retryAfter: .seconds(9)), .serverError(status: 502))
        let waits = Mutex<[Duration?]>([])
        _ = try await runUntilComplete(room, onSleep: { wait in waits.withLock { $0.append(wait) } })
        #expect(try await texts() == (1...300).map { "message \($0)" })
        #expect(room.positionsAsked.prefix(3) == ["before 251", "before 251", "before 251"], "the same page again")
        #expect(waits.withLock { $0.first } == .seconds(9), "what the 429 asked")
    }

    @Test func nothingIsFetchedWhileSyncingIsNotLive() async throws {
        let room = RoomHistory(count: 300, pageSize: 250)
        try await firstSync(room, live: 50)
        let live = Mutex(false)
        let sleeps = Mutex(0)
        _ = try await runUntilComplete(room, live: { live.withLock { $0 } ? "token" : nil }, onSleep: { _ in
            // Three looks while not live, then syncing goes live.
            let count = sleeps.withLock { $0 += 1; return $0 }
            if count == 3 { live.withLock { $0 = true } }
            #expect(count > 3 || room.positionsAsked.isEmpty, "not a call before syncing is live")
        })
        #expect(try await texts().count == 300)
    }

    @Test func wakingEndsAWaitForSyncingAtOnceButNotTheWaitARateLimitAskedFor() async throws {
        let room = RoomHistory(count: 300, pageSize: 250)
        try await firstSync(room, live: 50)
        let live = Mutex(false)
        let (events, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        let fetcher = HistoryFetcher(store: store, upstream: room, policy: Self.pagesOf250, environment: EngineEnvironment(clock: clock),
                                     liveSession: { live.withLock { $0 } ? "token" : nil }, emit: { sink.yield($0) })
        let task = Task { await fetcher.run() }
        defer { task.cancel() }
        await clock.waitForSleepers(1)
        #expect(room.positionsAsked.isEmpty, "not live yet")
        live.withLock { $0 = true }
        room.failNext(with: .rateLimited(retryAfter: .seconds(30)))
        await fetcher.wake()
        await clock.waitForSleepers(1)
        #expect(room.positionsAsked == ["before 251"], "asked at once, without the clock moving")
        #expect(clock.nextDeadline == .seconds(30))
        await fetcher.wake()
        #expect(clock.nextDeadline == .seconds(30), "what the 429 asked is waited out")
        clock.advance(by: .seconds(30))
        for await event in events {
            if case .history(_, let progress, _) = event, progress.complete { break }
        }
        #expect(room.positionsAsked == ["before 251", "before 251"])
        #expect(try await texts() == (1...300).map { "message \($0)" })
    }

    @Test func liveMessagesMakeTheNextPageWaitForAQuietPeriod() async throws {
        let room = RoomHistory(count: 600, pageSize: 250)
        try await expectTheFirstPageToWait(.seconds(5), in: room, policy: HistoryPolicy(quietAfterLive: .seconds(5), pageSizes: 250...250),
                                           "a conversation is going on: no page yet") { await $0.liveMessagesArrived() }
        #expect(room.positionsAsked.count == 3, "then the pages, one after the other")
    }

    @Test func theFirstPageAfterTheCopyWasFilledWaitsWhileThePageShowsIt() async throws {
        let room = RoomHistory(count: 300, pageSize: 250)
        try await expectTheFirstPageToWait(.seconds(2), in: room, policy: HistoryPolicy(settleAfterFill: .seconds(2), pageSizes: 250...250),
                                           "the page is showing the chats: no page of history yet") { await $0.copyWasFilled() }
        #expect(room.positionsAsked == ["before 251"], "then the page, with no further wait")
    }

    /// After a first sync of `room`, runs a fetcher that was `told` something before it started:
    /// no page is asked for and its first wait is `wait`; then the clock moves on by that much and
    /// this returns once the whole history is in.
    private func expectTheFirstPageToWait(_ wait: Duration, in room: RoomHistory, policy: HistoryPolicy, _ why: Comment,
                                          told: (HistoryFetcher) async -> Void) async throws {
        try await firstSync(room, live: 50)
        let (events, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        let fetcher = HistoryFetcher(store: store, upstream: room, policy: policy,
                                     environment: EngineEnvironment(clock: clock), liveSession: { "token" }, emit: { sink.yield($0) })
        await told(fetcher)
        let task = Task { await fetcher.run() }
        defer { task.cancel() }
        await clock.waitForSleepers(1)
        #expect(room.positionsAsked.isEmpty, why)
        #expect(clock.nextDeadline == wait)
        clock.advance(by: wait)
        for await event in events {
            if case .history(_, let progress, _) = event, progress.complete { break }
        }
    }

    /// Were the next page asked for only after the last one is stored, this test would wait
    /// forever (its time limit fails it).
    @Test(.timeLimit(.minutes(1))) func theNextPageIsReadByTheHomeserverWhileTheLastIsStored() async throws {
        let room = RoomHistory(count: 1_000, pageSize: 250)
        try await firstSync(room, live: 50)
        let (asked, askedSink) = AsyncStream.makeStream(of: String.self)
        let (events, sink) = AsyncStream.makeStream(of: EngineEvent.self)
        let store = StoreWaitingForTheNextRequest(store) {
            for await position in asked where position == "before 701" { return }
        }
        let fetcher = HistoryFetcher(store: store, upstream: SignallingHistory(room: room, asked: askedSink), policy: Self.pagesOf250,
                                     environment: EngineEnvironment(clock: clock), liveSession: { "token" }, emit: { sink.yield($0) })
        let task = Task { await fetcher.run() }
        defer { task.cancel() }
        for await event in events {
            if case .history(_, let progress, _) = event, progress.complete { break }
        }
        #expect(try await texts() == (1...1_000).map { "message \($0)" })
        #expect(room.positionsAsked == ["before 951", "before 701", "before 451", "before 201"], "each page once")
    }

    @Test func pagesStartSmallAndAreSizedByHowLongTheHomeserverTakes() async throws {
        // 2 ms an event: 25 take 50 ms, so the next page is twice as big (no more than that);
        // 50 take 100 ms, so the next is 1.5 times as big, and 75 take the 150 ms aimed at.
        let room = RoomHistory(count: 1_000, pageSize: 1_000, costPerEvent: (clock, .milliseconds(2)))
        try await firstSync(room, live: 50)
        _ = try await runUntilComplete(room, policy: HistoryPolicy(targetPageDuration: .milliseconds(150), pageSizes: 25...250))
        #expect(try await texts() == (1...1_000).map { "message \($0)" })
        #expect(room.limitsAsked.prefix(4) == [25, 50, 75, 75])
        #expect(Set(room.limitsAsked.dropFirst(2)) == [75], "steady at the pace aimed at")
    }
}
