@testable import HTTPCore
import Testing

/// `ConnectionState` as a value: a connection's timeouts, the order of pipelined requests, closes
/// and lingering, with the time passed in (no socket, no clock).
@Suite("Connection state")
struct ConnectionStateTests {
    let timeouts = ConnectionState.Timeouts(head: .seconds(10), idle: .seconds(75), write: .seconds(30), linger: .seconds(2))
    let accepted = MonotonicTime(nanoseconds: 1_000_000_000)

    func at(_ seconds: Int) -> MonotonicTime { accepted + .seconds(seconds) }

    /// A state that has answered one request and written it all, at `now`.
    func servedOne(at now: MonotonicTime) -> ConnectionState {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        state.requestStarted(isHead: false)
        state.answerQueued(close: false)
        let afterWrite = state.outputWritten()
        #expect(afterWrite == .carryOn)
        state.updateDeadline(now: now, outputPending: false, partialRequest: false)
        return state
    }

    @Test func aClientThatSendsNothingGets408WhenTheHeadTimeoutFromTheAcceptHasPassed() {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        // Bytes of a head arrive, but not all: the deadline still runs from the accept.
        state.updateDeadline(now: at(4), outputPending: false, partialRequest: true)
        // Nothing at all yet is no idle connection: before its first request it keeps the head deadline.
        state.updateDeadline(now: at(5), outputPending: false, partialRequest: false)
        #expect(state.deadline == .head(at(10)))
        #expect(state.expiry(now: at(9)) == nil)
        #expect(state.expiry(now: at(10)) == .requestTimeout)
    }

    @Test func afterAnAnswerAnIdleConnectionClosesQuietlyAfterTheIdleTimeout() {
        let state = servedOne(at: at(3))
        #expect(state.deadline == .idle(at(78)))
        #expect(state.expiry(now: at(77)) == nil)
        #expect(state.expiry(now: at(78)) == .close)
    }

    @Test func theNextRequestsHeadTimeoutRunsFromItsFirstByte() {
        var state = servedOne(at: at(3))
        state.updateDeadline(now: at(20), outputPending: false, partialRequest: true)
        #expect(state.deadline == .head(at(30)))
        state.updateDeadline(now: at(25), outputPending: false, partialRequest: true)
        #expect(state.deadline == .head(at(30)), "more bytes of the same head do not move it")
    }

    @Test func whileARequestIsAnsweredOrHeldThereIsNoDeadline() {
        var state = servedOne(at: at(3))
        state.requestStarted(isHead: false)
        state.updateDeadline(now: at(4), outputPending: false, partialRequest: false)
        #expect(state.deadline == .none)
        let wasHeld = state.answerHeld()
        #expect(wasHeld)
        state.updateDeadline(now: at(5), outputPending: false, partialRequest: false)
        #expect(state.deadline == .none, "a parked poll waits as long as its holder says")
        #expect(state.expiry(now: at(10_000)) == nil)
    }

    @Test func aClientThatReadsNothingIsCutOffAfterTheWriteTimeoutAndProgressStartsItAgain() {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        state.requestStarted(isHead: false)
        state.answerQueued(close: false)
        state.outputBlocked(progressed: true, now: at(1))
        #expect(state.deadline == .write(at(31)))
        state.outputBlocked(progressed: false, now: at(20))
        #expect(state.deadline == .write(at(31)), "no progress: the deadline stays")
        state.outputBlocked(progressed: true, now: at(25))
        #expect(state.deadline == .write(at(55)), "the client took some: it starts again")
        state.updateDeadline(now: at(26), outputPending: true, partialRequest: false)
        #expect(state.deadline == .write(at(55)))
        #expect(state.expiry(now: at(55)) == .abort)
    }

    @Test func pipelinedRequestsStartOneAtATimeInOrder() {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        #expect(state.canStartRequest(outputBelowHighWater: true))
        state.requestStarted(isHead: false)
        #expect(!state.canStartRequest(outputBelowHighWater: true), "the second waits in the decoder while the first is answered")
        let wasHeld = state.answerHeld()
        #expect(wasHeld)
        #expect(!state.canStartRequest(outputBelowHighWater: true), "and while it is held")
        state.answerQueued(close: false)
        #expect(state.canStartRequest(outputBelowHighWater: true), "its answer is queued: the next may start")
        #expect(!state.canStartRequest(outputBelowHighWater: false), "unless much output waits for a slow reader")
        state.streamStarted(chunked: true, close: false)
        #expect(!state.canStartRequest(outputBelowHighWater: true), "nor while a body is streamed")
        state.streamEnded()
        #expect(state.canStartRequest(outputBelowHighWater: true))
        #expect(state.requestsServed == 2)
    }

    @Test func anAnswerThatClosesStopsTheNextRequestAndClosesOnceWritten() {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        state.requestStarted(isHead: false)
        state.answerQueued(close: true)
        #expect(!state.canStartRequest(outputBelowHighWater: true), "nothing after Connection: close")
        let afterWrite = state.outputWritten()
        #expect(afterWrite == .close)
    }

    @Test func aStreamThatClosesClosesWhenItEndsNotBefore() {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        state.requestStarted(isHead: false)
        state.streamStarted(chunked: false, close: true)
        let afterWrite = state.outputWritten()
        #expect(afterWrite == .carryOn, "the body is still being produced")
        state.streamEnded()
        let afterTheStream = state.outputWritten()
        #expect(afterTheStream == .close)
    }

    @Test func anErrorTheCoreAnswersLingersThenTheDrainEnds() {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        state.respondedAndClosing(linger: true)
        let afterWrite = state.outputWritten()
        #expect(afterWrite == .startLingering)
        state.startLingering(now: at(3))
        #expect(state.phase == .lingering && !state.isOpen)
        #expect(state.interest(outputPending: false, inputBelowPipelineLimit: false) == .init(read: true, peerHangUp: true, write: false),
                "the client's input is drained")
        #expect(state.expiry(now: at(5)) == .abort)
        // A shutdown meanwhile keeps the linger.
        var beforeFlush = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        beforeFlush.respondedAndClosing(linger: true)
        let closeNow = beforeFlush.closeWhenIdle(outputPending: true)
        #expect(!closeNow)
        let afterTheError = beforeFlush.outputWritten()
        #expect(afterTheError == .startLingering)
    }

    @Test func aClientThatFinishesSendingStillGetsItsAnswerButAHeldRequestIsAbandoned() {
        var answering = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        answering.requestStarted(isHead: false)
        let abandons = answering.peerFinished(requestNeedsClient: false)
        #expect(!abandons, "a request sent in full is answered")
        answering.answerQueued(close: false)
        let closes = answering.inputExhausted()
        #expect(closes, "then, with nothing more to read, it closes")
        let afterWrite = answering.outputWritten()
        #expect(afterWrite == .close)
        #expect(answering.interest(outputPending: true, inputBelowPipelineLimit: true) == .init(read: false, peerHangUp: false, write: true))

        var needsClient = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        needsClient.requestStarted(isHead: false)
        let abandonsWhatNeedsTheClient = needsClient.peerFinished(requestNeedsClient: true)
        #expect(abandonsWhatNeedsTheClient)

        var held = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        held.requestStarted(isHead: false)
        let wasHeld = held.answerHeld()
        #expect(wasHeld)
        let abandonsTheHeldOne = held.peerFinished(requestNeedsClient: false)
        #expect(abandonsTheHeldOne, "a parked poll's holder learns the client is gone")

        var late = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        late.requestStarted(isHead: false)
        _ = late.peerFinished(requestNeedsClient: false)
        let heldAfterTheClientLeft = late.answerHeld()
        #expect(!heldAfterTheClientLeft, "nobody is left to hear a later answer")
    }

    @Test func backPressureStopsReadingButNotHearingTheClientLeave() {
        var state = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        state.requestStarted(isHead: false)
        #expect(state.interest(outputPending: false, inputBelowPipelineLimit: false) == .init(read: false, peerHangUp: true, write: false))
        #expect(state.interest(outputPending: true, inputBelowPipelineLimit: true) == .init(read: true, peerHangUp: true, write: true))
        state.closed()
        #expect(state.interest(outputPending: true, inputBelowPipelineLimit: true) == .init())
    }

    @Test func aShutdownClosesAnIdleConnectionNowAndABusyOneAfterItsAnswer() {
        var idle = servedOne(at: at(1))
        let closeNow = idle.closeWhenIdle(outputPending: false)
        #expect(closeNow)
        var writing = servedOne(at: at(1))
        let closesWhileWriting = writing.closeWhenIdle(outputPending: true)
        #expect(!closesWhileWriting)
        let afterWrite = writing.outputWritten()
        #expect(afterWrite == .close)
        var busy = ConnectionState(timeouts: timeouts, acceptedAt: accepted)
        busy.requestStarted(isHead: true)
        let closesWhileAnswering = busy.closeWhenIdle(outputPending: false)
        #expect(!closesWhileAnswering)
        #expect(busy.answeringHead)
        busy.answerQueued(close: false)
        let afterItsAnswer = busy.outputWritten()
        #expect(afterItsAnswer == .close, "after its answer")
    }
}
