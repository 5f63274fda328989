import Engine
import Foundation
import Logging
import Recovery
import Store
import Upstream

/// Runs the options of every error the engine raises, against the engine, the store and the upstream.
struct EngineAttempter: RecoveryAttempter {
    let engine: SyncEngine
    let store: MessageStore
    let now: @Sendable () -> Date
    private let log = Logger("recovery")

    init(engine: SyncEngine, store: MessageStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.engine = engine
        self.store = store
        self.now = now
    }

    func attempt(_ option: RecoveryOption, for error: UserFacingError) async -> AttemptResult {
        switch (error.type, option.id) {
        case ("/problems/out-of-space", "cancel"):
            // The view goes; the engine stays paused and the banner keeps a way back to the options.
            var banner = error
            banner.presentation = .banner
            return .failed(banner)
        case ("/problems/out-of-space", "free-space"):
            return await freeSpace(error)
        case ("/problems/out-of-space", "try-again"):
            // The disk was full; maybe it has room now.
            return await engine.resumeAndWait() ? .recovered : .failed(error)
        case ("/problems/out-of-space", "buy-space"), ("/problems/purchase-declined", "try-again"):
            return await buySpace(error)
        case ("/problems/purchase-declined", "cancel"):
            return .recovered
        case (_, "cancel"):
            return .recovered
        case (_, "try-again"):
            if await engine.retryAndWait() { return .recovered }
            var again = error
            if let problem = await engine.problems().first(where: { ErrorCatalog.error(for: $0, at: now()).causeKey == error.causeKey }) {
                again.debug = problem.debug
            }
            return .failed(again)
        default:
            return .failed(error)
        }
    }

    private func freeSpace(_ shown: UserFacingError) async -> AttemptResult {
        do {
            let freed = try await store.freeSpace(diskFull: shown.extensions["diskFull"] == 1)
            log.info("freed \(freed) bytes")
            guard freed > 0 else {
                var unchanged = shown
                unchanged.debug = "free space found nothing to delete above 75 % of the quota"
                return .failed(unchanged)
            }
            await engine.resume()
            return .recovered
        } catch {
            var failed = shown
            failed.debug = "free space failed: \(error)"
            return .failed(failed)
        }
    }

    /// Buys what the batch needs (at least 10 MB) under a key fixed for this error, so retrying a
    /// purchase can never charge twice. Never retried automatically: only a click runs it.
    private func buySpace(_ shown: UserFacingError) async -> AttemptResult {
        let needed = shown.extensions["neededBytes"] ?? 0
        let bytes = max(10_000_000, needed * 2)
        let key = shown.attemptContext["purchaseKey"] ?? "buy-space-" + shown.id
        do {
            let token = try await engine.tokenForCall()
            let quota = try await engine.upstreamAPI.purchaseStorage(token: token, bytes: bytes, idempotencyKey: key)
            await engine.noteStoragePurchased(bytes: bytes, newUpstreamQuota: quota)
            await engine.resume()
            log.info("bought \(bytes) bytes; quota now \(quota)")
            return .recovered
        } catch .paymentDeclined {
            var declined = ErrorCatalog.purchaseDeclined(debug: "402 from the upstream for key \(key)", at: now())
            // Retrying the declined purchase uses the very same key.
            declined.attemptContext["purchaseKey"] = key
            declined.extensions["neededBytes"] = needed
            return .failed(declined)
        } catch {
            var failed = shown
            failed.debug = "purchase failed: \(error)"
            return .failed(failed)
        }
    }
}
