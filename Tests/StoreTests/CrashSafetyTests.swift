import Foundation
import SQLite
import Testing
import TestSupport
@testable import Store

/// A writer killed with SIGKILL at random moments never leaves a damaged or inconsistent store.
@Suite("Crash safety")
struct CrashSafetyTests {
    @Test func twentySIGKILLsDuringIngestLoseNothingCommitted() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/crash.sqlite"
        var random = SystemRandomNumberGenerator()
        var highestReported: Int64 = 0
        for round in 1...20 {
            let child = try ChildProcess("store-ingest-loop", [path, String(round)])
            // Let it commit a random number of batches, then kill it a random moment later:
            // usually in the middle of the next batch.
            let commitsBeforeKill = Int.random(in: 1...15, using: &random)
            for _ in 0..<commitsBeforeKill {
                guard let line = await child.nextLine() else { break }
                let id = try #require(Int64(line.dropFirst("committed ".count)))
                highestReported = max(highestReported, id)
            }
            usleep(UInt32.random(in: 0...3000, using: &random))
            child.signal(SIGKILL)
            let exit = await child.waitForExit()
            #expect(exit.status == SIGKILL, "round \(round): \(exit.stderr)")

            let store = try MessageStore(location: .file(path))
            #expect(try await store.integrityCheck(), "round \(round)")
            let cursor = try #require(await store.newestID(for: .primary))
            let count = try await store.scalarForTesting("SELECT count(*) FROM messages WHERE account = 0")
            let highestStored = try await store.scalarForTesting("SELECT max(id) FROM messages WHERE account = 0")
            #expect(cursor == highestStored, "round \(round): the cursor is the highest stored id")
            #expect(count == cursor, "round \(round): ids 1...cursor are all there, none twice, no torn batch")
            #expect(cursor >= highestReported, "round \(round): every batch reported committed survived")
            #expect(try await store.scannedUsage() == store.storageUsage().usedBytes, "round \(round): usage matches")
            #expect(try await store.scalarForTesting("SELECT count(*) FROM message_search") == count,
                    "round \(round): the search index holds exactly the stored messages")
            #expect(try await store.searchIndexIsSound(), "round \(round): FTS5's own integrity check")
        }
    }
}
