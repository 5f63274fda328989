import Store
import Upstream

/// What the engine needs of the local copy. `MessageStore` is it; the engine sees it through
/// this protocol, as it sees the upstream through `UpstreamAPI`, so tests can hold the engine
/// at any await on the store (and check that a cycle gone stale meanwhile acts on nothing).
public protocol EngineStore: Sendable {
    func accountIDs() async throws(StoreError) -> AccountIDs
    func setAccountIDs(_ ids: AccountIDs) async throws(StoreError)
    func removeAllAccounts() async throws(StoreError) -> Int
    func purgeLinkedAccount() async throws(StoreError) -> Int
    func leftBehindOutbox() async throws(StoreError) -> [OutboxEntry]
    func cursor(for account: AccountRole) async -> String?
    func newestID(for account: AccountRole) async -> Int64?
    func storageUsage() async -> StorageUsage
    func setQuota(_ bytes: Int64?) async throws(StoreError)
    func purchasedBytes() async throws(StoreError) -> Int64
    func addPurchasedBytes(_ bytes: Int64, idempotencyKey: String) async throws(StoreError) -> Bool
    func checkWritable() async throws(StoreError)
    func archiveAccount(_ account: AccountRole, at archivedAt: String) async throws(StoreError) -> Int
    func applyBatch(_ batch: [UpstreamMessage], to account: AccountRole, receivedAt: String, cursor: String?,
                    unread: UnreadCounting, chats: ChatChanges) async throws(StoreError) -> AppliedBatch
}

extension MessageStore: EngineStore {}
