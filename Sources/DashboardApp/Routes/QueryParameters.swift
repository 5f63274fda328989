import HTTPCore
import Store

/// The query parameters the reading routes share (`account`, `chat`, `limit`), read and refused
/// the same way everywhere: a value that cannot be read is a 400 that says what is expected.
struct QueryParameters {
    let request: HTTPRequest

    init(_ request: HTTPRequest) {
        self.request = request
    }

    /// `account=primary|linked`; absent, `fallback` (nil: it must be named).
    func account(default fallback: AccountRole? = .primary) throws(Problem) -> AccountRole {
        let unnamed = Problem(status: .badRequest, detail: "Name the account: account=primary or account=linked.")
        guard let name = request.queryValue("account") else {
            guard let fallback else { throw unnamed }
            return fallback
        }
        guard let account = AccountRole(name: name) else { throw unnamed }
        return account
    }

    /// `chat=ID`, or nil for every chat.
    func chat() throws(Problem) -> Int64? {
        guard let text = request.queryValue("chat") else { return nil }
        guard let value = Int64(text) else { throw Problem(status: .badRequest, detail: "chat must be a chat id.") }
        return value
    }

    /// `limit=N` from 1 to `maximum`; absent, `fallback`.
    func limit(default fallback: Int, maximum: Int) throws(Problem) -> Int {
        guard let text = request.queryValue("limit") else { return fallback }
        guard let value = Int(text), (1...maximum).contains(value) else {
            throw Problem(status: .badRequest, detail: "limit must be a number from 1 to \(maximum).")
        }
        return value
    }
}
