import HTTPCore

/// Headers every response carries; API answers are also never cached.
public enum SecurityHeaders {
    public static let contentSecurityPolicy = "default-src 'self'; frame-ancestors 'none'"

    private static let common: HTTPHeaders = [
        "Content-Security-Policy": contentSecurityPolicy,
        "X-Content-Type-Options": "nosniff",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Referrer-Policy": "no-referrer",
    ]

    /// For the page's files.
    public static let page = ResponseFinishing(setting: common)

    /// For the API: never cached either.
    public static let api: ResponseFinishing = {
        var headers = common
        headers.set("Cache-Control", "no-store")
        return ResponseFinishing(setting: headers)
    }()
}
