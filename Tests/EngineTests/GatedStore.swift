import Engine
import Store
import Synchronization
import Upstream

/// The real store behind a gate, so a test can stop the engine at any one of its awaits on the
/// store: `holdNext(.checkWritable)` makes the next such call wait at the gate until
/// `release(_:)`, and `failNext(_:with:)` makes the next one fail. Everything else passes straight
/// through to the `MessageStore`.
final class GatedStore: EngineStore {
    enum Call: Hashable, Sendable {
        case accountIDs, setAccountIDs, removeAllAccounts, purgeLinkedAccount, leftBehindOutbox, cursor, newestID, storageUsage, setQuota,
             purchasedBytes, addPurchasedBytes, checkWritable, archiveAccount, apply
    }

    let store: MessageStore

    private struct State {
        var toHold: Set<Call> = []
        var held: [Call: CheckedContinuation<Void, Never>] = [:]
        var arrivalWaiters: [Call: [CheckedContinuation<Void, Never>]] = [:]
        var failures: [Call: StoreError] = [:]
    }

    private let state = Mutex(State())

    init(_ store: MessageStore) {
        self.store = store
    }

    /// The next call of this kind waits at the gate.
    func holdNext(_ call: Call) {
        state.withLock { _ = $0.toHold.insert(call) }
    }

    /// Suspends until a call of this kind is waiting at the gate.
    func waitUntilHeld(_ call: Call) async {
        await withCheckedContinuation { continuation in
            let already = state.withLock { state -> Bool in
                if state.held[call] != nil { return true }
                state.arrivalWaiters[call, default: []].append(continuation)
                return false
            }
            if already { continuation.resume() }
        }
    }

    /// Lets the held call go on.
    func release(_ call: Call) {
        state.withLock { $0.held.removeValue(forKey: call) }?.resume()
    }

    /// The next call of this kind fails with `error` (after any hold).
    func failNext(_ call: Call, with error: StoreError) {
        state.withLock { $0.failures[call] = error }
    }

    private func pass(_ call: Call) async throws(StoreError) {
        let hold = state.withLock { $0.toHold.remove(call) != nil }
        if hold {
            await withCheckedContinuation { continuation in
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.held[call] = continuation
                    return state.arrivalWaiters.removeValue(forKey: call) ?? []
                }
                waiters.forEach { $0.resume() }
            }
        }
        if let failure = state.withLock({ $0.failures.removeValue(forKey: call) }) { throw failure }
    }

    /// For the calls that cannot fail: a failure set for them is a mistake in the test.
    private func passInfallibly(_ call: Call) async {
        do { try await pass(call) } catch { preconditionFailure("\(call) cannot fail") }
    }

    func accountIDs() async throws(StoreError) -> AccountIDs {
        try await pass(.accountIDs)
        return try await store.accountIDs()
    }

    func setAccountIDs(_ ids: AccountIDs) async throws(StoreError) {
        try await pass(.setAccountIDs)
        try await store.setAccountIDs(ids)
    }

    func removeAllAccounts() async throws(StoreError) -> Int {
        try await pass(.removeAllAccounts)
        return try await store.removeAllAccounts()
    }

    func purgeLinkedAccount() async throws(StoreError) -> Int {
        try await pass(.purgeLinkedAccount)
        return try await store.purgeLinkedAccount()
    }

    func leftBehindOutbox() async throws(StoreError) -> [OutboxEntry] {
        try await pass(.leftBehindOutbox)
        return try await store.leftBehindOutbox()
    }

    func cursor(for account: AccountRole) async -> String? {
        await passInfallibly(.cursor)
        return await store.cursor(for: account)
    }

    func newestID(for account: AccountRole) async -> Int64? {
        await passInfallibly(.newestID)
        return await store.newestID(for: account)
    }

    func storageUsage() async -> StorageUsage {
        await passInfallibly(.storageUsage)
        return await store.storageUsage()
    }

    func setQuota(_ bytes: Int64?) async throws(StoreError) {
        try await pass(.setQuota)
        try await store.setQuota(bytes)
    }

    func purchasedBytes() async throws(StoreError) -> Int64 {
        try await pass(.purchasedBytes)
        return try await store.purchasedBytes()
    }

    func addPurchasedBytes(_ bytes: Int64, idempotencyKey: String) async throws(StoreError) -> Bool {
        try await pass(.addPurchasedBytes)
        return try await store.addPurchasedBytes(bytes, idempotencyKey: idempotencyKey)
    }

    func checkWritable() async throws(StoreError) {
        try await pass(.checkWritable)
        try await store.checkWritable()
    }

    func archiveAccount(_ account: AccountRole, at archivedAt: String) async throws(StoreError) -> Int {
        try await pass(.archiveAccount)
        return try await store.archiveAccount(account, at: archivedAt)
    }

    func applyBatch(_ batch: [UpstreamMessage], to account: AccountRole, receivedAt: String, cursor: String?,
                    unread: UnreadCounting, chats: ChatChanges) async throws(StoreError) -> AppliedBatch {
        try await pass(.apply)
        return try await store.applyBatch(batch, to: account, receivedAt: receivedAt, cursor: cursor, unread: unread, chats: chats)
    }
}
