import Foundation
import HTTPCore
import Upstream

/// `application/json` responses from `Encodable` values.
enum JSONResponse {
    /// `dates: true` writes dates as ISO-8601 with milliseconds, e.g. `2026-11-29T12:00:00.000Z`.
    static func make<Value: Encodable>(_ value: Value, status: HTTPStatus = .ok, dates: Bool = false) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if dates {
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(Timestamp.string(date))
            }
        }
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(try encoder.encode(value)))
    }
}
