import Foundation
import HTTPCore
import Store

/// `GET /api/search?q=TEXT&account=...&chat=ID&before=...&limit=N` (CONTRACT section 9): full-text
/// matches in the local copy, best first then newest, with snippets as text pieces. `before` is the
/// `next` of the previous page. A search that cannot be read is a 400 that says why.
struct SearchRoutes {
    let copy: LocalCopy

    static let defaultLimit = 20
    static let maxLimit = 100

    func register(in router: inout Router) {
        router.add("GET", "/api/search") { request, _, _ in
            try await results(request)
        }
    }

    private func results(_ request: HTTPRequest) async throws -> HTTPResponse {
        let parameters = QueryParameters(request)
        let account: AccountRole, chat: Int64?, limit: Int
        do throws(Problem) {
            account = try parameters.account()
            chat = try parameters.chat()
            limit = try parameters.limit(default: Self.defaultLimit, maximum: Self.maxLimit)
        } catch {
            return error.response
        }
        let query: SearchQuery
        do {
            query = try SearchQuery(request.queryValue("q") ?? "")
        } catch {
            return Self.unreadable(error)
        }
        var offset = 0
        if let text = request.queryValue("before") {
            guard let value = Int(text), value >= 0 else {
                return Problem(status: .badRequest, detail: "before must be the next of the previous page.").response
            }
            offset = value
        }
        let page: SearchPage
        do throws(SearchFailure) {
            page = try await copy.search(query, account: account, chat: chat, offset: offset, limit: limit)
        } catch {
            switch error {
            case .query(let reason):
                return Self.unreadable(reason)
            case .store:
                return Problem.storageError("The local copy cannot be searched").response
            }
        }
        return try JSONResponse.make(SearchPageBody(page))
    }

    private static func unreadable(_ reason: SearchQueryError) -> HTTPResponse {
        Problem(.searchUnreadable, title: "The search cannot be read", status: .badRequest, detail: reason.description).response
    }
}

/// `{"results": [{"message": {...}, "snippet": [{"text", "match"}...]}...], "next": N | null,
/// "total": n, "totalIsExact": bool}`: the count is exact up to 1,000 matches, "more than" beyond.
struct SearchPageBody: Encodable, Sendable {
    struct Result: Encodable, Sendable {
        var message: MessagePageBody.Message
        var snippet: [Piece]
    }

    struct Piece: Encodable, Sendable {
        var text: String
        var match: Bool
    }

    var results: [Result]
    var next: String?
    var total: Int
    var totalIsExact: Bool
    var encryptedChatsNotSearched: Int
    var rankedAmongNewest: Int?

    init(_ page: SearchPage) {
        rankedAmongNewest = page.rankedAmongNewest
        total = page.total
        totalIsExact = page.totalIsExact
        encryptedChatsNotSearched = page.encryptedChatsNotSearched
        results = page.results.map { result in
            Result(message: MessagePageBody.messages([result.message])[0], snippet: result.snippet.map { Piece(text: $0.text, match: $0.match) })
        }
        next = page.next.map(String.init)
    }

    enum CodingKeys: String, CodingKey { case results, next, total, totalIsExact, encryptedChatsNotSearched, rankedAmongNewest }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(results, forKey: .results)
        try container.encode(next, forKey: .next)  // null, not absent, on the last page
        try container.encode(total, forKey: .total)
        try container.encode(totalIsExact, forKey: .totalIsExact)
        try container.encode(encryptedChatsNotSearched, forKey: .encryptedChatsNotSearched)
        try container.encode(rankedAmongNewest, forKey: .rankedAmongNewest)  // null when every match was ranked
    }
}
