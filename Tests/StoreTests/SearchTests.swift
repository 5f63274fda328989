import Foundation
import SQLite
import Testing
@testable import Store
import Upstream

/// The local copy searched: the index kept with the messages through batches, Free space, purges
/// and upgrades; queries read as a person means them; snippets as text pieces.
@Suite("Search")
struct SearchTests {
    let folder: TemporaryFolder
    let path: String

    init() throws {
        folder = try TemporaryFolder()
        path = folder.path + "/store.sqlite"
    }

    private func said(_ texts: [String], from id: Int64 = 1, chat: Int64 = 1) -> [UpstreamMessage] {
        texts.enumerated().map { UpstreamMessage(id: id + Int64($0.offset), chatId: chat, sender: "bob", text: $0.element, sentAt: now) }
    }

    private func found(_ store: MessageStore, _ text: String, _ account: AccountRole = .primary, chat: Int64? = nil) async throws -> [Int64] {
        try await store.search(SearchQuery(text), account: account, chat: chat, limit: 100).results.map(\.message.id)
    }

    @Test func wordsAreFoundWithAccentsAndCaseFoldedAndTheLastWordAsAPrefix() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(["Lunch at the café?", "Coffee later", "The CAFE is closed", "lunchbox"]), to: .primary, receivedAt: now)
        #expect(Set(try await found(store, "cafe ")) == [1, 3])
        #expect(Set(try await found(store, "lun")) == [1, 4], "as you type: a prefix")
        #expect(try await found(store, "l").isEmpty, "one letter typed is a word of one letter, not every word that starts so")
        #expect(Set(try await found(store, "l*")) == [1, 2, 4], "unless it asks for a prefix")
        #expect(try await found(store, "lunch ") == [1], "a finished word is whole")
        #expect(try await found(store, "\"cafe is\"") == [3], "a phrase")
        #expect(Set(try await found(store, "coffee OR closed")) == [2, 3])
        #expect(try await found(store, "cafe NOT closed") == [1])
        #expect(try await found(store, "cafe", .linked).isEmpty, "each account its own")
    }

    @Test func theMessageThatSaysWhatWasTypedComesFirst() async throws {
        let store = try MessageStore(location: .file(path))
        // Newer messages whose numbers start with what was typed, and one older that says it exactly.
        let texts = ["Message 150 for primary"] + (1500...1509).map { "Message \($0) for primary" } + ["150 messages, said the Message board"]
        _ = try await store.apply(said(texts), to: .primary, receivedAt: now)
        let typed = try await found(store, "Message 150")
        #expect(typed.first == 1, "the exact phrase first, though ten newer ones start the same: \(typed)")
        #expect(typed.dropFirst().first == 12, "then every word whole, in any order")
        #expect(Set(typed.dropFirst(2)) == Set(2...11), "then the words typed so far")
        #expect(typed.count == 12, "each once")
        #expect(Set(try await found(store, "150").prefix(2)) == [1, 12], "one word: whole before the longer ones")
        // Operators and phrases keep FTS5's order: the tiers are for plain words.
        #expect(Set(try await found(store, "\"message 150\" OR board")) == [1, 12])
    }

    @Test func theCountIsExactUpToAThousandAndSaysMoreThanBeyond() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said((1...1005).map { "apple number \($0)" }), to: .primary, receivedAt: now)
        let common = try await store.search(SearchQuery("apple "), account: .primary, limit: 20)
        #expect(common.results.count == 20)
        #expect(common.total == 1000 && !common.totalIsExact, "more than 1,000: not counted further")
        let rare = try await store.search(SearchQuery("number 77 "), account: .primary, limit: 20)
        #expect(rare.total == 1 && rare.totalIsExact)
        let paged = try await store.search(SearchQuery("apple "), account: .primary, offset: 1000, limit: 20)
        #expect(paged.results.count == 5 && paged.next == nil, "the last page")
    }

    @Test func theIndexFollowsEveryWayMessagesGo() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said(["first apple", "second apple", "third apple", "fourth apple"]), to: .primary, receivedAt: now)
        _ = try await store.apply(said(["linked apple"]), to: .linked, receivedAt: now)
        let used = await store.storageUsage().usedBytes
        try await store.setQuota(used)
        await #expect(throws: StoreError.self) { try await store.apply(self.said(["banana overflow"], from: 5), to: .primary, receivedAt: now) }
        #expect(try await found(store, "banana").isEmpty, "a batch that did not fit is not indexed either")
        _ = try await store.freeSpace(neededBytes: 1)
        let left = try await store.messages(of: .primary, limit: 100).messages.map(\.id).sorted()
        #expect(Set(try await found(store, "apple")) == Set(left), "Free space takes the removed ones out of the index")
        _ = try await store.purgeLinkedAccount()
        #expect(try await found(store, "apple", .linked).isEmpty)
        _ = try await store.removeAllAccounts()
        #expect(try await found(store, "apple").isEmpty)
        #expect(try await store.searchIndexIsSound())
    }

    @Test func aStoreFromBeforeSearchIsIndexedWhenItOpens() async throws {
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, to: 6)
        try connection.execute("""
            INSERT INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size)
            VALUES (0, 1, 1, 'bob', 'an old message about pelicans', 'x', 'y', 80), (1, 2, 1, 'bob', 'pelicans again', 'x', 'y', 80)
            """)
        connection.close()
        let store = try MessageStore(location: .file(path))
        #expect(try await found(store, "pelican") == [1])
        #expect(try await found(store, "pelicans", .linked) == [2])
    }

    @Test func aStoreFromBeforeThePrefixIndexIsIndexedAgainAsItWasAndFindsWhatItFoundBefore() async throws {
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, to: 18)
        // As step 18 left it: texts as shown (an edit's newest words), each indexed under id * 2 +
        // account, and an encrypted placeholder never indexed.
        try connection.execute("""
            INSERT INTO messages (account, id, chat_id, sender, text, sent_at, received_at, size, kind, original_text, edited_at)
            VALUES (0, 1, 1, 'bob', 'lunch at noon', 'x', 'y', 80, 'text', NULL, NULL),
                   (0, 2, 1, 'bob', 'dinner instead', 'x', 'y', 80, 'text', 'breakfast first', 'z'),
                   (1, 3, 1, 'bob', 'lunchbox for the linked one', 'x', 'y', 80, 'text', NULL, NULL),
                   (0, 4, 2, 'bob', 'Encrypted message', 'x', 'y', 80, 'encrypted', NULL, NULL);
            INSERT INTO message_search (rowid, text) VALUES (2, 'lunch at noon'), (4, 'dinner instead'), (7, 'lunchbox for the linked one');
            """)
        connection.close()
        let store = try MessageStore(location: .file(path))
        #expect(try await store.searchIndexIsSound())
        #expect(try await found(store, "lu") == [1], "a beginning of two letters, from the new prefix index")
        #expect(try await found(store, "lun", .linked) == [3])
        #expect(try await found(store, "dinner ") == [2], "an edit's newest words")
        #expect(try await found(store, "breakfast ").isEmpty, "not the words it replaced")
        #expect(try await found(store, "encrypted ").isEmpty, "a placeholder is not indexed")
        _ = try await store.removeAllAccounts()
        #expect(try await store.searchIndexIsSound(), "what was indexed again is what deleting takes out")
    }

    @Test func aBeginningOfAWordIsRankedAmongItsNewestMatchesAndAWholeWordAmongAll() async throws {
        let store = try MessageStore(location: .file(path))
        let window = SearchQueries.prefixWindow
        // The best match for "tra" by far is the oldest message; the window's newest come after it.
        _ = try await store.apply(said(["trampoline trampoline trampoline"]) + said(Array(repeating: "a long note about a travel plan and the rest",
                                                                                        count: window + 50), from: 2),
                                  to: .primary, receivedAt: now)
        let typing = try await found(store, "tra")
        #expect(!typing.contains(1), "older than the newest \(window) matches of a beginning")
        #expect(typing.first == Int64(window + 51), "the newest first among equals")
        #expect(try await found(store, "trampoline") .first == 1, "the word whole is ranked among all its matches")
        #expect(try await found(store, "trampo").first == 1, "a beginning with fewer matches than the window finds it")
        #expect(try await store.search(SearchQuery("tra"), account: .primary).rankedAmongNewest == window, "and the page is told")
        #expect(try await store.search(SearchQuery("trampo"), account: .primary).rankedAmongNewest == nil)
        #expect(try await store.search(SearchQuery("travel "), account: .primary).rankedAmongNewest == nil, "a word ended by a space")
    }

    @Test func oneChatOnlyAndPagesOfResults() async throws {
        let store = try MessageStore(location: .file(path))
        _ = try await store.apply(said((1...25).map { "note number \($0)" }, chat: 1) + said(["note elsewhere"], from: 26, chat: 2),
                                  to: .primary, receivedAt: now)
        #expect(try await found(store, "note", chat: 2) == [26])
        let first = try await store.search(SearchQuery("note"), account: .primary, chat: 1, limit: 10)
        let second = try await store.search(SearchQuery("note"), account: .primary, chat: 1, offset: first.next ?? 0, limit: 10)
        let third = try await store.search(SearchQuery("note"), account: .primary, chat: 1, offset: second.next ?? 0, limit: 10)
        let all = (first.results + second.results + third.results).map(\.message.id)
        #expect(all.count == 25 && Set(all).count == 25 && third.next == nil, "every match once, then no more")
        #expect(first.results.map(\.message.id) == first.results.map(\.message.id).sorted(by: >), "equal ranks: newest first")
    }

    @Test(arguments: [
        ("", SearchQueryError.empty), ("   ", .empty), ("!!! ---", .empty), ("\"lunch", .unclosedQuote), ("(lunch", .unclosedParenthesis),
        ("lunch)", .unopenedParenthesis), ("()", .emptyParentheses), ("OR lunch", .operatorWithoutWords("OR")),
        ("lunch AND", .operatorWithoutWords("AND")), (String(repeating: "a", count: 201), .tooLong),
    ])
    func queriesThatCannotBeReadSayWhy(_ text: String, _ expected: SearchQueryError) {
        #expect(throws: expected) { try SearchQuery(text) }
        #expect(!expected.description.isEmpty && !expected.description.contains("fts5"))
    }

    @Test func whatFTS5CallsSyntaxIsJustWordsHere() throws {
        // Column filters, NEAR, carets and stars mid-word would be FTS5 syntax; here they are text.
        let query = try SearchQuery("text: NEAR(a b) ^start mid*dle -minus")
        #expect(query.expression == #""text" AND "NEAR" AND ( "a" AND "b" ) AND "start" AND "mid" AND "dle" AND "minus"*"#)
    }

    @Test func snippetsArePiecesOfTextAroundTheFirstMatchWhateverTheMessageHolds() throws {
        let html = "<script>alert('x')</script> lunch <b>today</b>"
        let pieces = Snippet.pieces(of: html, matching: try SearchQuery("lunch ").terms)
        #expect(pieces.map(\.text).joined() == html, "all of a short message, as it is: text, never markup")
        #expect(pieces.filter(\.match).map(\.text) == ["lunch"])

        let huge = String(repeating: "filler ", count: 20_000) + "Crème brûlée " + String(repeating: "tail ", count: 20_000)
        let cut = Snippet.pieces(of: huge, matching: try SearchQuery("creme brulee ").terms)
        #expect(cut.first?.text == "…" && cut.last?.text == "…")
        #expect(cut.filter(\.match).map(\.text) == ["Crème", "brûlée"])
        #expect(cut.map(\.text).joined().count <= 170, "a window, not 240,000 characters")
    }
}
