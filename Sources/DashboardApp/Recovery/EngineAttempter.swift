import Engine
import Foundation
import Logging
import Recovery
import Store
import Upstream

/// Runs the options of every error the engine raises, against the engine and the store; of the
/// upstream it knows only what it was handed (`UpstreamAccess`).
///
/// An option answers `recovered` only once it is true: Free space and Buy more space wait until
/// the messages that did not fit are stored; Try again waits for the try it starts. A failure
/// comes back as the error to show now, with the reason in words (`failing(because:)`).
struct EngineAttempter: RecoveryAttempter {
    let engine: SyncEngine
    let store: MessageStore
    let upstream: UpstreamAccess
    /// Where Try again and Delete of an unsent message go.
    let outboxes: Outboxes
    let now: @Sendable () -> Date
    /// Told which messages Free space removed, so every window drops them.
    let removed: @Sendable (FreeSpacePlan) async -> Void
    /// Where Save to a file writes the unsent messages an account left behind.
    let exports: UnsentExport
    private let log = Logger("recovery")

    init(engine: SyncEngine, store: MessageStore, upstream: UpstreamAccess, outboxes: Outboxes = Outboxes(),
         exports: UnsentExport = UnsentExport(folder: NSTemporaryDirectory()),
         now: @escaping @Sendable () -> Date = { Date() }, removed: @escaping @Sendable (FreeSpacePlan) async -> Void = { _ in }) {
        self.engine = engine
        self.store = store
        self.upstream = upstream
        self.outboxes = outboxes
        self.exports = exports
        self.now = now
        self.removed = removed
    }

    /// The error to show for `problem`; out of space names what Free space would remove.
    func error(for problem: EngineProblem) async -> UserFacingError {
        guard problem.kind == .outOfSpace else { return ErrorCatalog.error(for: problem, at: now(), signsIn: upstream.signIn != nil) }
        let plan = try? await store.freeSpacePlan(neededBytes: problem.neededBytes ?? 0, diskFull: problem.diskFull)
        return ErrorCatalog.error(for: problem, at: now(), freeSpacePlan: plan ?? nil, canBuySpace: upstream.features.sellsStorage)
    }

    func attempt(_ option: RecoveryOption, for error: UserFacingError, input: AttemptInput) async -> AttemptResult {
        switch option.id {
        case .notNow:
            // The view goes; the cause stays (out of space: syncing stays paused) and the status
            // bar keeps a way back to the options.
            var banner = error
            banner.presentation = .banner
            let summary = error.kind == .unsentLeftBehind ? "Hidden for now; the messages stay on this computer, not sent."
                : "Hidden for now; syncing stays paused until there is room."
            return .setAside(kept: banner, summary: summary)
        case .dismiss:
            return .setAside(kept: nil, summary: "Nothing was bought.")
        case .stopSyncing:
            // Nothing is left that could fail; the status bar offers Start syncing.
            await engine.stop()
            return .setAside(kept: nil, summary: "You stopped syncing.")
        case .freeSpace:
            return await freeSpace(error)
        case .buySpace:
            return await buySpace(error)
        case .signIn:
            return await signIn(error, password: input.password)
        case .resync:
            let (live, setAside) = await engine.resyncFromServer()
            guard live else { return .failed(await currentError(replacing: error)) }
            // They leave the page: it says where they went.
            return .recovered(summary: setAside == 0 ? nil : "\(setAside) message\(setAside == 1 ? " was" : "s were") set aside: "
                + "they stay in this computer's copy, not shown and counted in the storage used, until Free space removes them "
                + "with the other oldest messages. The server's messages are shown now.")
        case .discard where error.kind == .unsentLeftBehind:
            return await deleteLeftBehind(error)
        case .discard:
            return await discard(error)
        case .export:
            return await saveLeftBehind(error)
        case .tryAgain:
            switch error.kind {
            case .sendFailed:
                return await sendAgain(error)
            case .unsentLeftBehind:
                return .failed(error.failing(because: "They can be sent only as the user who wrote them."))
            case .outOfSpace:
                // The disk was full; maybe it has room now.
                return await storeWaitingBatch(shown: error, after: nil)
            case .purchaseDeclined:
                return await buySpace(error)
            case .upstreamError, .badResponse, .upstreamUnreachable, .noInternet, .tokenRefused, .anotherPoller, .upstreamBehind,
                 .storageFailure:
                if await engine.retryAndWait() { return .recovered }
                return .failed(await currentError(replacing: error))
            }
        }
    }

    /// The same message again, under the same key: one real try, and its answer.
    private func sendAgain(_ shown: UserFacingError) async -> AttemptResult {
        guard case .send(let message) = shown.facts, let account = AccountRole(name: message.account),
              let sender = outboxes.sender(for: account) else {
            return .failed(shown.failing(because: "This dashboard cannot send messages to this chat server."))
        }
        switch await sender.tryAgain(message.outboxId) {
        case .sent:
            return .recovered(summary: "Sent.")
        case .queued:
            return .recovered(summary: "It is queued and goes as soon as the chat server can be reached.")
        case .notFailed:
            return .recovered
        case .refused(let refusal):
            let words = ErrorCatalog.sendFailed(OutboxEntry(id: message.outboxId, account: account, chatId: message.chatId, text: "",
                                                            state: .failed, createdAt: "", upstreamKey: "", failure: refusal), at: now())
            return .failed(shown.failing(because: "It was refused again. " + words.detail))
        }
    }

    /// Takes an unsent message out of the outbox; it never reaches the chat.
    private func discard(_ shown: UserFacingError) async -> AttemptResult {
        guard case .send(let message) = shown.facts, let account = AccountRole(name: message.account),
              let sender = outboxes.sender(for: account) else {
            return .setAside(kept: nil, summary: "There is no such message to delete.")
        }
        do {
            switch try await sender.discard(message.outboxId) {
            case .removed, .notFound:
                return .setAside(kept: nil, summary: "Deleted; it was not sent.")
            case .sending:
                return .failed(shown.failing(because: "It is being sent right now, so it cannot be deleted."))
            }
        } catch {
            var failed = shown
            failed.debug = "discarding outbox entry \(message.outboxId): \(error)"
            return .failed(failed.failing(because: "It could not be deleted from this computer's copy."))
        }
    }

    /// Writes every unsent message left behind now to a new file, then takes them out of the
    /// outbox; nothing leaves the outbox unless the file holding it was written whole.
    private func saveLeftBehind(_ shown: UserFacingError) async -> AttemptResult {
        do {
            let entries = try await store.leftBehindOutbox()
            guard !entries.isEmpty else { return .recovered(summary: "There is nothing left to save: no message is waiting for another user.") }
            let file = try exports.write(entries, at: now())
            let deleted = try await store.deleteLeftBehindOutbox(entries.map(\.id))
            return .recovered(summary: "Saved \(entries.count) message\(entries.count == 1 ? "" : "s") to \(file); "
                + "\(deleted == entries.count ? "they are" : "\(deleted) of them are") no longer waiting to be sent.")
        } catch {
            var failed = shown
            failed.debug = "saving the unsent messages left behind: \(error)"
            return .failed(failed.failing(because: "They could not be saved, so they were kept as they are."))
        }
    }

    private func deleteLeftBehind(_ shown: UserFacingError) async -> AttemptResult {
        do {
            let entries = try await store.leftBehindOutbox()
            let deleted = try await store.deleteLeftBehindOutbox(entries.map(\.id))
            return .recovered(summary: "Deleted \(deleted) unsent message\(deleted == 1 ? "" : "s"); \(deleted == 1 ? "it was" : "they were") never sent.")
        } catch {
            var failed = shown
            failed.debug = "deleting the unsent messages left behind: \(error)"
            return .failed(failed.failing(because: "They could not be deleted from this computer's copy."))
        }
    }

    /// Hands the typed password to the upstream for its next session, tries, and takes the
    /// password back when the try did not get through, so it is never used for a later sign-in.
    private func signIn(_ error: UserFacingError, password: String?) async -> AttemptResult {
        guard let signIn = upstream.signIn, let password else {
            return .failed(error.failing(because: "Signing in again needs the account's password."))
        }
        signIn.signInAgain(password: password)
        if await engine.retryAndWait() { return .recovered }
        signIn.withdrawTypedPassword()
        return .failed(error.failing(because: "The homeserver did not accept the password, or could not be reached."))
    }

    /// The error to show after a failed try: the engine's current problem (it may be another kind
    /// now), else the one shown, each saying why in its own words.
    private func currentError(replacing shown: UserFacingError) async -> UserFacingError {
        let problems = await engine.problems()
        let current = problems.first { $0.kind.isConnectionProblem || [.storageFailure, .noInternet, .outOfSpace, .upstreamBehind].contains($0.kind) }
        guard let current else {
            let state = await engine.connectionStatus().state
            let reason = state == .stopped ? "Syncing is stopped, so nothing was tried." : "The try did not get through."
            return shown.failing(because: reason)
        }
        let next = await error(for: current)
        return next.failing(because: next.detail)
    }

    private func freeSpace(_ shown: UserFacingError) async -> AttemptResult {
        guard let space = shown.space else { return .failed(shown.failing(because: "Only storage that is full can be freed.")) }
        let removed: FreeSpacePlan?
        do {
            removed = try await store.freeSpace(neededBytes: space.neededBytes, diskFull: space.diskFull)
        } catch {
            var failed = shown
            failed.debug = "free space failed: \(error)"
            return .failed(failed.failing(because: "The oldest messages could not be removed."))
        }
        guard let removed else {
            return .failed(shown.failing(because: "There was nothing to remove that would make room."))
        }
        log.info("freed \(removed.bytes) bytes: \(removed.messageCount) message(s)")
        await self.removed(removed)
        let room = space.quotaBytes.map {
            ", " + ErrorCatalog.freeSpaceRoom(neededBytes: space.neededBytes, quota: $0).replacingOccurrences(of: "to make", with: "making")
        } ?? ""
        let what = "Deleted the \(removed.messageCount == 1 ? "oldest message" : "\(removed.messageCount) oldest messages") (\(ErrorCatalog.sizeInWords(removed.bytes)))\(room)"
        return await storeWaitingBatch(shown: shown, after: what)
    }

    /// Buys what the batch needs (at least 10 MB) under a key fixed for this error, so retrying a
    /// purchase can never charge twice. Never retried automatically: only a click runs it.
    private func buySpace(_ shown: UserFacingError) async -> AttemptResult {
        let needed: Int64, earlierKey: String?
        switch shown.facts {
        case .space(let space): (needed, earlierKey) = (space.neededBytes, space.purchaseKey)
        case .purchase(let purchase): (needed, earlierKey) = (purchase.neededBytes, purchase.key)
        case .none, .send, .leftBehind: return .failed(shown.failing(because: "Only storage that is full can be bought for."))
        }
        let bytes = ErrorCatalog.purchaseBytes(neededBytes: needed)
        let key = earlierKey ?? "buy-space-" + shown.id
        let effective: Int64
        switch await engine.purchaseStorage(bytes: bytes, idempotencyKey: key) {
        case .bought(let quota):
            effective = quota
            log.info("bought \(bytes) bytes; quota now \(effective)")
        case .notSent(let error):
            var failed = shown
            failed.debug = "no session for the purchase: \(error)"
            return .failed(failed.failing(because: "The chat service could not be reached to buy space. Nothing was sent, so nothing was charged."))
        case .failed(.paymentDeclined):
            // Retrying the declined purchase uses the very same key; it closes with the error it came from.
            var declined = ErrorCatalog.purchaseDeclined(PurchaseAttempt(key: key, neededBytes: needed), bytes: bytes,
                                                         debug: "402 from the upstream for key \(key)", at: now())
            declined.origin = shown.origin ?? shown.causeKey
            return .failed(declined)
        case .failed(let error):
            // No answer (or not one that says): the purchase may have gone through. The same key
            // again cannot charge twice, so trying again is safe and tells.
            var failed = shown
            failed.debug = "purchase under key \(key): \(error)"
            if case .space(var space) = failed.facts {
                space.purchaseKey = key
                failed.facts = .space(space)
            }
            return .failed(failed.failing(because: ErrorCatalog.purchaseOutcomeUnknown))
        }
        let bought = "Added \(ErrorCatalog.sizeInWords(bytes)) of storage: you now have \(ErrorCatalog.sizeInWords(effective))"
        let outcome = await storeWaitingBatch(shown: shown, after: bought)
        if case .failed = outcome, shown.kind == .purchaseDeclined {
            // The purchase went through: the declined error is over whatever happens next (the
            // out-of-space error, still open, says what stands in the way now).
            return .recovered(summary: bought + ".")
        }
        return outcome
    }

    /// Resumes syncing and answers once the messages that waited are stored, or with what stands
    /// in the way; `done` says what the option did first ("Removed the 12 oldest messages (2 KB)"),
    /// and the answer says it either way.
    private func storeWaitingBatch(shown: UserFacingError, after done: String?) async -> AttemptResult {
        let problem: EngineProblem?
        switch await engine.resumeAndWait() {
        case .stored:
            return .recovered(summary: done.map { "\($0). The messages that waited are stored and syncing goes on." })
        case .notStored(let reason):
            problem = reason
        }
        let next = await problem.asyncMap { await error(for: $0) } ?? shown
        let reason = switch problem?.kind {
        case .outOfSpace?: "the waiting messages still do not fit."
        case nil: "syncing stopped before the waiting messages could be stored."
        case _?: next.detail.prefix(1).lowercased() + next.detail.dropFirst()
        }
        let sentence = done.map { "\($0), but \(reason)" } ?? reason.prefix(1).uppercased() + reason.dropFirst()
        return .failed(next.failing(because: sentence))
    }
}

extension Optional {
    /// `map` for an asynchronous transform.
    func asyncMap<T>(_ transform: (Wrapped) async -> T) async -> T? {
        guard let self else { return nil }
        return await transform(self)
    }
}
