/// Tells the upstream where the account has read each chat, behind the page's back: marking a
/// chat read answers at once (it is read here whatever the homeserver says), and this queue sends
/// the markers one at a time, in the order the chats were read, from the task that runs it.
///
/// Only the newest marker of a place matters to the homeserver (a chat's main timeline, or one
/// thread in it), so a place read again before its marker went out is sent once, with the newer
/// message: clicking through a chat quickly costs one request, and an older marker can never
/// overtake a newer one.
public actor ReadMarkerQueue {
    /// Sends one marker; failures are the sender's to log (a marker is a courtesy, not data).
    public typealias Send = @Sendable (_ place: ReadPlace, _ eventId: String) async -> Void

    private let send: Send
    private var newest: [ReadPlace: String] = [:]
    private var order: [ReadPlace] = []
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public init(send: @escaping Send) {
        self.send = send
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// `place` is read up to the message with `eventId`; the newest such word per place goes out.
    public func markRead(_ place: ReadPlace, eventId: String) {
        if newest.updateValue(eventId, forKey: place) == nil { order.append(place) }
        wake.yield()
    }

    /// How many places have a marker waiting.
    public var waiting: Int { order.count }

    /// Sends markers as they come, until the task is cancelled; markers still waiting then are
    /// dropped (the chat stays read here, and the next read of it sends a new one).
    public func run() async {
        for await _ in wakes {
            while !Task.isCancelled, let (place, eventId) = takeOldest() {
                await send(place, eventId)
            }
            if Task.isCancelled { return }
        }
    }

    private func takeOldest() -> (ReadPlace, String)? {
        guard !order.isEmpty else { return nil }
        let place = order.removeFirst()
        guard let eventId = newest.removeValue(forKey: place) else { return nil }
        return (place, eventId)
    }
}

/// Where a read marker points: a chat's main timeline, or the thread under one of its messages
/// (`thread`, that message's event id), which a homeserver counts apart.
public struct ReadPlace: Hashable, Sendable, CustomStringConvertible {
    public var chatId: Int64
    public var thread: String?

    public init(chatId: Int64, thread: String? = nil) {
        self.chatId = chatId
        self.thread = thread
    }

    public var description: String { thread.map { "the thread \($0) of chat \(chatId)" } ?? "chat \(chatId)" }
}
