import Foundation
import Recovery
import Engine

/// Where the engine's events go: page events into the feed, problems into the error registry.
/// Events arrive through one stream, so their order is kept.
struct DashboardHub: Sendable {
    let feed: EventFeed
    let registry: ErrorRegistry
    let attempter: EngineAttempter
    /// Woken when syncing goes live or a batch is stored (it may have brought chats to fetch).
    let history: HistoryFetcher?
    /// Woken when syncing goes live: what waited for the connection goes.
    let outboxes: Outboxes

    func run(_ events: AsyncStream<EngineEvent>) async {
        // Left behind in an earlier run: told again, as when the account went.
        if let leftBehind = try? await attempter.store.leftBehindOutbox(), !leftBehind.isEmpty {
            await handle(.outboxLeftBehind(leftBehind))
        }
        for await event in events {
            await handle(event)
        }
    }

    func handle(_ event: EngineEvent) async {
        switch event {
        case .connection(let status):
            await feed.publish("connection", status)
            if status.state == .live {
                await history?.wake()
                for sender in outboxes.all { await sender.wake(.syncing) }
            }
        case let .messages(account, messages, delivery, usage, chats):
            if delivery == .silent { await history?.copyWasFilled() }
            if delivery == .live { await history?.liveMessagesArrived() }
            let event = MessagesEvent(account: account.description, messages: messages, notify: delivery.notifies, storage: usage,
                                      chats: chats, caughtUp: delivery == .caughtUp)
            await feed.publish("messages", json: event.json())
        case let .messagesChanged(account, changed, removed):
            for message in changed {
                await feed.publish("message.changed", MessageChangedBody(account: account.description, message: MessagePageBody.messages([message])[0]))
            }
            for message in removed {
                await feed.publish("message.removed", MessageRemovedBody(account: account.description, chatId: message.chatId, id: message.id))
            }
        case let .chatsChanged(account, chats):
            for chat in chats {
                await feed.publish("chat.changed", ChatChangedBody(account: account.description, chat: ChatBody(chat)))
            }
        case let .chatsRead(account, chatIds):
            for chat in chatIds {
                await feed.publish("chat.read", ChatReadBody(account: account.description, chatId: chat, unread: 0))
            }
        case let .history(account, progress, grew):
            await feed.publish("history", HistoryBody(account: account, progress: progress, chatId: grew))
        case let .accountLinked(userId, firstSync):
            await feed.publish("account.linked", AccountLinkedBody(userId: userId, firstSync: firstSync))
        case .accountUnlinked(let userId):
            await feed.publish("account.unlinked", ["userId": userId])
        case let .primaryAccountChanged(from, to, removed):
            await feed.publish("account.changed", ["previousUserId": from, "userId": to, "removedMessages": Int64(removed)])
        case let .accountSetAside(account, count, usage):
            await feed.publish("account.resynced", AccountResyncedBody(account: account.description, setAside: Int64(count), storage: StorageBody(usage)))
        case .storage(let usage):
            // Only quota changes: a batch's usage rides in its messages event.
            await feed.publish("storage", StorageBody(usage))
        case let .outbox(entry, requestKey):
            await feed.publish("outbox", json: OutboxEntryBody(entry, requestKey: requestKey).json())
            // Its error closes when it leaves the outbox, or by the Try again that put it back in
            // the line (whose answer says what became of it); a refusal again updates it in place.
            if entry.state == .failed { await registry.raise(ErrorCatalog.sendFailed(entry, at: Date())) }
        case let .outboxLeft(account, outboxId, chatId, sent):
            await feed.publish("outbox", json: OutboxLeftBody(outboxId: outboxId, account: account.description, chatId: chatId,
                                                              state: sent ? "sent" : "deleted").json())
            // Sent: it went by itself; deleted: someone's Delete took it away.
            await registry.resolve(causeKey: UnsentMessage.causeKey(of: outboxId), by: sent ? .situation : .action)
        case .outboxLeftBehind(let entries):
            for entry in entries {
                // Every window takes it out of its chat: it is not on its way any longer.
                await feed.publish("outbox", json: OutboxLeftBody(outboxId: entry.id, account: entry.account.description, chatId: entry.chatId,
                                                                  state: "left-behind").json())
                await registry.resolve(causeKey: UnsentMessage.causeKey(of: entry.id))
            }
            if entries.isEmpty {
                await registry.resolve(causeKey: LeftBehindMessages.causeKey)
            } else {
                await registry.raise(ErrorCatalog.unsentLeftBehind(entries, at: Date()))
            }
        case .problemRaised(let problem):
            await registry.raise(await attempter.error(for: problem))
        case .problemCleared(let kind):
            await registry.resolve(causeKey: ErrorCatalog.kind(of: kind).rawValue)
        }
    }
}

/// Puts raised and resolved errors into the feed.
struct FeedPresenter: ErrorPresenter {
    let feed: EventFeed

    func present(_ error: UserFacingError) async {
        await feed.publish("error.raised", ErrorBody(error))
    }

    func dismiss(_ error: UserFacingError, by resolution: Resolution) async {
        await feed.publish("error.resolved", ErrorResolvedBody(id: error.id, type: error.type, resolution: resolution))
    }

    func attemptChanged(_ progress: AttemptProgress) async {
        await feed.publish("attempt", AttemptEvent(errorId: progress.errorID, type: progress.errorKind.rawValue, attemptId: progress.attemptID,
                                                   option: progress.optionID.rawValue,
                                                   title: progress.optionTitle, status: progress.status.rawValue, reason: progress.reason,
                                                   summary: progress.summary))
    }
}
