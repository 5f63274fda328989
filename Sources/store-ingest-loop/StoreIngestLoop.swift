import Foundation
import Store
import Upstream

// Test helper for the store's crash-safety test: ingests batches into the store at the given path
// for ever and prints `committed <highest id>` after each commit, until it is killed.
//   store-ingest-loop PATH [SEED]
@main
enum StoreIngestLoop {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: store-ingest-loop PATH [SEED]\n".utf8))
            exit(2)
        }
        var generator = SplitMix64(seed: UInt64(arguments.count > 2 ? arguments[2] : "1") ?? 1)
        let store = try MessageStore(location: .file(arguments[1]))
        var next = (await store.newestID(for: .primary) ?? 0) + 1
        while true {
            let count = Int.random(in: 1...120, using: &generator)
            let batch = (0..<count).map { offset in
                let id = next + Int64(offset)
                return UpstreamMessage(id: id, chatId: id % 7, sender: "user\(id % 5)",
                                       text: String(repeating: "m", count: Int.random(in: 1...400, using: &generator)),
                                       sentAt: "2026-11-29T12:00:00.000Z")
            }
            _ = try await store.apply(batch, to: .primary, receivedAt: "2026-11-29T12:00:01.000Z", cursor: String(next + Int64(count) - 1))
            next += Int64(count)
            FileHandle.standardOutput.write(Data("committed \(next - 1)\n".utf8))
        }

        /// A small seeded generator, so a failing run can be repeated.
        struct SplitMix64: RandomNumberGenerator {
            var state: UInt64
            init(seed: UInt64) { state = seed }
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
    }
}
