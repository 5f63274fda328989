import HTTPCore

/// The checks every state-changing request (POST, PUT, PATCH, DELETE) must pass, in one place:
/// a JSON body (when there is a body), the per-launch CSRF token, and, when the browser names
/// them, the dashboard's own origin and `Sec-Fetch-Site: same-origin`.
public struct StateChangeGuard: Sendable {
    public static let tokenHeader = "X-CSRF-Token"
    private static let stateChangingMethods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]

    private let csrfToken: String
    private let hosts: HostAllowList

    public init(csrfToken: String, hosts: HostAllowList) {
        self.csrfToken = csrfToken
        self.hosts = hosts
    }

    public static func isStateChanging(_ method: String) -> Bool {
        stateChangingMethods.contains(method)
    }

    /// Nil when the request may proceed, otherwise the problem to answer with.
    public func check(_ request: HTTPRequest) -> Problem? {
        guard Self.isStateChanging(request.method) else { return nil }
        if let origin = request.headers["Origin"], !hosts.allowsOrigin(origin) {
            return Problem(.crossOrigin, title: "Cross-origin request refused", status: .forbidden,
                           detail: "Only the dashboard's own page may change its state.")
        }
        if let site = request.headers["Sec-Fetch-Site"], !site.equalsIgnoringASCIICase("same-origin") {
            return Problem(.crossOrigin, title: "Cross-origin request refused", status: .forbidden,
                           detail: "Only the dashboard's own page may change its state.")
        }
        // A body must be JSON; a request without one needs no Content-Type (the CSRF header below
        // already keeps it from being a request a foreign page could send).
        let mediaType = request.headers["Content-Type"]?.split(separator: ";").first.map { String($0).trimmingHTTPWhitespace() }
        if !request.body.isEmpty || mediaType != nil {
            guard let mediaType, mediaType.equalsIgnoringASCIICase("application/json") else {
                return Problem(.unsupportedMediaType, title: "JSON required", status: .unsupportedMediaType,
                               detail: "Send the request body as application/json.")
            }
        }
        guard let token = request.headers[Self.tokenHeader], constantTimeEquals(token, csrfToken) else {
            return Problem(.csrfToken, title: "Missing or wrong CSRF token", status: .forbidden,
                           detail: "Reload the page to get a fresh token, then try again.")
        }
        return nil
    }
}
