import Foundation
import Upstream

/// What the recovery attempters call: Try again waits for the next try to connect and not be
/// refused, Free space and Buy more space for the next batch to be stored; a purchase, and
/// syncing again from an upstream that went back.
extension SyncEngine {
    /// Skips the wait (or starts the cycle) and suspends until that try has connected and its
    /// poll was answered or not refused within `tryAgainSettle` (true), or failed (false); true at
    /// once when the connection is live. What a "Try again" button runs. A cancelled caller stops
    /// waiting (false); the try itself goes on.
    public func retryAndWait() async -> Bool {
        if tag != nil && status.state == .live { return true }
        if tag == nil && !policy.shouldRun { return false }
        let id = outcomeWaiters.makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(returning: false) }
                outcomeWaiters.add(continuation, id: id)
                retryNow()
            }
        } onCancel: {
            Task { await self.forgetOutcomeWaiter(id) }
        }
    }

    func reportOutcome(_ connected: Bool) {
        settleWait?.cancel()
        settleWait = nil
        outcomeWaiters.resumeAll(returning: connected)
    }

    /// How the wait for the next batch ended (`resumeAndWait`).
    public enum BatchOutcome: Sendable, Equatable {
        /// The next answered poll was stored.
        case stored
        /// It was not: `problem` says why (out of space again, a connection failure); nil when
        /// syncing stopped or the caller was cancelled.
        case notStored(EngineProblem?)
    }

    /// Resumes after a pause (or skips a retry wait) and suspends until the next answered poll
    /// was stored or it became clear that it was not. What Free space and Buy more space wait on
    /// before they call the error recovered.
    public func resumeAndWait() async -> BatchOutcome {
        let id = batchWaiters.makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(returning: .notStored(nil)) }
                batchWaiters.add(continuation, id: id)
                perform(policy.paused ? policy.resume() : policy.retryNow())
                if !policy.shouldRun { reportBatch(.notStored(nil)) }
            }
        } onCancel: {
            Task { await self.forgetBatchWaiter(id) }
        }
    }

    func reportBatch(_ outcome: BatchOutcome) {
        batchWaiters.resumeAll(returning: outcome)
    }

    private func settled(_ tag: UUID) {
        guard isCurrent(tag), status.state == .live else { return }
        reportOutcome(true)
    }

    private func forgetOutcomeWaiter(_ id: UInt64) {
        outcomeWaiters.cancel(id, returning: false)
    }

    private func forgetBatchWaiter(_ id: UInt64) {
        batchWaiters.cancel(id, returning: .notStored(nil))
    }

    /// Connected is not yet recovered: a poll refused at once (409, 500) would say otherwise, so
    /// whoever waits on `retryAndWait` hears "connected" once the poll was not refused within
    /// `tryAgainSettle` (or sooner, when it is answered).
    func startSettleWait() {
        guard !outcomeWaiters.isEmpty, let tag else { return }
        let clock = self.clock, settle = options.tryAgainSettle
        settleWait?.cancel()
        settleWait = Task { [weak self] in
            guard (try? await clock.sleep(for: settle)) != nil else { return }
            await self?.settled(tag)
        }
    }

    /// For an upstream that went back: sets the messages of the accounts it is behind on aside
    /// (archived, still stored and counted), forgets their cursors and syncs them from the
    /// beginning, silently, as a first sync. Suspends like `retryAndWait`. Whether it is live
    /// again, and how many messages were set aside.
    public func resyncFromServer() async -> (live: Bool, setAside: Int) {
        guard policy.pausedBy == .upstreamBehind else { return (await retryAndWait(), 0) }
        let at = Timestamp.string(now())
        var setAside = 0
        for account in behindAccounts {
            do {
                let count = try await store.archiveAccount(account, at: at)
                setAside += count
                log.info("set \(count) \(account) message(s) aside; syncing the \(account) account from the beginning")
                // Every window drops what it shows of the account and hears of what comes now,
                // whatever its ids, as new.
                emit(.accountSetAside(account: account, messages: count, usage: await store.storageUsage()))
            } catch {
                raise(EngineProblem(kind: .storageFailure, debug: "archiving the \(account) account failed: \(error)"))
                return (false, setAside)
            }
            deliveries.forget(account)
        }
        behindAccounts = []
        perform(policy.resume())
        return (await retryAndWait(), setAside)
    }

    /// How a purchase went, as far as this side can know.
    public enum PurchaseOutcome: Sendable, Equatable {
        /// Bought; the quota now in force.
        case bought(quota: Int64)
        /// No session could be had, so nothing was sent (and nothing charged).
        case notSent(UpstreamError)
        /// Sent, and it failed: declined (`.paymentDeclined`), or no answer that says.
        case failed(UpstreamError)
    }

    /// Buys `bytes` of storage from the upstream under `idempotencyKey` (the same key again is the
    /// same purchase, never charged twice), on the cycle's session or a new one, and adds them to
    /// the quota.
    public func purchaseStorage(bytes: Int64, idempotencyKey: String) async -> PurchaseOutcome {
        let session: String
        do {
            session = try await tokenForCall()
        } catch {
            return .notSent(error)
        }
        do {
            let upstreamQuota = try await upstream.purchaseStorage(token: session, bytes: bytes, idempotencyKey: idempotencyKey)
            return .bought(quota: await noteStoragePurchased(bytes: bytes, newUpstreamQuota: upstreamQuota, idempotencyKey: idempotencyKey))
        } catch {
            return .failed(error)
        }
    }

    /// Adds purchased bytes to the quota (when `--quota` overrides the upstream's figure), once per
    /// `idempotencyKey`: a purchase answered again (a retried click) is credited once. Returns the
    /// quota now in force.
    @discardableResult
    func noteStoragePurchased(bytes: Int64, newUpstreamQuota: Int64, idempotencyKey: String) async -> Int64 {
        // Kept in the store: a restart must not forget what was bought on top of `--quota`, nor
        // which purchases were credited already.
        _ = try? await store.addPurchasedBytes(bytes, idempotencyKey: idempotencyKey)
        let purchased = (try? await store.purchasedBytes()) ?? bytes
        let quota = options.quotaOverride.map { $0 + purchased } ?? newUpstreamQuota
        try? await store.setQuota(quota)
        emit(.storage(await store.storageUsage()))
        return quota
    }

    /// A token for a call outside the cycle (a purchase while paused): the cycle's, or a new session's.
    private func tokenForCall() async throws(UpstreamError) -> String {
        if let token { return token }
        return try await upstream.createSession().token
    }
}
