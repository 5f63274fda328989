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
    /// How many messages match, counted up to `SearchQueries.countLimit`: exact when
    /// `totalIsExact`, else "more than" it.
    public var total: Int = 0
    public var totalIsExact = true
    /// End-to-end encrypted chats among those searched: their messages cannot be read, so they
    /// were not searched.
    public var encryptedChatsNotSearched = 0
    /// Set when a word being typed matched more messages than `SearchQueries.prefixWindow`: its
    /// matches were ranked among the newest this many only (the whole word ranks them all).
    public var rankedAmongNewest: Int?
}

/// Why a search gave no page: the query cannot be read (the person's to fix), or the store failed.
public enum SearchFailure: Error, Sendable {
    case query(SearchQueryError)
    case store(StoreError)
}

enum SearchQueries {
    /// Matches are counted up to this many; beyond it the count says "more than".
    static let countLimit = 1000

    /// A tier that matches words by their beginning is ranked among this many of its newest
    /// matches: two letters typed match a large part of a big copy, and ranking every match took
    /// 100-300 ms on a million messages, where the newest 2,000 take a few (lp-bench typing). A
    /// whole word (the next letter, or a space, typed) is ranked among all its matches again.
    static let prefixWindow = 2000

    /// Matches of `query` among `account`'s messages (one chat's, when given), tier by tier (see
    /// `SearchQuery.tiers`: the typed words as a phrase first), each ranked by FTS5's bm25, ties
    /// newest first, a tier of beginnings of words among its `prefixWindow` newest matches;
    /// `offset` results skipped.
    static func search(_ connection: SQLiteConnection, _ query: SearchQuery, account: AccountRole, chat: Int64?, offset: Int,
                       limit: Int) throws(SearchFailure) -> SearchPage {
        let limit = max(1, limit)
        let offset = max(0, offset)
        do {
            // Without a chat, the page is chosen from the index alone and only its rows are read from
            // the messages: a search of two common words matches a third of a large store, and
            // reading every match's row before sorting made it ten times slower (lp-bench search).
            // A tier of beginnings of words is ranked among its newest matches (`prefixWindow`).
            let whole = try connection.statement(chat == nil ? """
                SELECT \(MessageQueries.columns)
                FROM (SELECT rowid, rank FROM message_search WHERE message_search MATCH ?1 AND (rowid & 1) = ?2
                      ORDER BY rank, rowid DESC LIMIT ?4) s
                JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
                ORDER BY s.rank, s.rowid DESC
                """ : """
                SELECT \(MessageQueries.columns)
                FROM message_search s
                JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
                WHERE message_search MATCH ?1 AND (s.rowid & 1) = ?2 AND m.chat_id = ?3
                ORDER BY s.rank, m.id DESC LIMIT ?4
                """)
            let newest = try connection.statement(chat == nil ? """
                SELECT \(MessageQueries.columns)
                FROM (SELECT rowid, rank FROM (SELECT rowid, rank FROM message_search WHERE message_search MATCH ?1 AND (rowid & 1) = ?2
                                               ORDER BY rowid DESC LIMIT ?5)
                      ORDER BY rank, rowid DESC LIMIT ?4) s
                JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
                ORDER BY s.rank, s.rowid DESC
                """ : """
                SELECT \(MessageQueries.columns)
                FROM (SELECT s.rowid AS rowid, s.rank AS rank FROM message_search s
                      JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                      WHERE message_search MATCH ?1 AND (s.rowid & 1) = ?2 AND m.chat_id = ?3
                      ORDER BY s.rowid DESC LIMIT ?5) s
                JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                LEFT JOIN chats c ON c.account = m.account AND c.chat_id = m.chat_id
                ORDER BY s.rank, m.id DESC LIMIT ?4
                """)
            // Up to the end of this page and one more (to know whether there is a next), tier by tier.
            let wanted = offset + limit + 1
            var rows: [StoredMessage] = []
            var windowFilled = false
            for tier in query.tiers where rows.count < wanted {
                if tier.matchesPrefixes && !windowFilled {
                    windowFilled = try count(connection, tier.expression, account: account, chat: chat, upTo: Self.prefixWindow + 1) > Self.prefixWindow
                }
                var parameters: [SQLiteValue] = [.text(tier.expression), .integer(account.rawValue), chat.map { .integer($0) } ?? .null,
                                                 .integer(Int64(wanted - rows.count))]
                if tier.matchesPrefixes { parameters.append(.integer(Int64(Self.prefixWindow))) }
                rows += try (tier.matchesPrefixes ? newest : whole).query(parameters) {
                    MessageQueries.message($0, account: account)
                }
            }
            var page = Array(rows.dropFirst(offset).prefix(limit + 1))
            let hasMore = page.count > limit
            if hasMore { page.removeLast() }
            let counted = try count(connection, query.expression, account: account, chat: chat, upTo: countLimit + 1)
            let encrypted = try connection.scalarInt("""
                SELECT count(*) FROM chats c WHERE c.account = ?1 AND c.encrypted = 1 AND (?2 IS NULL OR c.chat_id = ?2)
                AND \(ChatQueries.unreadable)
                """,
                                                     .integer(account.rawValue), chat.map { .integer($0) } ?? .null) ?? 0
            return SearchPage(results: page.map { SearchResult(message: $0, snippet: Snippet.pieces(of: $0.text, matching: query.terms)) },
                              next: hasMore ? offset + limit : nil, total: min(counted, countLimit), totalIsExact: counted <= countLimit,
                              encryptedChatsNotSearched: Int(encrypted), rankedAmongNewest: windowFilled ? Self.prefixWindow : nil)
        } catch let error as SQLiteError where error.primaryCode == 1 {  // SQLITE_ERROR
            // FTS5's own parser said no: the query's words, not the store.
            throw .query(.unreadable(error.message))
        } catch {
            throw .store(MessageStore.storeError(error, usage: nil, needed: 0))
        }
    }

    /// How many messages match `expression`, up to `limit` (so a common word costs no more than
    /// that many index entries to count).
    private static func count(_ connection: SQLiteConnection, _ expression: String, account: AccountRole, chat: Int64?, upTo limit: Int) throws -> Int {
        let statement = try connection.statement(chat == nil ? """
            SELECT count(*) FROM (SELECT 1 FROM message_search WHERE message_search MATCH ?1 AND (rowid & 1) = ?2 LIMIT ?4)
            """ : """
            SELECT count(*) FROM (SELECT 1 FROM message_search s JOIN messages m ON m.account = (s.rowid & 1) AND m.id = (s.rowid >> 1)
                                  WHERE message_search MATCH ?1 AND (s.rowid & 1) = ?2 AND m.chat_id = ?3 LIMIT ?4)
            """)
        let rows = try statement.query([.text(expression), .integer(account.rawValue), chat.map { .integer($0) } ?? .null,
                                        .integer(Int64(limit))]) { $0.int64(at: 0) }
        return Int(rows.first ?? 0)
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
