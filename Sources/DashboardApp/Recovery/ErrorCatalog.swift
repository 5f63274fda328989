import Engine
import Foundation
import Recovery
import Store

/// The concrete recoverable errors of CONTRACT section 6: neutral words for people, the cause in `debug`.
enum ErrorCatalog {
    static func error(for problem: EngineProblem, at date: Date) -> UserFacingError {
        switch problem.kind {
        case .upstreamError:
            UserFacingError(type: "/problems/upstream-error", title: "The chat server is having trouble",
                             detail: "It answered with an error, so new messages cannot be fetched right now.",
                             suggestion: "This usually passes by itself: syncing retries on its own, or you can try again now.",
                             presentation: .banner, options: [.tryAgain, .cancel], debug: problem.debug, createdAt: date)
        case .badResponse:
            UserFacingError(type: "/problems/bad-response", title: "The chat server's answer could not be read",
                             detail: "Something answered in place of the chat server, or its answer was cut short.",
                             suggestion: "If this network asks you to sign in, do that first. Syncing retries on its own.",
                             presentation: .banner, options: [.tryAgain, .cancel], debug: problem.debug, createdAt: date)
        case .unreachable:
            UserFacingError(type: "/problems/upstream-unreachable", title: "The chat server cannot be reached",
                             detail: "The connection to it failed or was cut.",
                             suggestion: "Syncing retries on its own; you can also try again now.",
                             presentation: .banner, options: [.tryAgain, .cancel], debug: problem.debug, createdAt: date)
        case .noInternet:
            UserFacingError(type: "/problems/no-internet", title: "You are offline",
                             detail: "This computer has no network connection at the moment.",
                             suggestion: "Syncing starts again as soon as the connection is back.",
                             presentation: .banner, options: [.tryAgain], debug: problem.debug, createdAt: date)
        case .outOfSpace:
            outOfSpace(problem, at: date)
        case .tokenRefused:
            UserFacingError(type: "/problems/token-refused", title: "The chat server did not accept the session",
                             detail: "It refused a freshly issued session, so syncing has stopped trying for now.",
                             suggestion: "Try again in a moment. If it keeps happening, the account may need attention.",
                             presentation: .alert, options: [.tryAgain, .cancel], debug: problem.debug, createdAt: date)
        case .anotherPoller:
            UserFacingError(type: "/problems/another-poller", title: "Syncing continues somewhere else",
                             detail: "Another window or device using the same session took over fetching messages.",
                             suggestion: "Close the other one, or try again to take over here.",
                             presentation: .banner, options: [.tryAgain, .cancel], debug: problem.debug, createdAt: date)
        case .storageFailure:
            UserFacingError(type: "/problems/storage-failure", title: "Messages cannot be saved",
                             detail: "The local copy on this computer could not be written.",
                             suggestion: "Try again. If it keeps happening, check the disk the dashboard stores its data on.",
                             presentation: .alert, options: [.tryAgain, .cancel], debug: problem.debug, createdAt: date)
        }
    }

    static func outOfSpace(_ problem: EngineProblem, at date: Date, presentation: Presentation = .view) -> UserFacingError {
        let quota = problem.usage?.quotaBytes
        let detail = problem.diskFull || quota == nil
            ? "The disk this computer stores messages on is full."
            : "New messages do not fit into the \(megabytes(quota!)) you have."
        var extensions: [String: Int64] = [:]
        extensions["usedBytes"] = problem.usage?.usedBytes
        extensions["quotaBytes"] = quota
        extensions["neededBytes"] = problem.neededBytes
        if problem.diskFull { extensions["diskFull"] = 1 }
        // Buying quota cannot help a full disk: there the options are to free space or, once the
        // disk has room again, to try again.
        if problem.diskFull {
            return UserFacingError(type: "/problems/out-of-space", title: "The disk is full", detail: detail,
                                   suggestion: "Make room on this computer's disk and try again, or free space by removing the oldest messages.",
                                   presentation: presentation, options: [.cancel, .freeSpace, .tryAgain],
                                   debug: problem.debug, createdAt: date, extensions: extensions)
        }
        return UserFacingError(type: "/problems/out-of-space", title: "Storage is full", detail: detail,
                                suggestion: "Free some space or buy more to keep syncing. Nothing is lost meanwhile.",
                                presentation: presentation, options: [.cancel, .freeSpace, .buySpace],
                                debug: problem.debug, createdAt: date, extensions: extensions)
    }

    static func purchaseDeclined(debug: String, at date: Date) -> UserFacingError {
        UserFacingError(type: "/problems/purchase-declined", title: "The purchase did not go through",
                         detail: "The payment was declined, so no space was added.",
                         suggestion: "Check your payment details, then try again. You have not been charged.",
                         presentation: .alert, options: [.tryAgain, .cancel], debug: debug, createdAt: date)
    }

    static func megabytes(_ bytes: Int64) -> String {
        if bytes < 1_000_000 { return "\(max(1, Int((Double(bytes) / 1000).rounded()))) KB" }
        let value = Double(bytes) / 1_000_000
        return value >= 10 ? "\(Int(value.rounded())) MB" : String(format: "%.1f MB", value)
    }
}
