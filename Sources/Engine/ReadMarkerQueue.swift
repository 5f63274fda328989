/// Tells the upstream where the account has read each chat, behind the page's back: marking a
/// chat read answers at once (it is read here whatever the homeserver says), and this queue sends
/// the markers one at a time, in the order the chats were read, from the task that runs it.
///
/// Only the newest marker of a chat matters to the homeserver, so a chat read again before its
/// marker went out is sent once, with the newer message: clicking through a chat quickly costs
/// one request, and an older marker can never overtake a newer one.
public actor ReadMarkerQueue {
    /// Sends one marker; failures are the sender's to log (a marker is a courtesy, not data).
    public typealias Send = @Sendable (_ chatId: Int64, _ eventId: String) async -> Void

    private let send: Send
    private var newest: [Int64: String] = [:]
    private var order: [Int64] = []
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public init(send: @escaping Send) {
        self.send = send
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// `chatId` is read up to the message with `eventId`; the newest such word per chat goes out.
    public func markRead(chatId: Int64, eventId: String) {
        if newest.updateValue(eventId, forKey: chatId) == nil { order.append(chatId) }
        wake.yield()
    }

    /// How many chats have a marker waiting.
    public var waiting: Int { order.count }

    /// Sends markers as they come, until the task is cancelled; markers still waiting then are
    /// dropped (the chat stays read here, and the next read of it sends a new one).
    public func run() async {
        for await _ in wakes {
            while !Task.isCancelled, let (chatId, eventId) = takeOldest() {
                await send(chatId, eventId)
            }
            if Task.isCancelled { return }
        }
    }

    private func takeOldest() -> (Int64, String)? {
        guard !order.isEmpty else { return nil }
        let chatId = order.removeFirst()
        guard let eventId = newest.removeValue(forKey: chatId) else { return nil }
        return (chatId, eventId)
    }
}
