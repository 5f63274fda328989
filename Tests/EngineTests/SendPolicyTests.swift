import Engine
import Store
import Testing
import Upstream

/// The sender's decisions as values (CONTRACT section 11): no clock, task or socket.
@Suite("Send policy")
struct SendPolicyTests {
    private func entry(_ id: Int64, chat: Int64 = 1, _ state: OutboxState = .queued) -> OutboxEntry {
        OutboxEntry(id: id, account: .primary, chatId: chat, text: "m\(id)", state: state, createdAt: "2026-12-03T08:00:00.000Z",
                    upstreamKey: "k\(id)")
    }

    @Test func theOldestQueuedEntryGoesWithItsDeadlineAndAnEmptyLineWaits() {
        let policy = SendPolicy(deadline: .seconds(20))
        #expect(policy.next(live: true, oldestQueued: entry(2, chat: 2)) == .send(entry(2, chat: 2), deadline: .seconds(20)))
        #expect(policy.next(live: true, oldestQueued: nil) == .wait(policy.idleWait, .nothingQueued))
    }

    @Test func nothingGoesWhileSyncingIsNotLiveAndTheEntryStaysQueued() {
        let policy = SendPolicy()
        #expect(policy.next(live: false, oldestQueued: entry(1)) == .wait(policy.idleWait, .notSyncing))
    }

    @Test func aLostAnswerBacksOffWithFullJitterAndGrowsUntilAnAnswerComes() {
        var policy = SendPolicy(backoff: Backoff(base: .seconds(1), cap: .seconds(8)))
        for error in [UpstreamError.unreachable("reset"), .timedOut, .serverError(status: 502), .badResponse("cut")] {
            var fresh = policy
            #expect(fresh.failed(error, jitter: 1) == .retry(after: .seconds(1), .answerLost), "\(error) may have reached the upstream")
        }
        #expect(policy.failed(.timedOut, jitter: 1) == .retry(after: .seconds(1), .answerLost))
        #expect(policy.failed(.timedOut, jitter: 1) == .retry(after: .seconds(2), .answerLost))
        #expect(policy.failed(.timedOut, jitter: 0.5) == .retry(after: .seconds(2), .answerLost), "a draw within 0 ... 4 s")
        #expect(policy.failed(.timedOut, jitter: 0) == .retry(after: .zero, .answerLost))
        #expect(policy.failed(.timedOut, jitter: 1) == .retry(after: .seconds(8), .answerLost), "capped")
        policy.sent()
        #expect(policy.failures == 0)
        #expect(policy.failed(.timedOut, jitter: 1) == .retry(after: .seconds(1), .answerLost), "the count starts again")
    }

    @Test func aRefusalFailsTheEntryWithTheUpstreamsReason() {
        var policy = SendPolicy()
        let tooLarge = SendRefusal(.tooLarge, detail: "event too large")
        #expect(policy.failed(.refused(tooLarge), jitter: 0.5) == .refused(tooLarge))
        #expect(policy.failed(.forbidden("not in room"), jitter: 0.5) == .refused(SendRefusal(.forbidden, detail: "not in room")))
    }

    @Test func aRateLimitWaitsWhatItAsksAndAtLeastTheMinimum() {
        var policy = SendPolicy(minimumRateLimitWait: .milliseconds(500))
        #expect(policy.failed(.rateLimited(retryAfter: .seconds(7)), jitter: 0) == .retry(after: .seconds(7), .rateLimited))
        #expect(policy.failed(.rateLimited(retryAfter: .milliseconds(10)), jitter: 0) == .retry(after: .milliseconds(500), .rateLimited))
    }

    @Test func aMessageTheCopyCouldNotStoreWaitsForTheStoreBeforeAnythingElseGoes() {
        let policy = SendPolicy(fullStorageWait: .seconds(30))
        #expect(policy.storeFailed() == .wait(.seconds(30), .storageFull))
        #expect(policy.ends(.storageFull, by: .tryAgain) && !policy.ends(.storageFull, by: .written))
    }

    @Test func aRefusedSessionWaitsForSyncingToGoLiveAgain() {
        var policy = SendPolicy()
        #expect(policy.failed(.unauthorized, jitter: 0) == .retry(after: policy.idleWait, .notSyncing))
    }

    @Test func whatEndsAWait() {
        let policy = SendPolicy()
        for wake in [SendWake.written, .syncing, .tryAgain] {
            #expect(policy.ends(.nothingQueued, by: wake))
            #expect(policy.ends(.notSyncing, by: wake))
            #expect(!policy.ends(.rateLimited, by: wake), "what the upstream asked is waited out")
        }
        #expect(!policy.ends(.answerLost, by: .written), "another message written does not cut a backoff short")
        #expect(policy.ends(.answerLost, by: .syncing), "the network came back")
        #expect(policy.ends(.answerLost, by: .tryAgain))
    }
}
