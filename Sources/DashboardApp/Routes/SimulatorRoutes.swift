import ChatSimulator
import Foundation
import HTTPCore
import Store

/// `/api/simulator/{action}`: the built-in simulator's control API for the page, behind the same
/// Host, token, CSRF and Origin checks as everything else, and answering like the rest of the API:
/// each action with its own method (405 with `Allow` otherwise), errors as problem+json. Absent
/// (404) with an external upstream.
///
/// One action is the dashboard's own: `fill` makes storage full from whatever it is now (see
/// ``StorageFiller``).
struct SimulatorRoutes {
    let simulator: ChatSimulator?
    let filler: StorageFiller?

    func register(in router: inout Router) {
        for action in SimulatorAction.allCases {
            router.add(action.method, "/api/simulator/" + action.rawValue) { request, _, _ in
                await control(action, body: request.body)
            }
        }
        router.add("POST", "/api/simulator/fill") { _, _, _ in
            guard let filler else { return Self.noSimulator }
            switch await filler.fill() {
            case .success(let filled):
                return try JSONResponse.make(filled)
            case .failure(let refusal):
                return Problem(status: .conflict, detail: refusal.detail).response
            }
        }
    }

    private static var noSimulator: HTTPResponse {
        Problem(status: .notFound, detail: "The simulator is not built in: the dashboard syncs with --upstream.").response
    }

    /// Carries out the call on the simulator directly; a refusal answers as the rest of the API does.
    private func control(_ action: SimulatorAction, body: [UInt8]) async -> HTTPResponse {
        guard let simulator else { return Self.noSimulator }
        let command: SimulatorCommand
        switch SimulatorCommand.parse(action, body: body) {
        case .success(let parsed): command = parsed
        case .failure(let refusal): return Self.problem(refusal)
        }
        switch await simulator.perform(command) {
        case .success(let answer): return answer
        case .failure(let refusal): return Self.problem(refusal)
        }
    }

    private static func problem(_ refusal: SimulatorRefusal) -> HTTPResponse {
        let reason = refusal.reason
        return Problem(status: refusal.status, detail: reason.prefix(1).uppercased() + reason.dropFirst() + ".").response
    }
}

/// "Fill storage" for demos and tests: makes storage full as it fills for a person, whatever the
/// quota is now (bought space included), and leaves the quota as it is (a purchase never seems to
/// vanish). Messages of about 16 KB are published that fill what is free, the dashboard stores
/// them, and then a few more come that do not fit: storage is full of what was stored, so Free
/// space can make room (it removes the oldest) as well as Buy more space. Beyond
/// `maximumPublished` messages it refuses and says why.
struct StorageFiller: Sendable {
    struct Filled: Encodable, Sendable {
        var published: Int
    }

    struct Refusal: Error {
        var detail: String
    }

    let simulator: ChatSimulator
    let usage: @Sendable () async -> StorageUsage
    var maximumPublished = 2_000
    /// The messages that come once storage is filled, and do not fit.
    static let overflowing = 4
    /// How long the stored part may take to be stored before the overflowing part comes anyway.
    var storedWithin: Duration = .seconds(10)
    static let filler = (0..<200).map { "Sample text \($0 + 1) of 200, filling storage for the demo. " + String(repeating: "·", count: 20) }
        .joined(separator: "\n")

    func fill() async -> Result<Filled, Refusal> {
        let before = await usage()
        guard let quota = before.quotaBytes else {
            return .failure(Refusal(detail: "There is no storage quota, so storage cannot be filled."))
        }
        // What one stored message takes: its text and the store's own (a sender of a few letters, its
        // time, a row: 80 bytes at most), so that what is left after the fitting part is less than two.
        let size = Int64(Self.filler.utf8.count) + 80
        let free = max(0, quota - before.usedBytes)
        // What fits, less one message's room (so the overflow is what does not fit), then the overflow.
        let fitting = max(0, Int(free / size) - 1)
        guard fitting + Self.overflowing <= maximumPublished else {
            return .failure(Refusal(detail: "\(free / 1_000_000) MB are free; filling them would take \(fitting + Self.overflowing) messages. "
                                    + "Start the dashboard with a smaller --quota to try storage running out."))
        }
        if fitting > 0 {
            await simulator.publish(account: "primary", count: fitting, text: Self.filler)
            // The fitting part is stored as one batch first: published together with the overflow,
            // the whole would not fit and nothing would be stored.
            let stored = before.usedBytes + Int64(fitting) * size * 9 / 10
            let deadline = ContinuousClock.now + storedWithin
            while await usage().usedBytes < stored, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        await simulator.publish(account: "primary", count: Self.overflowing, text: Self.filler)
        return .success(Filled(published: fitting + Self.overflowing))
    }
}
