import Foundation

/// How the page shows an error (CONTRACT section 6).
public enum Presentation: String, Sendable, Codable {
    /// In the page, where the content would be (a panel that could not load).
    case view
    /// Above everything: a user action failed, or this must be seen.
    case alert
    /// A polite status line for connection trouble, with a countdown and "Retry now".
    case banner
    /// Transient and informational; never the only way to an action.
    case toast
}

/// What an option does in a dialog: the default button, a cancel button, one that deletes
/// something for good (shown as such, never the default), or none of these.
public enum OptionRole: String, Sendable, Codable {
    case `default`
    case cancel
    case destructive
}

/// A way out of an error, with a stable id the page posts back.
public struct RecoveryOption: Sendable, Equatable {
    public var id: OptionID
    public var title: String
    public var role: OptionRole?
    /// What the page asks before running the option (it costs money, or cannot be undone); nil runs it at once.
    public var confirmation: String?
    /// What the page asks the person to type before running the option (`password`), sent with
    /// the attempt; nil asks nothing.
    public var input: String?

    public init(id: OptionID, title: String, role: OptionRole? = nil, confirmation: String? = nil, input: String? = nil) {
        self.id = id
        self.title = title
        self.role = role
        self.confirmation = confirmation
        self.input = input
    }

    /// This option with the question the page asks before running it.
    public func confirming(_ question: String) -> RecoveryOption {
        var option = self
        option.confirmation = question
        return option
    }

    public static let tryAgain = RecoveryOption(id: .tryAgain, title: "Try again", role: .default)
    public static let notNow = RecoveryOption(id: .notNow, title: "Not now", role: .cancel)
    public static let stopSyncing = RecoveryOption(id: .stopSyncing, title: "Stop syncing", role: .cancel)
    public static let dismissPurchase = RecoveryOption(id: .dismiss, title: "Don't buy", role: .cancel)
    /// It deletes the oldest messages for good: destructive, and asked first.
    public static let freeSpace = RecoveryOption(id: .freeSpace, title: "Free space", role: .destructive)
    /// It costs money: asked first (`confirming`), never retried by itself.
    public static let buySpace = RecoveryOption(id: .buySpace, title: "Buy more space", role: .default)
    /// Asks for the account's password and signs in with it (an upstream that signs in: Matrix).
    public static let signIn = RecoveryOption(id: .signIn, title: "Sign in again", role: .default, input: "password")
    public static let resync = RecoveryOption(id: .resync, title: "Keep these and sync again", role: .default)
    /// Deletes a message that was not sent: it never reaches the chat.
    public static let discard = RecoveryOption(id: .discard, title: "Delete", role: .destructive)
    public static let export = RecoveryOption(id: .export, title: "Save to a file", role: .default)
}

/// A failure told to a person: what happened, why, what to do, and the options that can work here.
/// User text and the technical cause (`debug`) are kept apart.
public struct UserFacingError: Sendable, Equatable, Identifiable {
    public var id: String
    public var kind: ProblemKind
    /// The kind's URI reference, e.g. `/problems/out-of-space` (the problem's `type`).
    public var type: String { kind.rawValue }
    public var title: String
    /// The reason, in neutral words.
    public var detail: String
    public var suggestion: String
    public var presentation: Presentation
    public var options: [RecoveryOption]
    /// The technical cause, for developers only.
    public var debug: String
    public var createdAt: Date
    /// Errors with the same cause key are one error: a repeat updates it instead of adding another.
    public var causeKey: String
    /// What the error knows beyond its words (the storage figures of out of space, a purchase's key).
    public var facts: ProblemFacts
    /// The last attempt on this error that did not help, so the page can say so instead of showing
    /// the same view again.
    public var lastFailedAttempt: FailedAttempt?
    /// The cause of the error an attempt made this one from (a declined purchase comes from out of
    /// space): it closes with that error, and is never opened once that one is closed.
    public var origin: String?

    public init(id: String = Self.makeID(), kind: ProblemKind, title: String, detail: String, suggestion: String,
                presentation: Presentation, options: [RecoveryOption], debug: String, createdAt: Date,
                causeKey: String? = nil, facts: ProblemFacts = .none) {
        self.id = id
        self.kind = kind
        self.title = title
        self.detail = detail
        self.suggestion = suggestion
        self.presentation = presentation
        self.options = options
        self.debug = debug
        self.createdAt = createdAt
        self.causeKey = causeKey ?? kind.rawValue
        self.facts = facts
    }

    public func option(_ id: OptionID) -> RecoveryOption? {
        options.first { $0.id == id }
    }

    /// The option a posted id names: one of this error's own ids, or the contract's generic
    /// `cancel`, which names the error's backing-out option.
    public func option(posted id: String) -> RecoveryOption? {
        if id == OptionID.contractCancel { return options.first { $0.role == .cancel } }
        return OptionID(rawValue: id).flatMap(option)
    }

    /// The storage figures, when this is out of space.
    public var space: SpaceShortfall? {
        if case .space(let space) = facts { space } else { nil }
    }

    /// The purchase, when this is a declined one.
    public var purchase: PurchaseAttempt? {
        if case .purchase(let purchase) = facts { purchase } else { nil }
    }

    public static func makeID() -> String {
        "e" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// This error, with the reason the attempt just made did not help (the registry adds which
    /// option it was and when).
    public func failing(because reason: String) -> UserFacingError {
        var error = self
        error.lastFailedAttempt = FailedAttempt(optionID: nil, optionTitle: "", at: createdAt, reason: reason)
        return error
    }
}

/// The attempts of one option that did not help: which option, how many in a row, the last one's
/// time, and why, in words for people.
public struct FailedAttempt: Sendable, Equatable {
    /// Nil until the registry says which option it was.
    public var optionID: OptionID?
    public var optionTitle: String
    /// When the last of them failed.
    public var at: Date
    public var reason: String
    /// How many tries of this option in a row did not help, so a second failure never reads as the first.
    public var tries: Int

    public init(optionID: OptionID?, optionTitle: String, at: Date, reason: String, tries: Int = 1) {
        self.optionID = optionID
        self.optionTitle = optionTitle
        self.at = at
        self.reason = reason
        self.tries = tries
    }
}

/// How an attempt ended, as its attempter tells it.
public enum AttemptResult: Sendable, Equatable {
    /// The option worked; `summary` says what it did where that is worth telling
    /// ("Added 10 MB of storage: you now have 10.0 MB.").
    case recovered(summary: String?)
    /// The option did not help; `error` is what the user should see now.
    case failed(UserFacingError)
    /// The person chose not to pursue it now, and that was done: `kept` is how the error stays
    /// shown (Not now turns a view into a banner), nil when it closes (Stop syncing: nothing is
    /// tried any more that could fail). `summary` says what was done ("You stopped syncing.").
    case setAside(kept: UserFacingError?, summary: String)

    /// Recovered, with nothing more to say than that.
    public static var recovered: AttemptResult { .recovered(summary: nil) }
}

/// What the person gave with an attempt, beyond the option: the password an option asks for
/// (`RecoveryOption.input`). It reaches the attempter only once the registry has accepted the
/// attempt, so a refused attempt (unknown error, another one running) never uses it.
public struct AttemptInput: Sendable, Equatable, CustomStringConvertible {
    public var password: String?

    public init(password: String? = nil) {
        self.password = password
    }

    /// Never the password itself, wherever this is logged or interpolated.
    public var description: String { password == nil ? "AttemptInput()" : "AttemptInput(password: <redacted>)" }
}

/// Runs the options of one kind of error. Asynchronous: an option may call the upstream.
public protocol RecoveryAttempter: Sendable {
    /// Runs `option` (one of `error.options`) with what the person gave for it, and tells how it went.
    func attempt(_ option: RecoveryOption, for error: UserFacingError, input: AttemptInput) async -> AttemptResult
}

/// Where raised and resolved errors are shown. The feed is one implementation; tests record.
public protocol ErrorPresenter: Sendable {
    func present(_ error: UserFacingError) async
    /// `error` closed, and `resolution` is what closed it.
    func dismiss(_ error: UserFacingError, by resolution: Resolution) async
    /// An attempt began or ended, so every window can show it (buttons disabled while it runs).
    func attemptChanged(_ progress: AttemptProgress) async
}

extension ErrorPresenter {
    public func attemptChanged(_ progress: AttemptProgress) async {}
}

/// Where an attempt stands: running, or how it ended.
public enum AttemptStatus: String, Sendable, Equatable {
    case running
    /// The error is over.
    case recovered
    /// It did not help.
    case failed
    /// The person set the error aside (Not now, Stop syncing): done as asked, not a failure.
    case dismissed
}

/// An attempt as other windows see it.
public struct AttemptProgress: Sendable, Equatable {
    public typealias Status = AttemptStatus

    public var errorID: String
    /// The kind of the error, so a window that did not make the attempt can say what it did.
    public var errorKind: ProblemKind
    public var attemptID: String
    public var optionID: OptionID
    public var optionTitle: String
    public var status: Status
    /// Why it did not help, once it ended without helping.
    public var reason: String?
    /// What it did, once it recovered or was set aside, where the attempter said.
    public var summary: String?

    public init(errorID: String, errorKind: ProblemKind, attemptID: String, optionID: OptionID, optionTitle: String, status: Status,
                reason: String? = nil, summary: String? = nil) {
        self.errorID = errorID
        self.errorKind = errorKind
        self.attemptID = attemptID
        self.optionID = optionID
        self.optionTitle = optionTitle
        self.status = status
        self.reason = reason
        self.summary = summary
    }
}
