import SQLite

/// One search result: the message and the snippet to show for it.
public struct SearchResult: Sendable, Equatable {
    public var message: StoredMessage
    public var snippet: [SnippetPiece]
}

/// A page of results, best first then newest; `next` is where the next page starts (nil: no more).
public struct SearchPage: Sendable, Equatable {
    public var results: [SearchResult]
    public var next: Int?
}

/// Why a search gave no page: the query cannot be read (the person's to fix), or the store failed.
public enum SearchFailure: Error, Sendable {
    case query(SearchQueryError)
    case store(StoreError)
}

enum SearchQueries {
    /// Matches of `query` among `account`'s messages (one chat's, when given), ranked by FTS5's
    /// bm25, ties newest first; `offset` results skipped.
    static func search(_ connection: SQLiteConnection, _ query: SearchQuery, account: AccountRole, chat: Int64?, offset: Int,
                       limit: Int) throws(SearchFailure) -> SearchPage {
        let limit = max(1, limit)
        do {
            // Without a chat, the page is chosen from the index alone and only its rows are read from
            // the messages: a search of two common words matches a third of a large store, and
            // reading every match's row before sorting made it ten times slower (lp-bench search).
            let statement = try connection.statement(chat == nil ? """
                SELECT m.id, m.chat_id, m.sender, m.text, m.sent_at, m.received_at, c.name
                FROM (SELECT rowid, rank FROM message_search WHERE message_search MATCH ?1 AND (rowid & 1) = ?2
                      ORDER BY rank, rowid DESC LIMIT ?4 OFFSET ?5) s
                JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
                ORDER BY s.rank, s.rowid DESC
                """ : """
                SELECT m.id, m.chat_id, m.sender, m.text, m.sent_at, m.received_at, c.name
                FROM message_search s
                JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
                WHERE message_search MATCH ?1 AND (s.rowid & 1) = ?2 AND m.chat_id = ?3
                ORDER BY s.rank, m.id DESC LIMIT ?4 OFFSET ?5
                """)
            var rows = try statement.query([.text(query.expression), .integer(account.rawValue), chat.map { .integer($0) } ?? .null,
                                            .integer(Int64(limit + 1)), .integer(Int64(max(0, offset)))]) {
                MessageQueries.message($0, account: account)
            }
            let hasMore = rows.count > limit
            if hasMore { rows.removeLast() }
            return SearchPage(results: rows.map { SearchResult(message: $0, snippet: Snippet.pieces(of: $0.text, matching: query.terms)) },
                              next: hasMore ? max(0, offset) + limit : nil)
        } catch let error as SQLiteError where error.primaryCode == 1 {  // SQLITE_ERROR
            // FTS5's own parser said no: the query's words, not the store.
            throw .query(.unreadable(error.message))
        } catch {
            throw .store(MessageStore.storeError(error, usage: nil, needed: 0))
        }
    }
}

extension MessageStore {
    /// Full-text search of the local copy (see ``SearchQuery`` for what can be typed).
    public func search(_ query: SearchQuery, account: AccountRole, chat: Int64? = nil, offset: Int = 0,
                       limit: Int = 20) throws(SearchFailure) -> SearchPage {
        try SearchQueries.search(connectionForReading, query, account: account, chat: chat, offset: offset, limit: limit)
    }
}

extension StoreReader {
    /// As ``MessageStore/search(_:account:chat:offset:limit:)``, without waiting behind the writer.
    public func search(_ query: SearchQuery, account: AccountRole, chat: Int64? = nil, offset: Int = 0,
                       limit: Int = 20) throws(SearchFailure) -> SearchPage {
        try SearchQueries.search(connectionForReading, query, account: account, chat: chat, offset: offset, limit: limit)
    }
}
