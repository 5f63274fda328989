import Engine
import Foundation
import Upstream
import Recovery
import Store

/// The concrete recoverable errors of CONTRACT section 6: neutral words for people, the cause in `debug`.
///
/// The cancelling option of a connection or storage problem stops syncing and is titled so
/// ("Stop syncing"; the banner then offers Start syncing), so the words match what it does.
enum ErrorCatalog {
    /// A purchase whose answer never came (a cut connection, a timeout, an error status): it may
    /// have gone through, and only the same key again can tell without charging twice.
    static let purchaseOutcomeUnknown = "The chat service's answer to the purchase did not arrive, so it is not known whether it went through. "
        + "Trying again is safe: it repeats the same purchase, which is never charged twice."

    /// - Parameters:
    ///   - canBuySpace: the upstream sells storage (Buy more space is offered).
    ///   - signsIn: the upstream takes a password (a refused session offers Sign in again).
    static func error(for problem: EngineProblem, at date: Date, freeSpacePlan: FreeSpacePlan? = nil, canBuySpace: Bool = true,
                      signsIn: Bool = false) -> UserFacingError {
        switch problem.kind {
        case .upstreamError:
            UserFacingError(type: "/problems/upstream-error", title: "The chat server is having trouble",
                             detail: "It answered with an error, so new messages cannot be fetched right now.",
                             suggestion: "This usually passes by itself: syncing retries on its own, or try again now.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .badResponse:
            UserFacingError(type: "/problems/bad-response", title: "The chat server's answer could not be read",
                             detail: "Something answered in place of the chat server, or its answer was cut short.",
                             suggestion: "If this network asks you to sign in, do that first. Syncing retries on its own.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .unreachable:
            UserFacingError(type: "/problems/upstream-unreachable", title: "The chat server cannot be reached",
                             detail: "The connection to it failed or was cut.",
                             suggestion: "Syncing retries on its own; you can also try again now.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .noInternet:
            UserFacingError(type: "/problems/no-internet", title: "You are offline",
                             detail: "This computer has no network connection at the moment.",
                             suggestion: "Syncing starts again as soon as the connection is back.",
                             presentation: .banner, options: [.tryAgain], debug: problem.debug, createdAt: date)
        case .outOfSpace:
            outOfSpace(problem, at: date, freeSpacePlan: freeSpacePlan, canBuySpace: canBuySpace)
        case .tokenRefused where signsIn:
            UserFacingError(type: "/problems/token-refused", title: "Sign in to the homeserver again",
                             detail: "The homeserver no longer accepts this dashboard's session: it was signed out elsewhere, or the password changed.",
                             suggestion: "Sign in again with the account's password. It is used once to get a new session and is not stored.",
                             presentation: .alert, options: [.signIn, .stopSyncing], debug: problem.debug, createdAt: date)
        case .tokenRefused:
            UserFacingError(type: "/problems/token-refused", title: "The chat server won't let this dashboard in",
                             detail: "It turned down the sign-in it had just given, so no new messages can be fetched.",
                             suggestion: "Syncing keeps trying on its own, less often each time. Try again now, or stop syncing.",
                             presentation: .alert, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .anotherPoller:
            UserFacingError(type: "/problems/another-poller", title: "Syncing continues somewhere else",
                             detail: "Another window or device using the same session took over fetching messages.",
                             suggestion: "Try again to take over here, or stop syncing here to leave it to the other one.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .upstreamBehind:
            UserFacingError(type: "/problems/upstream-behind", title: "The chat server has fewer messages than this computer",
                             detail: "Its newest message is older than the newest one stored here. It may have been reset or restored from a backup, or another account answers at its address.",
                             suggestion: "Keep these and sync again: the messages stored here are set aside, kept and counted, and the server's are fetched anew. Or stop syncing and look into it first.",
                             presentation: .view, options: [.stopSyncing, .resync], debug: problem.debug, createdAt: date)
        case .storageFailure:
            UserFacingError(type: "/problems/storage-failure", title: "Messages cannot be saved",
                             detail: "The local copy on this computer could not be written.",
                             suggestion: "Try again. If it keeps happening, check the disk the dashboard stores its data on.",
                             presentation: .alert, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        }
    }

    /// Out of space with the options that can work here: Free space only when removing old
    /// messages makes room for the waiting ones (and saying what it removes), Buy more space only
    /// where the upstream sells space and the quota (not the disk) is full.
    static func outOfSpace(_ problem: EngineProblem, at date: Date, freeSpacePlan: FreeSpacePlan?, canBuySpace: Bool = true,
                           presentation: Presentation = .view) -> UserFacingError {
        let quota = problem.usage?.quotaBytes
        var extensions: [String: Int64] = [:]
        extensions["usedBytes"] = problem.usage?.usedBytes
        extensions["quotaBytes"] = quota
        extensions["neededBytes"] = problem.neededBytes
        if problem.diskFull { extensions["diskFull"] = 1 }
        // Cancel here only hides the view (syncing stays paused), so it says so.
        var options: [RecoveryOption] = [.notNow]
        if let plan = freeSpacePlan {
            options.append(RecoveryOption.freeSpace.confirming(freeSpaceQuestion(plan, neededBytes: problem.neededBytes ?? 0, quota: quota)))
            extensions["freeSpaceMessages"] = Int64(plan.messageCount)
            extensions["freeSpaceBytes"] = plan.bytes
        }
        if problem.diskFull || quota == nil {
            // Buying quota cannot help a full disk: there the way out is making room and trying again.
            options.append(.tryAgain)
            return UserFacingError(type: "/problems/out-of-space", title: "The disk is full",
                                   detail: "The disk this computer stores messages on is full.",
                                   suggestion: "Make room on this computer's disk and try again\(freeSpacePlan == nil ? "" : ", or free space by removing the oldest messages"). New messages wait on the server meanwhile.",
                                   presentation: presentation, options: options,
                                   debug: problem.debug, createdAt: date, extensions: extensions)
        }
        if canBuySpace {
            options.append(RecoveryOption.buySpace.confirming(
                "This buys \(megabytes(purchaseBytes(neededBytes: problem.neededBytes ?? 0))) more storage from the chat service, which may be charged."))
        }
        let way = switch (freeSpacePlan != nil, canBuySpace) {
        case (true, true): "Free some space or buy more to keep syncing."
        case (true, false): "Free some space to keep syncing."
        case (false, true): "Buy more space to keep syncing."
        case (false, false): "The waiting messages are larger than the whole quota."
        }
        return UserFacingError(type: "/problems/out-of-space", title: spaceTitle(quota: quota!, used: problem.usage?.usedBytes),
                                detail: spaceDetail(quota: quota!, used: problem.usage?.usedBytes, needed: problem.neededBytes),
                                suggestion: way + " Nothing is lost while you decide: new messages wait on the server.",
                                presentation: presentation, options: options,
                                debug: problem.debug, createdAt: date, extensions: extensions)
    }

    /// "Storage is full" only when it nearly is; else what is true: the new messages are larger
    /// than what is left (a storage card at 37 % must not be called full).
    static func spaceTitle(quota: Int64, used: Int64?) -> String {
        guard let used, Double(used) < Double(quota) * 0.95 else { return "Storage is full" }
        return "New messages don't fit in your storage"
    }

    /// The figures the storage card shows too, so the two agree: "New messages (6 KB) don't fit
    /// into the 5 KB left of your 20 KB."
    static func spaceDetail(quota: Int64, used: Int64?, needed: Int64?) -> String {
        guard let used, let needed, needed > 0 else { return "New messages don't fit into the \(megabytes(quota)) you have." }
        let left = max(0, quota - used)
        return "New messages (\(megabytes(needed))) don't fit into the \(left == 0 ? "nothing" : megabytes(left)) left of your \(megabytes(quota))."
    }

    /// What Buy more space buys: what the batch needs, twice, and at least 10 MB.
    static func purchaseBytes(neededBytes: Int64) -> Int64 {
        max(10_000_000, neededBytes * 2)
    }

    /// What Free space does, said before it does it: what goes, and what room that makes.
    static func freeSpaceQuestion(_ plan: FreeSpacePlan, neededBytes: Int64, quota: Int64?) -> String {
        let count = plan.messageCount == 1 ? "the oldest message" : "the \(plan.messageCount) oldest messages"
        let when = sentRange(plan)
        let room = quota.map { freeSpaceRoom(neededBytes: neededBytes, quota: $0) } ?? "to make room"
        return "This deletes \(count) stored on this computer (\(when)\(megabytes(plan.bytes))), \(room). "
            + "They cannot be fetched from the chat server again."
    }

    /// "to make room for the new messages (4.0 KB) with 500 B to spare"
    static func freeSpaceRoom(neededBytes: Int64, quota: Int64) -> String {
        let spare = MessageStore.headroom(quota: quota, neededBytes: neededBytes)
        let needed = neededBytes > 0 ? " (\(megabytes(neededBytes)))" : ""
        return "to make room for the new messages\(needed)" + (spare > 0 ? " with \(megabytes(spare)) to spare" : "")
    }

    /// "sent 29 Nov 12:00 to 12:05, " in the local time zone (the browser runs on this machine too).
    private static func sentRange(_ plan: FreeSpacePlan) -> String {
        func date(_ text: String) -> Date? {
            Timestamp.date(text)
        }
        guard let oldest = date(plan.oldestSentAt), let newest = date(plan.newestSentAt) else { return "" }
        let day = Date.FormatStyle().day().month(.abbreviated).hour().minute()
        let time = Date.FormatStyle().hour().minute()
        let sameDay = Calendar.current.isDate(oldest, inSameDayAs: newest)
        if oldest == newest { return "sent \(oldest.formatted(day)), " }
        return "sent \(oldest.formatted(day)) to \(newest.formatted(sameDay ? time : day)), "
    }

    /// Try again buys again, so it asks first too (it costs money).
    static func purchaseDeclined(bytes: Int64, debug: String, at date: Date) -> UserFacingError {
        var tryAgain = RecoveryOption.tryAgain.confirming("This tries to buy \(megabytes(bytes)) more storage from the chat service again, which may be charged.")
        tryAgain.costsMoney = true
        return UserFacingError(type: "/problems/purchase-declined", title: "The purchase did not go through",
                               detail: "The payment was declined, so no space was added.",
                               suggestion: "Check your payment details, then try again. You have not been charged.",
                               presentation: .alert, options: [tryAgain, .cancel], debug: debug, createdAt: date)
    }

    /// Sizes in words, written exactly as the page writes them (view.js `formatBytes`), so figures
    /// agree: whole numbers with halves rounded up, one decimal below 10 KB and 10 MB.
    static func megabytes(_ bytes: Int64) -> String {
        func tenths(_ unit: Int64) -> String {
            let tenths = (bytes + unit / 20) / (unit / 10)
            return "\(tenths / 10).\(tenths % 10)"
        }
        if bytes < 1000 { return "\(bytes) B" }
        if bytes < 10_000 { return tenths(1000) + " KB" }
        if bytes < 1_000_000 { return "\((bytes + 500) / 1000) KB" }
        if bytes < 10_000_000 { return tenths(1_000_000) + " MB" }
        return "\((bytes + 500_000) / 1_000_000) MB"
    }
}
