import Store
import Upstream

/// What a session answer means for the local copy: another primary user (everything of the
/// previous one removed, so two people's messages never mix), a linked account attached or
/// detached (its messages purged; either way what the user who went had not sent is left behind,
/// never sent as the one who came), the quota (`--quota` plus what was bought, or the upstream's).
/// Applied to the store here; the engine tells the page and its own rules what happened.
struct SessionAdoption: Sendable {
    let store: any EngineStore
    let quotaOverride: Int64?

    struct Outcome: Sendable {
        /// Events for the page, in order.
        var events: [EngineEvent] = []
        /// Lines for the log; `warning` for what the person should notice in it.
        var notes: [(warning: Bool, text: String)] = []
        /// The primary user changed: every stream starts from nothing.
        var everythingForgotten = false
        /// The linked account changed: its stream starts from nothing.
        var linkedForgotten = false
    }

    /// Applies `session` to the store; what happened goes into `outcome` step by step, so that
    /// a failure half-way still tells what was done before it.
    func adopt(_ session: UpstreamSession, into outcome: inout Outcome) async throws(StoreError) {
        var known = try await store.accountIDs()
        // A user who held an account goes (another signed in, the linked one was detached).
        var someoneWent = false
        if let old = known.primaryUserId, old != session.primaryUserId {
            let removed = try await store.removeAllAccounts()
            outcome.notes.append((true, "the upstream signed in user \(session.primaryUserId), not \(old); removed the \(removed) stored message(s) of \(old)"))
            outcome.events += [.primaryAccountChanged(from: old, to: session.primaryUserId, removedMessages: removed),
                               .storage(await store.storageUsage())]
            outcome.everythingForgotten = true
            someoneWent = true
            known = AccountIDs(primaryUserId: nil, linkedUserId: nil)
        }
        if known.linkedUserId != session.linkedUserId {
            outcome.linkedForgotten = true
            if let old = known.linkedUserId {
                let purged = try await store.purgeLinkedAccount()
                outcome.notes.append((false, "linked account \(old) detached; purged \(purged) message(s)"))
                outcome.events.append(.accountUnlinked(userId: old))
                someoneWent = true
            }
            if let new = session.linkedUserId {
                outcome.notes.append((false, "linked account \(new) attached"))
                outcome.events.append(.accountLinked(userId: new, firstSync: known.primaryUserId == nil))
            }
        }
        let ids = AccountIDs(primaryUserId: session.primaryUserId, linkedUserId: session.linkedUserId)
        if ids != known {
            try await store.setAccountIDs(ids)
            if someoneWent {
                // The outbox belongs to who wrote it: the user who went leaves theirs behind (the
                // one who came back finds theirs again).
                let leftBehind = try await store.leftBehindOutbox()
                if !leftBehind.isEmpty {
                    outcome.notes.append((true, "\(leftBehind.count) unsent message(s) were written by a user who is not signed in now: kept, not sent"))
                }
                outcome.events.append(.outboxLeftBehind(leftBehind))
            }
        }
        var quota = session.storageQuotaBytes
        if let quotaOverride {
            quota = quotaOverride + (try await store.purchasedBytes())
        }
        if await store.storageUsage().quotaBytes != quota {
            try await store.setQuota(quota)
            outcome.events.append(.storage(await store.storageUsage()))
        }
    }
}
