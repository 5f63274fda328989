import HTTPCore

/// Headers every response carries (CONTRACT section 7); API answers are also never cached.
public enum SecurityHeaders {
    public static let contentSecurityPolicy = "default-src 'self'; frame-ancestors 'none'"

    private static let common: HTTPHeaders = [
        "Content-Security-Policy": contentSecurityPolicy,
        "X-Content-Type-Options": "nosniff",
        "Cross-Origin-Resource-Policy": "same-origin",
    ]

    /// For the page's files. `Referrer-Policy` governs what a document sends when it loads or
    /// links something, so the page carries it; a JSON answer loads nothing.
    public static let page: ResponseFinishing = {
        var headers = common
        headers.set("Referrer-Policy", "no-referrer")
        return ResponseFinishing(setting: headers)
    }()

    /// For a message's file (`/api/media/...`): whatever it holds runs nothing (a sandbox with no
    /// sources), and its caching is the route's own (a file is; a refusal is not).
    public static let media: ResponseFinishing = {
        var headers = common
        headers.set("Content-Security-Policy", "sandbox; default-src 'none'")
        return ResponseFinishing(setting: headers)
    }()

    /// For the API: never cached. Every poll answer carries these, so nothing here is decoration
    /// (each byte is read by every client, thousands of times per message in a fan-out).
    public static let api: ResponseFinishing = {
        var headers = common
        headers.set("Cache-Control", "no-store")
        return ResponseFinishing(setting: headers)
    }()
}
