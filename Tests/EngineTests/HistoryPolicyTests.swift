import Engine
import Store
import Testing
import Upstream

/// `HistoryPolicy` as a value: what fetching older history does next, with no clock or socket.
@Suite("History policy")
struct HistoryPolicyTests {
    let rooms = [HistoryStart(chatId: 2, upstreamChat: "!recent", position: "t2"), HistoryStart(chatId: 1, upstreamChat: "!older", position: "t1")]

    @Test func itFetchesTheFirstPendingChatOnlyWhileSyncingIsLive() {
        let policy = HistoryPolicy()
        #expect(policy.next(live: true, pending: rooms) == .fetch(rooms[0], limit: policy.pageSizes.lowerBound))
        #expect(policy.next(live: false, pending: rooms) == .wait(policy.idleWait, .notSyncing))
        #expect(policy.next(live: true, pending: []) == .wait(policy.idleWait, .nothingPending))
    }

    @Test func whileMessagesFlowLiveItStepsAsideForAQuietPeriod() {
        let policy = HistoryPolicy(quietAfterLive: .seconds(5))
        #expect(policy.next(live: true, pending: rooms, liveMessagesCame: true) == .wait(.seconds(5), .liveMessages))
        #expect(policy.next(live: true, pending: rooms, liveMessagesCame: false) == .fetch(rooms[0], limit: policy.pageSize))
    }

    @Test func afterTheSyncThatFilledTheCopyTheFirstPageWaitsAMoment() {
        let policy = HistoryPolicy(quietAfterLive: .seconds(5), settleAfterFill: .seconds(2))
        #expect(policy.next(live: true, pending: rooms, copyFilled: true) == .wait(.seconds(2), .pageFilling))
        #expect(policy.next(live: true, pending: rooms, liveMessagesCame: true, copyFilled: true) == .wait(.seconds(5), .liveMessages),
                "the longer wait of the two")
        #expect(policy.next(live: true, pending: [], copyFilled: true) == .wait(policy.idleWait, .nothingPending))
        #expect(policy.next(live: true, pending: rooms, copyFilled: false) == .fetch(rooms[0], limit: policy.pageSize))
    }

    @Test func aRateLimitWaitsWhatItAsksAndAtLeastTheMinimum() {
        var policy = HistoryPolicy()
        #expect(policy.failed(.rateLimited(retryAfter: .seconds(7)), at: rooms[0], jitter: 0) == .wait(.seconds(7), .rateLimited))
        #expect(policy.failed(.rateLimited(retryAfter: .milliseconds(10)), at: rooms[0], jitter: 0) == .wait(policy.minimumRateLimitWait, .rateLimited))
        // Asked for nothing: the backoff's ceiling for the failures so far.
        #expect(policy.failed(.rateLimited(retryAfter: nil), at: rooms[0], jitter: 0) == .wait(policy.backoff.ceiling(afterFailure: 3), .rateLimited))
    }

    @Test func otherFailuresBackOffWithFullJitterUntilAPageIsStored() {
        var policy = HistoryPolicy(backoff: Backoff(base: .seconds(1), cap: .seconds(8)))
        #expect(policy.failed(.serverError(status: 502), at: rooms[0], jitter: 1) == .wait(.seconds(1), .failed))
        #expect(policy.failed(.timedOut, at: rooms[0], jitter: 1) == .wait(.seconds(2), .failed))
        #expect(policy.failed(.unreachable("reset"), at: rooms[0], jitter: 0.5) == .wait(.seconds(2), .failed))
        #expect(policy.failed(.unreachable("reset"), at: rooms[0], jitter: 1) == .wait(.seconds(8), .failed), "capped")
        policy.read(events: policy.pageSize, took: .milliseconds(100))
        #expect(policy.failures == 0)
        #expect(policy.failed(.serverError(status: 500), at: rooms[0], jitter: 1) == .wait(.seconds(1), .failed))
    }

    @Test func aRoomTheAccountMayNotReadFurtherBackEndsItsHistoryThere() {
        var policy = HistoryPolicy()
        #expect(policy.failed(.forbidden("banned"), at: rooms[1], jitter: 1) == .finish(rooms[1]))
        #expect(policy.failures == 0, "not a failure of the connection")
    }

    @Test func aRefusedTokenWaitsForTheEngineToSignInAgainAndFullStorageWaitsLonger() {
        var policy = HistoryPolicy()
        #expect(policy.failed(.unauthorized, at: rooms[0], jitter: 1) == .wait(policy.idleWait, .notSyncing))
        #expect(policy.storageFull() == .wait(policy.fullStorageWait, .storageFull))
    }

    @Test func theFirstPageIsSmallAndTheNextIsSizedToTheTargetDuration() {
        var policy = HistoryPolicy(targetPageDuration: .milliseconds(100), pageSizes: 20...200)
        #expect(policy.pageSize == 20, "a live message may come while the very first page is read")
        policy.read(events: 20, took: .milliseconds(10))
        #expect(policy.pageSize == 40, "fast: twice as big, no more")
        policy.read(events: 40, took: .milliseconds(80))
        #expect(policy.pageSize == 50, "near the target: a little bigger")
        policy.read(events: 50, took: .milliseconds(500))
        #expect(policy.pageSize == 20, "slow: smaller, down to the smallest")
        for _ in 0..<6 { policy.read(events: policy.pageSize, took: .zero) }
        #expect(policy.pageSize == 200, "never above the largest")
        #expect(policy.next(live: true, pending: rooms) == .fetch(rooms[0], limit: 200))
    }

    @Test func onlyAHomeserverWithTimeToSpareAtTheLargestPagesIsAskedAhead() {
        var policy = HistoryPolicy(targetPageDuration: .milliseconds(100), pageSizes: 20...200)
        policy.read(events: 20, took: .milliseconds(10))
        #expect(!policy.readsAhead, "fast, but the pages are still growing")
        for _ in 0..<4 { policy.read(events: policy.pageSize, took: .milliseconds(30)) }
        #expect(policy.pageSize == 200 && policy.readsAhead, "the largest page in a third of the target")
        policy.read(events: 200, took: .milliseconds(100))
        #expect(!policy.readsAhead, "at its target (Synapse on SQLite): a live message would wait behind a page read ahead")
        #expect(policy.pageSize == 200)
        policy.read(events: 200, took: .milliseconds(60))
        #expect(policy.readsAhead)
        policy.read(events: 200, took: .milliseconds(300))
        #expect(!policy.readsAhead && policy.pageSize < 200, "slower again: smaller pages, one at a time")
    }

    @Test func aShortLastPageSaysNothingAboutTheCostOfAPage() {
        var policy = HistoryPolicy(targetPageDuration: .milliseconds(100), pageSizes: 20...200)
        policy.read(events: 20, took: .milliseconds(10))
        policy.read(events: 3, took: .milliseconds(400))
        #expect(policy.pageSize == 40)
    }
}
