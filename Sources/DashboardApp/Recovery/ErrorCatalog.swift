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
            UserFacingError(kind: .upstreamError, title: "The chat server is having trouble",
                             detail: "It answered with an error, so new messages cannot be fetched right now.",
                             suggestion: "This usually passes by itself: syncing retries on its own, or try again now.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .badResponse:
            UserFacingError(kind: .badResponse, title: "The chat server's answer could not be read",
                             detail: "Something answered in place of the chat server, or its answer was cut short.",
                             suggestion: "If this network asks you to sign in, do that first. Syncing retries on its own.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .unreachable:
            UserFacingError(kind: .upstreamUnreachable, title: "The chat server cannot be reached",
                             detail: "The connection to it failed or was cut.",
                             suggestion: "Syncing retries on its own; you can also try again now.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .noInternet:
            UserFacingError(kind: .noInternet, title: "You are offline",
                             detail: "This computer has no network connection at the moment.",
                             suggestion: "Syncing starts again as soon as the connection is back.",
                             presentation: .banner, options: [.tryAgain], debug: problem.debug, createdAt: date)
        case .outOfSpace:
            outOfSpace(problem, at: date, freeSpacePlan: freeSpacePlan, canBuySpace: canBuySpace)
        case .tokenRefused where signsIn:
            UserFacingError(kind: .tokenRefused, title: "Sign in to the homeserver again",
                             detail: "The homeserver no longer accepts this dashboard's session: it was signed out elsewhere, or the password changed.",
                             suggestion: "Sign in again with the account's password. It is used once to get a new session and is not stored.",
                             presentation: .alert, options: [.signIn, .stopSyncing], debug: problem.debug, createdAt: date)
        case .tokenRefused:
            UserFacingError(kind: .tokenRefused, title: "The chat server won't let this dashboard in",
                             detail: "It turned down the sign-in it had just given, so no new messages can be fetched.",
                             suggestion: "Syncing keeps trying on its own, less often each time. Try again now, or stop syncing.",
                             presentation: .alert, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .anotherPoller:
            UserFacingError(kind: .anotherPoller, title: "Syncing continues somewhere else",
                             detail: "Another window or device using the same session took over fetching messages.",
                             suggestion: "Try again to take over here, or stop syncing here to leave it to the other one.",
                             presentation: .banner, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        case .upstreamBehind:
            UserFacingError(kind: .upstreamBehind, title: "The chat server has fewer messages than this computer",
                             detail: "Its newest message is older than the newest one stored here. It may have been reset or restored from a backup, or another account answers at its address.",
                             suggestion: "Keep these and sync again: the messages stored here are set aside, kept and counted, and the server's are fetched anew. Or stop syncing and look into it first.",
                             presentation: .view, options: [.stopSyncing, .resync], debug: problem.debug, createdAt: date)
        case .storageFailure:
            UserFacingError(kind: .storageFailure, title: "Messages cannot be saved",
                             detail: "The local copy on this computer could not be written.",
                             suggestion: "Try again. If it keeps happening, check the disk the dashboard stores its data on.",
                             presentation: .alert, options: [.tryAgain, .stopSyncing], debug: problem.debug, createdAt: date)
        }
    }

    /// The kind of error an engine problem is told as; its `rawValue` is the error's cause key.
    static func kind(of problem: EngineProblem.Kind) -> ProblemKind {
        switch problem {
        case .upstreamError: .upstreamError
        case .badResponse: .badResponse
        case .unreachable: .upstreamUnreachable
        case .noInternet: .noInternet
        case .outOfSpace: .outOfSpace
        case .tokenRefused: .tokenRefused
        case .anotherPoller: .anotherPoller
        case .upstreamBehind: .upstreamBehind
        case .storageFailure: .storageFailure
        }
    }

    /// Out of space with the options that can work here: Free space only when removing old
    /// messages makes room for the waiting ones (and saying what it removes), Buy more space only
    /// where the upstream sells space and the quota (not the disk) is full.
    static func outOfSpace(_ problem: EngineProblem, at date: Date, freeSpacePlan: FreeSpacePlan?, canBuySpace: Bool = true,
                           presentation: Presentation = .view) -> UserFacingError {
        let quota = problem.usage?.quotaBytes
        var space = SpaceShortfall(usedBytes: problem.usage?.usedBytes, quotaBytes: quota, neededBytes: problem.neededBytes ?? 0,
                                   diskFull: problem.diskFull)
        // Backing out here only hides the view (syncing stays paused), so it is Not now.
        var options: [RecoveryOption] = [.notNow]
        if let plan = freeSpacePlan {
            options.append(RecoveryOption.freeSpace.confirming(freeSpaceQuestion(plan, neededBytes: problem.neededBytes ?? 0, quota: quota)))
            space.freeSpace = SpaceShortfall.FreeSpaceOffer(messages: plan.messageCount, bytes: plan.bytes)
        }
        if problem.diskFull || quota == nil {
            // Buying quota cannot help a full disk: there the way out is making room and trying again.
            options.append(.tryAgain)
            return UserFacingError(kind: .outOfSpace, title: "The disk is full",
                                   detail: "The disk this computer stores messages on is full.",
                                   suggestion: "Make room on this computer's disk and try again\(freeSpacePlan == nil ? "" : ", or free space by removing the oldest messages"). New messages wait on the server meanwhile.",
                                   presentation: presentation, options: options,
                                   debug: problem.debug, createdAt: date, facts: .space(space))
        }
        if canBuySpace {
            options.append(RecoveryOption.buySpace.confirming(
                "This buys \(sizeInWords(purchaseBytes(neededBytes: problem.neededBytes ?? 0))) more storage from the chat service, which may be charged."))
        }
        let way = switch (freeSpacePlan != nil, canBuySpace) {
        case (true, true): "Free some space or buy more to keep syncing."
        case (true, false): "Free some space to keep syncing."
        case (false, true): "Buy more space to keep syncing."
        case (false, false): "The waiting messages are larger than the whole quota."
        }
        return UserFacingError(kind: .outOfSpace, title: spaceTitle(quota: quota!, used: problem.usage?.usedBytes),
                                detail: spaceDetail(quota: quota!, used: problem.usage?.usedBytes, needed: problem.neededBytes),
                                suggestion: way + " Nothing is lost while you decide: new messages wait on the server.",
                                presentation: presentation, options: options,
                                debug: problem.debug, createdAt: date, facts: .space(space))
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
        guard let used, let needed, needed > 0 else { return "New messages don't fit into the \(sizeInWords(quota)) you have." }
        let left = max(0, quota - used)
        return "New messages (\(sizeInWords(needed))) don't fit into the \(left == 0 ? "nothing" : sizeInWords(left)) left of your \(sizeInWords(quota))."
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
        return "This deletes \(count) stored on this computer (\(when)\(sizeInWords(plan.bytes))), \(room). "
            + "They cannot be fetched from the chat server again."
    }

    /// "to make room for the new messages (4.0 KB) with 500 B to spare"
    static func freeSpaceRoom(neededBytes: Int64, quota: Int64) -> String {
        let spare = MessageStore.headroom(quota: quota, neededBytes: neededBytes)
        let needed = neededBytes > 0 ? " (\(sizeInWords(neededBytes)))" : ""
        return "to make room for the new messages\(needed)" + (spare > 0 ? " with \(sizeInWords(spare)) to spare" : "")
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

    /// Past this many characters, deleting an unsent message asks first.
    static let longTextCharacters = 200

    /// A message the upstream refused for good (CONTRACT section 11), shown at the message in its
    /// chat, with the upstream's reason in plain words.
    static func sendFailed(_ entry: OutboxEntry, at date: Date) -> UserFacingError {
        let refusal = entry.failure ?? SendRefusal(.forbidden)
        let (detail, suggestion) = switch refusal.reason {
        case .tooLarge:
            ("The chat server refused it as too large.", "Shorten it and send it again, or delete it.")
        case .forbidden:
            ("The chat server does not let this account write in this chat.", "Try again if that has changed, or delete it.")
        case .chatGone:
            ("The chat is no longer there for this account.", "Delete it, or try again if you have rejoined the chat.")
        }
        let said = refusal.detail.isEmpty ? "" : " It said: \u{201C}\(refusal.detail.prefix(200))\u{201D}."
        let message = UnsentMessage(outboxId: entry.id, account: entry.account.description, chatId: entry.chatId)
        // A long text is work the person would lose: Delete asks first.
        let characters = entry.text.count
        let delete = characters > longTextCharacters
            ? RecoveryOption.discard.confirming("This deletes what you wrote (\(characters) characters). It was not sent, and it cannot be brought back.")
            : RecoveryOption.discard
        let isReaction = entry.action != .message
        let title = switch entry.action {
        case .message: "Not sent"
        case .react: "Reaction \u{201C}\(entry.text.prefix(40))\u{201D} not sent"
        case .unreact: "Reaction \u{201C}\(entry.text.prefix(40))\u{201D} not taken back"
        }
        return UserFacingError(kind: .sendFailed, title: title, detail: detail + said,
                               suggestion: isReaction ? suggestion.replacingOccurrences(of: "Shorten it and send it again, or delete it.", with: "Delete it.") : suggestion,
                               presentation: .view, options: [.tryAgain, delete],
                               debug: "outbox entry \(entry.id) (key \(entry.upstreamKey)), \(entry.attempts) tries: \(refusal.reason.rawValue) \(refusal.detail)",
                               createdAt: date, causeKey: message.causeKey, facts: .send(message))
    }

    /// Messages a user wrote who no longer holds their account: never sent as the one who does.
    static func unsentLeftBehind(_ entries: [OutboxEntry], at date: Date) -> UserFacingError {
        let count = entries.count
        let writers = Array(Set(entries.compactMap(\.ownerUserId))).sorted()
        let who = writers.isEmpty ? "an account that is no longer here"
            : "user \(writers.map(String.init).joined(separator: ", user ")), who \(writers.count == 1 ? "is" : "are") no longer signed in here"
        let them = count == 1 ? "it" : "them"
        let delete = RecoveryOption(id: .discard, title: count == 1 ? "Delete it" : "Delete them", role: .destructive)
            .confirming("This deletes what was written (\(count) message\(count == 1 ? "" : "s")). \(count == 1 ? "It was" : "They were") not sent, and cannot be brought back.")
        // A try whose answer was lost may have reached the chat: said, not counted as unsent for sure.
        let tried = entries.filter { $0.attempts > 0 }.count
        let maybeSent = tried == 0 ? "" : tried == count
            ? " \(count == 1 ? "It" : "They") may have reached the chat already: a try went out and its answer was lost."
            : " \(tried) of them may have reached the chat already: a try went out and its answer was lost."
        return UserFacingError(kind: .unsentLeftBehind,
                               title: count == 1 ? "1 message was not sent" : "\(count) messages were not sent",
                               detail: "\(count == 1 ? "It was" : "They were") written as \(who), so \(count == 1 ? "it is" : "they are") not sent as anyone else."
                                   + maybeSent,
                               suggestion: "Save \(them) to a file to keep what was written, or delete \(them). Signing in as that user again sends \(them).",
                               presentation: .alert, options: [.export, delete, .notNow],
                               debug: "outbox entries \(entries.map { String($0.id) }.joined(separator: ", ")) of users \(writers)",
                               createdAt: date, causeKey: LeftBehindMessages.causeKey, facts: .leftBehind(LeftBehindMessages(count: count, writers: writers)))
    }

    /// Try again buys again, so it asks first too (it costs money).
    static func purchaseDeclined(_ purchase: PurchaseAttempt, bytes: Int64, debug: String, at date: Date) -> UserFacingError {
        let tryAgain = RecoveryOption.tryAgain.confirming("This tries to buy \(sizeInWords(bytes)) more storage from the chat service again, which may be charged.")
        return UserFacingError(kind: .purchaseDeclined, title: "The purchase did not go through",
                               detail: "The payment was declined, so no space was added.",
                               suggestion: "Check your payment details, then try again. You have not been charged.",
                               presentation: .alert, options: [tryAgain, .dismissPurchase], debug: debug, createdAt: date,
                               facts: .purchase(purchase))
    }

    /// Sizes in words, written exactly as the page writes them (view.js `formatBytes`), so figures
    /// agree: whole numbers with halves rounded up, one decimal below 10 KB and 10 MB.
    static func sizeInWords(_ bytes: Int64) -> String {
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
