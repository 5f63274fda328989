/// The upstream chat server as the engine sees it (CONTRACT section 3). The HTTP client implements
/// it; engine tests implement it in memory.
public protocol UpstreamAPI: Sendable {
    /// Where it lives, for display.
    var location: String { get }
    func createSession() async throws(UpstreamError) -> UpstreamSession
    /// The newest id per stream, or nil from an upstream that cannot tell (Matrix): its answers
    /// then say what they are (`MessagesAnswer.delivery`).
    func lastMessageInfo(token: String) async throws(UpstreamError) -> LastMessageInfo?
    /// What comes after the cursors: held by the server while `wait` says, or at once.
    func messages(token: String, after cursors: StreamCursors, wait: PollWait) async throws(UpstreamError) -> MessagesAnswer
    /// Buys `bytes` more storage; the same `idempotencyKey` never charges twice. Returns the new quota.
    func purchaseStorage(token: String, bytes: Int64, idempotencyKey: String) async throws(UpstreamError) -> Int64
    /// What it offers besides messages.
    var features: UpstreamFeatures { get }
}

/// How a `messages` request waits, which also says what its answer is.
public enum PollWait: Sendable, Equatable {
    /// Held up to `seconds` until there is something after the cursors: what comes is live.
    case hold(seconds: Int)
    /// Answered at once with what came while syncing was interrupted: the catch-up after a
    /// reconnection, for an upstream without `lastMessageInfo` (which answers say what they are).
    case catchUp

    /// How long the server may hold the request.
    public var seconds: Int {
        switch self {
        case .hold(let seconds): seconds
        case .catchUp: 0
        }
    }
}

extension UpstreamAPI {
    /// This project's protocol: a linked account, storage for sale.
    public var features: UpstreamFeatures { UpstreamFeatures(kind: "chat-server", linkedAccount: true, sellsStorage: true) }
}

/// An upstream a person signs in to with a password (Matrix): when its session is refused, the
/// page asks for the password ("Sign in again") and hands it over once.
public protocol PasswordSignIn: Sendable {
    /// Signs in with `password` at the next session; kept in memory only.
    func signInAgain(password: String)
    /// The typed password did not work: forget it (a password from the environment stays).
    func withdrawTypedPassword()
}

/// An upstream whose chats have history from before the first sync (Matrix), read backwards a
/// page at a time from where each chat was first seen (CONTRACT section 10).
public protocol OlderHistory: Sendable {
    /// The page of at most `limit` events of `position.upstreamChat`'s history just older than
    /// `position`, newest first, and where the next one starts (nil: the chat's first visible
    /// event is in this page).
    func olderHistory(token: String, before position: HistoryPosition, limit: Int) async throws(UpstreamError) -> OlderHistoryPage
}

/// An upstream that keeps where the account has read each chat (Matrix read markers), so that
/// marking a chat read here shows it read in the account's other clients (CONTRACT section 10).
public protocol ReadMarkers: Sendable {
    /// `chatId` is read up to the message with `eventId`: in the thread under the message with
    /// event id `thread`, or, when that is nil, the chat's main timeline.
    func markRead(token: String, chatId: Int64, eventId: String, thread: String?) async throws(UpstreamError)
}

/// A place in one chat's history, as its upstream names it.
public struct HistoryPosition: Sendable, Equatable, Codable {
    /// The chat as the engine and the store number it.
    public var chatId: Int64
    /// The chat as the upstream names it (a Matrix room id).
    public var upstreamChat: String
    /// The upstream's own token (a Matrix `prev_batch` or `/messages` `end`).
    public var token: String

    public init(chatId: Int64, upstreamChat: String, token: String) {
        self.chatId = chatId
        self.upstreamChat = upstreamChat
        self.token = token
    }
}

/// One page of a chat's older history.
public struct OlderHistoryPage: Sendable, Equatable {
    /// Newest first; edits and redactions among them as in any answer.
    public var messages: [UpstreamMessage]
    /// Where the next older page starts; nil when the chat's beginning was reached.
    public var next: HistoryPosition?
    /// Events the page held that are no message of the copy (state, reactions, unreadable ones).
    public var skipped: Int

    public init(messages: [UpstreamMessage], next: HistoryPosition?, skipped: Int = 0) {
        self.messages = messages
        self.next = next
        self.skipped = skipped
    }
}

/// What an upstream offers besides messages, so that the page and the recovery options offer
/// only what it can do.
public struct UpstreamFeatures: Sendable, Equatable {
    /// Its protocol, for display: `chat-server` or `matrix`.
    public var kind: String
    /// Whether it can have a linked account (a second stream).
    public var linkedAccount: Bool
    /// Whether storage can be bought from it (Buy more space).
    public var sellsStorage: Bool

    public init(kind: String, linkedAccount: Bool, sellsStorage: Bool) {
        self.kind = kind
        self.linkedAccount = linkedAccount
        self.sellsStorage = sellsStorage
    }
}

/// Why an upstream call failed, in the terms the engine decides on.
public enum UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 401: the token expired or was refused.
    case unauthorized
    /// 409 on `messages`: another poller with the same token took over.
    case anotherPoller
    /// 402 on a purchase.
    case paymentDeclined
    /// A 5xx answer.
    case serverError(status: Int)
    /// An answer that is not the expected JSON (a captive portal, truncated JSON, wrong types, an
    /// unexpected status).
    case badResponse(String)
    /// No answer: refused, reset, cut mid-response, DNS, ...
    case unreachable(String)
    /// No answer within the client timeout.
    case timedOut
    /// 403 on a call about one chat: the account may not do or see that (a room it was banned
    /// from, history it may not read); trying again will not change it.
    case forbidden(String)
    /// The answer was larger than the caller allows (a file over the size cap).
    case tooLarge(limit: Int)
    /// 429: asked to slow down; try again no sooner than `retryAfter` (nil: it did not say).
    case rateLimited(retryAfter: Duration?)
    /// A message the upstream will not take, whatever the number of tries (CONTRACT section 11).
    case refused(SendRefusal)
    /// The caller's task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .unauthorized: "401 unauthorized"
        case .anotherPoller: "409 another poller took over"
        case .paymentDeclined: "402 payment declined"
        case .forbidden(let detail): "403 forbidden: \(detail)"
        case .tooLarge(let limit): "larger than \(limit) bytes"
        case .serverError(let status): "server error \(status)"
        case .badResponse(let detail): "bad response: \(detail)"
        case .unreachable(let detail): "unreachable: \(detail)"
        case .timedOut: "timed out"
        case .rateLimited(let after): "429 rate limited" + (after.map { ", asked to wait \($0)" } ?? "")
        case .cancelled: "cancelled"
        case .refused(let refusal): "refused (\(refusal.reason.rawValue))" + (refusal.detail.isEmpty ? "" : ": \(refusal.detail)")
        }
    }
}
