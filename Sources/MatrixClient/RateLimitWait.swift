import HTTPCore

/// How long a 429 asks to wait (CONTRACT section 10): at least what `Retry-After` says (seconds or
/// an HTTP date) and what the body's `retry_after_ms` says, whichever is longer when both are
/// given; nil when neither says anything readable.
enum RateLimitWait {
    static func duration(retryAfterHeader: String?, retryAfterMs: Int64?, nowSeconds: Int) -> Duration? {
        let fromBody = retryAfterMs.map { Duration.milliseconds(max(0, $0)) }
        let fromHeader = retryAfterHeader.flatMap { header -> Duration? in
            let value = header.trimmingPrefixAndSuffixSpaces
            if let seconds = Int64(value), seconds >= 0 { return .seconds(seconds) }
            if let date = HTTPDate.parse(value) { return .seconds(max(0, date - nowSeconds)) }
            return nil
        }
        switch (fromBody, fromHeader) {
        case let (body?, header?): return max(body, header)
        case let (body, header): return body ?? header
        }
    }
}

private extension String {
    var trimmingPrefixAndSuffixSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
