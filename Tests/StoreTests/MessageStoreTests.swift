import Foundation
import SQLite
import Synchronization
import Testing
@testable import Store
import Upstream

@Suite("Message store on a real file")
struct MessageStoreTests {
    let folder: TemporaryFolder
    let path: String

    init() throws {
        folder = try TemporaryFolder()
        path = folder.path + "/store.sqlite"
    }

    private func open() throws -> MessageStore {
        try MessageStore(location: .file(path))
    }

    // MARK: Batches

    @Test func duplicatesWithinABatchAreStoredOnce() async throws {
        let store = try open()
        let fresh = try await store.apply(messages([1, 2, 2, 3, 1]), to: .primary, receivedAt: now)
        #expect(fresh.map(\.id) == [1, 2, 3])
        #expect(try await store.allIDs(.primary) == [1, 2, 3])
        #expect(await store.newestID(for: .primary) == 3)
    }

    @Test func idsAlreadyStoredAreIgnoredAcrossBatches() async throws {
        let store = try open()
        _ = try await store.apply(messages(1...3), to: .primary, receivedAt: now)
        let fresh = try await store.apply(messages(2...5), to: .primary, receivedAt: now)
        #expect(fresh.map(\.id) == [4, 5], "only the new ones come back, so the feed never repeats one")
        let again = try await store.apply(messages(1...5), to: .primary, receivedAt: now)
        #expect(again.isEmpty)
        #expect(try await store.allIDs(.primary) == [1, 2, 3, 4, 5])
    }

    @Test func outOfOrderBatchesAreStoredAndTheNewestIDNeverGoesBack() async throws {
        let store = try open()
        _ = try await store.apply(messages([7, 8]), to: .primary, receivedAt: now)
        let fresh = try await store.apply(messages([5, 6]), to: .primary, receivedAt: now)
        #expect(fresh.map(\.id) == [5, 6])
        #expect(await store.newestID(for: .primary) == 8)
        #expect(await store.cursor(for: .primary) == "6", "the cursor is the upstream's, whatever it is")
        #expect(try await store.allIDs(.primary) == [5, 6, 7, 8])
    }

    // MARK: Opaque cursors

    @Test func theCursorIsKeptAsTheUpstreamGaveItAcrossAReopen() async throws {
        let path = folder.path + "/opaque.sqlite"
        let cursor = "s72594_4483_1934_1_4_1_1_0_1 ünïcode '\"; DROP TABLE cursors; --"
        do {
            let store = try MessageStore(location: .file(path))
            _ = try await store.apply(messages([1, 2]), to: .primary, receivedAt: now, cursor: cursor)
            #expect(await store.cursor(for: .primary) == cursor)
            await store.close()
        }
        let reopened = try MessageStore(location: .file(path))
        #expect(await reopened.cursor(for: .primary) == cursor)
        #expect(await reopened.newestID(for: .primary) == 2)
    }

    @Test func anEmptyBatchMovesTheCursorAndNilKeepsIt() async throws {
        let store = try open()
        #expect(try await store.apply([], to: .primary, receivedAt: now, cursor: "batch-1").isEmpty)
        #expect(await store.cursor(for: .primary) == "batch-1", "a sync with nothing new still moves on")
        #expect(await store.newestID(for: .primary) == nil)
        _ = try await store.apply(messages([3]), to: .primary, receivedAt: now, cursor: nil)
        #expect(await store.cursor(for: .primary) == "batch-1", "no cursor given: it stays")
        #expect(await store.newestID(for: .primary) == 3)
    }

    @Test func aBatchThatDoesNotFitLeavesTheCursorWhereItWas() async throws {
        let store = try open()
        _ = try await store.apply(messages([1]), to: .primary, receivedAt: now, cursor: "before")
        try await store.setQuota(await store.storageUsage().usedBytes + 10)
        await #expect(throws: StoreError.self) {
            try await store.apply(messages([2, 3], textLength: 200), to: .primary, receivedAt: now, cursor: "after")
        }
        #expect(await store.cursor(for: .primary) == "before")
        #expect(await store.newestID(for: .primary) == 1)
    }

    @Test func accountsHaveTheirOwnCursorsAndMessages() async throws {
        let store = try open()
        _ = try await store.apply(messages(1...4), to: .primary, receivedAt: now)
        _ = try await store.apply(messages(1...2), to: .linked, receivedAt: now)
        #expect(await store.newestID(for: .primary) == 4)
        #expect(await store.newestID(for: .linked) == 2)
        #expect(try await store.allIDs(.linked) == [1, 2])
    }

    @Test func aFailureInTheMiddleOfABatchLeavesNothingVisible() async throws {
        let store = try open()
        _ = try await store.apply(messages(1...2), to: .primary, receivedAt: now)
        let usageBefore = await store.storageUsage()
        // A trigger made by another connection fails the insert of id 5, half-way through the batch.
        let saboteur = try SQLiteConnection(path: path)
        try saboteur.execute("CREATE TRIGGER fail_on_5 BEFORE INSERT ON messages WHEN NEW.id = 5 BEGIN SELECT RAISE(ABORT, 'injected'); END")
        await #expect(throws: StoreError.self) {
            _ = try await store.apply(messages(3...8), to: .primary, receivedAt: now)
        }
        #expect(try await store.allIDs(.primary) == [1, 2])
        #expect(await store.newestID(for: .primary) == 2)
        #expect(await store.storageUsage() == usageBefore)
        #expect(try await store.chats(of: .primary).map(\.messageCount).reduce(0, +) == 2)
        try saboteur.execute("DROP TRIGGER fail_on_5")
        #expect(try await store.apply(messages(3...8), to: .primary, receivedAt: now).count == 6)
    }

    // MARK: Quota

    @Test func aStoredBatchSaysTheStorageInUseOnceItIsIn() async throws {
        let store = try open()
        try await store.setQuota(1_000_000)
        let batch = messages(1...10)
        let applied = try await store.applyBatch(batch, to: .primary, receivedAt: now, cursor: "10")
        #expect(applied.usage == StorageUsage(usedBytes: batch.reduce(0) { $0 + $1.storageSize }, quotaBytes: 1_000_000))
        #expect(applied.usage == (await store.storageUsage()), "what asking again would say")
        let nothing = try await store.applyBatch([], to: .primary, receivedAt: now, cursor: "10")
        #expect(nothing.usage == applied.usage, "a batch with nothing new says it too")
    }

    @Test func aBatchOverTheQuotaIsNotWrittenAndTheCursorStays() async throws {
        let store = try open()
        let first = messages(1...10)
        let firstSize = first.reduce(0) { $0 + $1.storageSize }
        try await store.setQuota(firstSize + 100)
        _ = try await store.apply(first, to: .primary, receivedAt: now)
        let second = messages(11...20)
        do {
            _ = try await store.apply(second, to: .primary, receivedAt: now)
            Issue.record("expected out of space")
        } catch {
            #expect(error == .outOfSpace(usedBytes: firstSize, quotaBytes: firstSize + 100,
                                         neededBytes: second.reduce(0) { $0 + $1.storageSize }, diskFull: false))
        }
        #expect(await store.newestID(for: .primary) == 10)
        #expect(try await store.allIDs(.primary) == Array(1...10))
        #expect(await store.storageUsage().usedBytes == firstSize)
        // After buying more space the very same batch goes in: nothing was lost.
        try await store.setQuota(firstSize * 3)
        #expect(try await store.apply(second, to: .primary, receivedAt: now).count == 10)
        #expect(await store.newestID(for: .primary) == 20)
    }

    @Test func duplicatesCostNoQuota() async throws {
        let store = try open()
        let batch = messages(1...5)
        try await store.setQuota(batch.reduce(0) { $0 + $1.storageSize })
        _ = try await store.apply(batch, to: .primary, receivedAt: now)
        #expect(try await store.apply(batch, to: .primary, receivedAt: now).isEmpty, "a full store still accepts a batch of known ids")
    }

    /// 40 messages of 176 bytes, alternating accounts, sent a minute apart; the quota exactly full.
    private func fullStore() async throws -> (store: MessageStore, used: Int64) {
        let store = try open()
        for id in Int64(1)...40 {
            let sentAt = String(format: "2026-11-29T12:%02d:00.000Z", id)
            _ = try await store.apply(messages([id], textLength: 100, sentAt: sentAt), to: id % 2 == 0 ? .primary : .linked,
                                      receivedAt: now)
        }
        let used = await store.storageUsage().usedBytes
        try await store.setQuota(used)
        return (store, used)
    }

    @Test func freeSpaceRemovesExactlyWhatItsPlanSaysTheOldestFirst() async throws {
        let (store, used) = try await fullStore()
        let plan = try #require(try await store.freeSpacePlan(neededBytes: 100))
        let removed = try #require(try await store.freeSpace(neededBytes: 100))
        #expect(removed == plan, "the question asked before is what happens")
        #expect(plan.oldestSentAt == "2026-11-29T12:01:00.000Z")
        let usage = await store.storageUsage()
        #expect(usage.usedBytes == used - removed.bytes)
        let headroom = MessageStore.headroom(quota: used, neededBytes: 100)
        #expect(headroom == used / 10, "a tenth of the quota to spare")
        #expect(usage.usedBytes + 100 + headroom <= used, "the batch fits, with the headroom to spare")
        #expect(usage.usedBytes + 100 + headroom + 200 > used, "and no more went than that (a message is about 200 bytes)")
        #expect(try await store.scannedUsage() == usage.usedBytes, "the incremental figure matches a scan")
        let remaining = (try await store.allIDs(.primary) + store.allIDs(.linked)).sorted()
        #expect(remaining == Array(remaining.first!...40), "exactly the oldest went")
        #expect(remaining.count == 40 - removed.messageCount)
        let counted = try await store.chats(of: .primary).map(\.messageCount).reduce(0, +)
            + store.chats(of: .linked).map(\.messageCount).reduce(0, +)
        #expect(counted == Int64(remaining.count))
    }

    @Test func freeSpaceMakesRoomForTheWaitingBatchEvenBeyondAQuarter() async throws {
        let (store, used) = try await fullStore()
        let needed = used / 2
        let removed = try #require(try await store.freeSpace(neededBytes: needed))
        #expect(await store.storageUsage().usedBytes + needed <= used, "the waiting batch fits now")
        #expect(removed.bytes >= needed)
    }

    @Test func freeSpaceOffersNothingWhenRemovingCannotHelp() async throws {
        let (store, used) = try await fullStore()
        #expect(try await store.freeSpacePlan(neededBytes: used + 1) == nil, "a batch larger than the whole quota")
        #expect(try await store.freeSpace(neededBytes: used + 1) == nil)
        #expect(await store.storageUsage().usedBytes == used, "nothing removed")
        try await store.setQuota(nil)
        #expect(try await store.freeSpacePlan(neededBytes: 10) == nil, "no quota: nothing to free for")
        let empty = try MessageStore(location: .memory)
        try await empty.setQuota(100)
        #expect(try await empty.freeSpacePlan(neededBytes: 50) == nil, "nothing stored")
    }

    @Test func removingAllAccountsLeavesAnEmptyStoreThatCountsNothing() async throws {
        let (store, _) = try await fullStore()
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1, linkedUserId: 2))
        #expect(try await store.removeAllAccounts() == 40)
        #expect(await store.storageUsage().usedBytes == 0)
        #expect(try await store.scannedUsage() == 0)
        #expect(await store.cursor(for: .primary) == nil)
        #expect(await store.cursor(for: .linked) == nil)
        #expect(try await store.accountIDs() == AccountIDs(primaryUserId: nil, linkedUserId: nil))
        #expect(try await store.chats(of: .primary).isEmpty)
        try await store.checkWritable()
    }

    @Test func archivingSetsAnAccountAsideKeepsItCountedAndFreeSpaceReachesIt() async throws {
        let (store, used) = try await fullStore()
        let primaryBefore = try await store.allIDs(.primary)
        #expect(try await store.archiveAccount(.primary, at: now) == primaryBefore.count)
        #expect(try await store.allIDs(.primary).isEmpty)
        #expect(await store.cursor(for: .primary) == nil, "the next sync starts from the beginning")
        #expect(try await store.chats(of: .primary).isEmpty)
        #expect(try await store.archivedCount() == primaryBefore.count)
        #expect(await store.storageUsage().usedBytes == used, "set aside, still stored and counted")
        #expect(try await store.scannedUsage() == used)
        // The server numbers from 1 again: the same ids are new messages now, stored beside the archive.
        try await store.setQuota(used + 400)
        #expect(try await store.apply(messages([2, 4], sentAt: "2026-11-30T09:00:00.000Z"), to: .primary, receivedAt: now).count == 2)
        // Free space takes the oldest, archived or not.
        let removed = try #require(try await store.freeSpace(neededBytes: 100))
        #expect(removed.oldestSentAt == "2026-11-29T12:01:00.000Z")
        #expect(try await store.scannedUsage() == (await store.storageUsage().usedBytes))
        #expect(removed.messageIDs[.primary] == nil, "archived ones are not on the page")
    }

    @Test func eachPurchaseIsCreditedOncePerKeyAcrossAReopen() async throws {
        do {
            let store = try open()
            #expect(try await store.purchasedBytes() == 0)
            #expect(try await store.addPurchasedBytes(10_000_000, idempotencyKey: "a"))
            #expect(try await store.addPurchasedBytes(5, idempotencyKey: "b"))
            #expect(try await !store.addPurchasedBytes(10_000_000, idempotencyKey: "a"), "the same purchase answered again")
            #expect(try await store.purchasedBytes() == 10_000_005)
            await store.close()
        }
        let reopened = try open()
        #expect(try await reopened.purchasedBytes() == 10_000_005, "kept in the file")
        #expect(try await !reopened.addPurchasedBytes(5, idempotencyKey: "b"), "and which keys were credited, too")
        #expect(try await reopened.purchasedBytes() == 10_000_005)
    }

    // MARK: Linked account

    @Test func purgingTheLinkedAccountRemovesEverythingOfItInOneGo() async throws {
        let store = try open()
        try await store.setAccountIDs(AccountIDs(primaryUserId: 1, linkedUserId: 2))
        _ = try await store.apply(messages(1...5), to: .primary, receivedAt: now)
        _ = try await store.apply(messages(1...7), to: .linked, receivedAt: now)
        let primaryBytes = messages(1...5).reduce(0) { $0 + $1.storageSize }
        #expect(try await store.purgeLinkedAccount() == 7)
        #expect(try await store.allIDs(.linked).isEmpty)
        #expect(try await store.chats(of: .linked).isEmpty)
        #expect(await store.cursor(for: .linked) == nil)
        #expect(try await store.accountIDs() == AccountIDs(primaryUserId: 1, linkedUserId: nil))
        #expect(try await store.allIDs(.primary) == [1, 2, 3, 4, 5])
        #expect(await store.storageUsage().usedBytes == primaryBytes)
        let reopened = try open()
        #expect(await reopened.cursor(for: .linked) == nil)
    }

    // MARK: Paging

    @Test func pagesGoNewestFirstWithANextBefore() async throws {
        let store = try open()
        _ = try await store.apply(messages(1...7), to: .primary, receivedAt: now)
        let first = try await store.messages(of: .primary, limit: 3)
        #expect(first.messages.map(\.id) == [7, 6, 5])
        #expect(first.nextBefore == 5)
        let second = try await store.messages(of: .primary, before: first.nextBefore, limit: 3)
        #expect(second.messages.map(\.id) == [4, 3, 2])
        let last = try await store.messages(of: .primary, before: second.nextBefore, limit: 3)
        #expect(last.messages.map(\.id) == [1])
        #expect(last.nextBefore == nil)
        #expect(try await store.messages(of: .linked).messages.isEmpty)
        #expect(try await store.messages(of: .linked).nextBefore == nil)
    }

    @Test func storedMessagesKeepTheirFields() async throws {
        let store = try open()
        let message = UpstreamMessage(id: 42, chatId: 9, sender: "Ann <b>", text: "héllo\n<script>", sentAt: "2026-11-29T11:00:00.000Z")
        _ = try await store.apply([message], to: .linked, receivedAt: now)
        #expect(try await store.messages(of: .linked).messages == [
            StoredMessage(account: .linked, id: 42, chatId: 9, sender: "Ann <b>", text: "héllo\n<script>",
                          sentAt: "2026-11-29T11:00:00.000Z", receivedAt: now),
        ])
    }

    // MARK: Persistence and errors

    @Test func everythingSurvivesAReopen() async throws {
        do {
            let store = try open()
            try await store.setQuota(1_000_000)
            _ = try await store.apply(messages(1...9), to: .primary, receivedAt: now)
        }
        let store = try open()
        #expect(await store.newestID(for: .primary) == 9)
        #expect(await store.storageUsage() == StorageUsage(usedBytes: messages(1...9).reduce(0) { $0 + $1.storageSize }, quotaBytes: 1_000_000))
        #expect(try await store.integrityCheck())
    }

    @Test func aFullDiskIsTheSameOutOfSpaceErrorAndLeavesTheStoreConsistent() async throws {
        let store = try open()
        _ = try await store.apply(messages(1...10), to: .primary, receivedAt: now)
        let pages = try #require(try await store.scalarForTesting("PRAGMA page_count"))
        try await store.executeForTesting("PRAGMA max_page_count = \(pages + 4)")
        var next: Int64 = 11
        var failure: StoreError?
        while failure == nil, next < 100_000 {
            do {
                _ = try await store.apply(messages(next...(next + 49), textLength: 400), to: .primary, receivedAt: now)
                next += 50
            } catch {
                failure = error
            }
        }
        guard case .outOfSpace(_, _, let needed, let diskFull) = failure else {
            Issue.record("expected out of space, got \(String(describing: failure))")
            return
        }
        #expect(diskFull)
        #expect(needed > 0)
        #expect(try await store.integrityCheck())
        let ids = try await store.allIDs(.primary)
        #expect(await store.newestID(for: .primary) == ids.last)
        #expect(ids == Array(1...(next - 1)), "the failed batch left nothing behind")
        #expect(try await store.scannedUsage() == store.storageUsage().usedBytes)
        try await store.executeForTesting("PRAGMA max_page_count = 1073741823")
        #expect(try await store.apply(messages(next...(next + 49), textLength: 400), to: .primary, receivedAt: now).count == 50)
    }

    @Test func aDamagedFileIsACorruptError() throws {
        try Data(repeating: 0x42, count: 16384).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try MessageStore(location: .file(path))
        } throws: { error in
            if case .corrupt = error as? StoreError { return true }
            return false
        }
    }

    @Test func memoryStoresWork() async throws {
        let store = try MessageStore(location: .memory)
        #expect(try await store.apply(messages(1...3), to: .primary, receivedAt: now).count == 3)
        #expect(await store.newestID(for: .primary) == 3)
    }

    // MARK: Readers

    @Test func aReaderNeverSeesHalfABatchWhileTheWriterCommits() async throws {
        let store = try open()
        let reader = try StoreReader(path: path)
        let batchSize: Int64 = 100, total: Int64 = 5000
        let finished = WriterFinished()
        let writer = Task {
            defer { finished.flag.store(true, ordering: .releasing) }
            for start in stride(from: Int64(1), through: total, by: Int(batchSize)) {
                _ = try await store.apply(messages(start...(start + batchSize - 1)), to: .primary, receivedAt: now)
            }
        }
        // Read as long as the writer writes (it ends on its own); every count is a whole batch.
        var observations: Set<Int64> = []
        while !finished.flag.load(ordering: .acquiring) {
            let count = try await reader.count(of: .primary)
            #expect(count % batchSize == 0, "saw \(count) rows: a batch is all or nothing to readers")
            observations.insert(count)
            await Task.yield()
        }
        try await writer.value
        #expect(try await reader.count(of: .primary) == total)
        #expect(observations.allSatisfy { $0 % batchSize == 0 })
    }
}

/// Set by the writer task when it is done (or failed).
final class WriterFinished: Sendable {
    let flag = Atomic<Bool>(false)
}

@Suite("Store location")
struct StoreLocationTests {
    @Test func defaultFileFollowsXDG() {
        #expect(StoreLocation.defaultFile(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == .file("/data/lp-dashboard/store.sqlite"))
        #expect(StoreLocation.defaultFile(environment: ["HOME": "/home/u"]) == .file("/home/u/.local/share/lp-dashboard/store.sqlite"))
        #expect(StoreLocation.defaultFile(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/u"])
            == .file("/home/u/.local/share/lp-dashboard/store.sqlite"), "a relative XDG_DATA_HOME is ignored, as the spec says")
        #expect(StoreLocation(argument: ":memory:") == .memory)
    }

    @Test func theFolderIsCreatedPrivate() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/xdg/lp-dashboard/store.sqlite"
        #expect(throws: StoreError.self, "an explicit path in a missing folder is an error") {
            _ = try MessageStore(location: .file(path))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/xdg"), "and leaves no folders behind")
        let store = try MessageStore(location: .file(path), createFolder: true)
        #expect(try await store.integrityCheck())
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.path + "/xdg/lp-dashboard")
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
    }
}
