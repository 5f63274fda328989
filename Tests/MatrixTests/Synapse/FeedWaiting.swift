import Foundation
import Testing
import TestSupport

extension RunningDashboard {
    /// Follows the feed until `holds` says yes of what the copy shows (or 60 polls went by): the
    /// Synapse suites wait on the dashboard's own events, never on a timer.
    func until(_ what: String, _ holds: () async throws -> Bool) async throws {
        var seq = try await json("/api/state")["seq"] as? Int ?? 0
        for _ in 0..<60 {
            if try await holds() { return }
            seq = try await json("/api/poll?since=\(seq)&timeout=2&visible=1")["seq"] as? Int ?? seq
        }
        Issue.record("never: \(what)")
    }
}
