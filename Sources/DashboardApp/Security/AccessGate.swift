import HTTPCore

/// Who may read: the per-launch access token (Jupyter's model). Every `/api/*` call and
/// `/metrics` needs it, as `Authorization: Bearer TOKEN` or the cookie that opening
/// `/?token=TOKEN` sets; static files and `/healthz` stay public, so the page can explain how to
/// get in. The token is compared in constant time and never logged.
public struct AccessGate: Sendable {
    /// nil: `--no-auth`, everything is open (writes still need the CSRF token).
    public let token: String?
    /// The cookie's name carries the port: cookies are not kept apart by port, and two dashboards
    /// on one machine must not overwrite each other's.
    public let cookieName: String

    public init(token: String?, port: Int) {
        self.token = token
        cookieName = "lp_token_\(port)"
    }

    /// Whether `path` needs the token.
    public static func isProtected(_ path: Substring) -> Bool {
        path.utf8.starts(with: "/api/".utf8) || path == "/api" || path == "/metrics"
    }

    /// The token a request brings, from `Authorization: Bearer` or the cookie: a slice of the
    /// header, not a copy (every poll is checked; a fan-out checks thousands a second).
    private func presented(_ request: HTTPRequest) -> Substring? {
        if let authorization = request.headers["Authorization"] {
            // Over the UTF-8 bytes: the scheme and the spaces are ASCII, and walking Characters
            // (grapheme breaking) cost more than the rest of the check.
            let bytes = authorization.utf8
            if let space = bytes.firstIndex(of: UInt8(ascii: " ")),
               bytes[..<space].elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }) {
                return authorization[bytes.index(after: space)...].trimmingHTTPWhitespace()
            }
        }
        for header in request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                if trimmed.hasPrefix(cookieName + "=") { return trimmed.dropFirst(cookieName.count + 1) }
            }
        }
        return nil
    }

    public func allows(_ request: HTTPRequest) -> Bool {
        guard let token else { return true }
        guard let presented = presented(request) else { return false }
        return constantTimeEquals(presented, token)
    }

    /// Nil when the request may go on; otherwise the 401 to answer.
    public func check(_ request: HTTPRequest) -> HTTPResponse? {
        guard token != nil, Self.isProtected(request.path), !allows(request) else { return nil }
        var response = Problem(.accessToken, title: "Access token required", status: .unauthorized,
                               detail: "Open the address the dashboard printed when it started (it ends in ?token=...), "
                                   + "or send Authorization: Bearer with that token.").response
        response.headers.set("WWW-Authenticate", #"Bearer realm="dashboard""#)
        return response
    }

    /// `GET /?token=TOKEN`: the right token sets the cookie; either way the answer is a 303 to `/`,
    /// so the token leaves the address bar (and history). Nil for any other request.
    public func landing(_ request: HTTPRequest) -> HTTPResponse? {
        guard let token, request.method == "GET" || request.method == "HEAD", request.path == "/",
              let offered = request.queryValue("token") else { return nil }
        var response = HTTPResponse(status: .seeOther, headers: ["Location": "/", "Content-Length": "0"])
        if constantTimeEquals(offered, token) {
            response.headers.set("Set-Cookie", "\(cookieName)=\(token); HttpOnly; SameSite=Strict; Path=/")
        }
        return response
    }
}
