import Store

/// Where the page's reads of the local copy go: the read-only companion connection of a file
/// store, so reading never waits behind a batch being written, or the store itself when it lives
/// in memory. Writes (mark as read) always go to the store.
struct LocalCopy: Sendable {
    let store: MessageStore
    let reader: StoreReader?

    func page(of account: AccountRole, chat: Int64?, before: Int64?, limit: Int) async throws(StoreError) -> MessagePage {
        if let reader { return try await reader.messages(of: account, chat: chat, before: before, limit: limit) }
        return try await store.messages(of: account, chat: chat, before: before, limit: limit)
    }

    func thread(of account: AccountRole, root: Int64, before: Int64?, limit: Int) async throws(StoreError) -> MessagePage? {
        if let reader { return try await reader.threadReplies(of: account, root: root, before: before, limit: limit) }
        return try await store.threadReplies(of: account, root: root, before: before, limit: limit)
    }

    func slice(of account: AccountRole, chat: Int64?, after: Int64, limit: Int) async throws(StoreError) -> [StoredMessage] {
        if let reader { return try await reader.messages(of: account, chat: chat, after: after, limit: limit) }
        return try await store.messages(of: account, chat: chat, after: after, limit: limit)
    }

    func chats(of account: AccountRole) async throws(StoreError) -> [ChatSummary] {
        if let reader { return try await reader.chats(of: account) }
        return try await store.chats(of: account)
    }

    func search(_ query: SearchQuery, account: AccountRole, chat: Int64?, offset: Int, limit: Int) async throws(SearchFailure) -> SearchPage {
        if let reader { return try await reader.search(query, account: account, chat: chat, offset: offset, limit: limit) }
        return try await store.search(query, account: account, chat: chat, offset: offset, limit: limit)
    }

    func outbox() async throws(StoreError) -> [OutboxEntry] {
        if let reader { return try await reader.outbox() }
        return try await store.outbox()
    }
}
