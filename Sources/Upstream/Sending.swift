/// An upstream the person can write to (CONTRACT section 11): one message into one chat, under a
/// key the upstream keeps, so that the same key sent again (after an answer was lost) stores
/// nothing new and answers what the first send stored.
public protocol MessageSending: Sendable {
    /// Sends `message`; the message as the upstream now has it (its id, or its event id).
    ///
    /// A refusal that trying again will not change is ``UpstreamError/refused(_:)``; every other
    /// failure may have reached the upstream or not, and the same key goes again. No answer
    /// within `deadline` is ``UpstreamError/timedOut``: the request is cut where it is made (the
    /// transport's own timer), which costs a send no second task racing it.
    func send(_ message: OutgoingMessage, token: String, deadline: Duration) async throws(UpstreamError) -> UpstreamMessage
}

/// What the person wrote, on its way to the upstream.
public struct OutgoingMessage: Sendable, Equatable {
    /// The account's user id on this project's protocol (`userId` of `POST /v1/messages`); an
    /// upstream with one account per session (Matrix) does not read it.
    public var userId: Int64
    public var chatId: Int64
    /// The chat as the upstream names it (a Matrix room id), when the copy knows it.
    public var upstreamChat: String?
    public var text: String
    /// The key it goes under on every try (`Idempotency-Key`, a Matrix `txnId`).
    public var key: String
    /// When the person wrote it, as the protocol spells times (for the copy, until the upstream's own comes).
    public var writtenAt: String
    /// What it is: a message (`text`), or a reaction (`text` its key) given or taken back.
    public var action: Action = .message
    /// For a message: the event id of the thread's first message it answers in (Matrix `m.thread`).
    public var threadRoot: String?

    /// What goes upstream. A reaction is an upstream's with event ids (Matrix); this project's
    /// protocol takes messages only.
    public enum Action: Sendable, Equatable {
        case message
        /// A reaction to the event with this id.
        case react(to: String)
        /// Takes back (redacts) the account's reaction with this event id.
        case takeBack(reaction: String)
    }

    public init(userId: Int64, chatId: Int64, upstreamChat: String? = nil, text: String, key: String, writtenAt: String) {
        self.userId = userId
        self.chatId = chatId
        self.upstreamChat = upstreamChat
        self.text = text
        self.key = key
        self.writtenAt = writtenAt
    }
}

/// Why the upstream will not take a message, whatever the number of tries.
public struct SendRefusal: Sendable, Equatable {
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// 413, Matrix `M_TOO_LARGE`.
        case tooLarge = "too-large"
        /// 403, Matrix `M_FORBIDDEN`: the account may not write there.
        case forbidden
        /// The chat is gone upstream (404, a room the account is no longer in).
        case chatGone = "chat-gone"
    }

    public var reason: Reason
    /// The upstream's own words, for the person (may be empty).
    public var detail: String

    public init(_ reason: Reason, detail: String = "") {
        self.reason = reason
        self.detail = detail
    }
}

extension UpstreamMessage {
    /// How this project's protocol names the sender of what the account itself wrote: the
    /// simulator stores a sent message under it, and the dashboard stores the answer to a send
    /// under it, so the copy holds one spelling whichever came first.
    public static let ownSender = "You"
}
