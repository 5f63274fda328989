import HTTPCore

/// Headers every response carries; API answers are also never cached.
public enum SecurityHeaders {
    public static let contentSecurityPolicy = "default-src 'self'; frame-ancestors 'none'"

    public static func apply(to response: inout HTTPResponse, isAPI: Bool) {
        response.headers.set("Content-Security-Policy", contentSecurityPolicy)
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Cross-Origin-Resource-Policy", "same-origin")
        response.headers.set("Referrer-Policy", "no-referrer")
        if isAPI {
            response.headers.set("Cache-Control", "no-store")
        }
    }
}
