import Foundation
import Testing
@testable import Engine

@Suite("Problem and status boards")
struct EngineBoardsTests {
    private func describe(_ events: [EngineEvent]) -> [String] {
        events.map { event in
            switch event {
            case .problemRaised(let problem): "raised \(problem.kind.rawValue)"
            case .problemCleared(let kind): "cleared \(kind.rawValue)"
            default: "other"
            }
        }
    }

    @Test func onlyTheLatestConnectionProblemIsOpenAndRepeatsAreToldToo() {
        var board = ProblemBoard()
        let server = EngineProblem(kind: .upstreamError, debug: "500")
        #expect(describe(board.raise(server)) == ["raised upstreamError"])
        #expect(describe(board.raise(server)) == ["raised upstreamError"], "the same problem again: the registry decides whether it is news")
        #expect(describe(board.raise(EngineProblem(kind: .upstreamError, debug: "503"))) == ["raised upstreamError"], "changed: said")
        #expect(describe(board.raise(EngineProblem(kind: .outOfSpace, debug: "quota"))) == ["raised outOfSpace"],
                "not a connection problem: the others stay")
        #expect(describe(board.raise(EngineProblem(kind: .unreachable, debug: "refused"))) == ["cleared upstreamError", "raised unreachable"])
        #expect(board.problems.map(\.kind) == [.unreachable, .outOfSpace])
        #expect(describe(board.clear(.unreachable)) == ["cleared unreachable"])
        #expect(board.clear(.unreachable).isEmpty)
        #expect(board.isOpen(.outOfSpace) && !board.isOpen(.unreachable))
    }

    @Test func aMovedLastSuccessIsAnnouncedAtMostEveryTenSecondsEverythingElseAtOnce() {
        var board = StatusBoard(ConnectionStatus(upstream: "http://u", holdSeconds: 25))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(board.change { $0.state = .live; $0.lastSuccessAt = start } != nil)
        #expect(board.change { $0.lastSuccessAt = start.addingTimeInterval(3) } == nil, "3 s later: not worth waking every tab")
        #expect(board.status.lastSuccessAt == start.addingTimeInterval(3), "but the status itself is current")
        #expect(board.change { $0.lastSuccessAt = start.addingTimeInterval(10) }?.lastSuccessAt == start.addingTimeInterval(10))
        #expect(board.change { $0.state = .waiting } != nil, "a change of state is always said")
        #expect(board.change { $0.state = .waiting } == nil, "no change, nothing said")
    }

    @Test func aSuccessTheMessagesAlreadyShowedIsNotAnnouncedAgain() {
        var board = StatusBoard(ConnectionStatus(upstream: "http://u", holdSeconds: 25))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(board.change { $0.state = .live; $0.lastSuccessAt = start } != nil)
        board.successShown(at: start.addingTimeInterval(12))
        #expect(board.change { $0.lastSuccessAt = start.addingTimeInterval(12) } == nil, "the messages event said it")
        #expect(board.change { $0.lastSuccessAt = start.addingTimeInterval(20) } == nil, "8 s after what the page heard")
        #expect(board.change { $0.lastSuccessAt = start.addingTimeInterval(22) } != nil, "10 s after it: said")
    }
}
