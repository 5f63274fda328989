import Foundation
import HTTPCore

/// Routes that need nothing but the process itself: liveness and the page's session bootstrap.
struct BasicRoutes {
    let secrets: LaunchSecrets
    /// Whether the simulator is built in, so the page shows its panel without probing for it.
    let hasSimulator: Bool

    func register(in router: inout Router) {
        router.add("GET", "/healthz") { _, _, _ in
            .text("ok")
        }
        let session = SessionBody(csrfToken: secrets.csrfToken, epoch: secrets.epoch, simulator: hasSimulator)
        router.add("GET", "/api/session") { _, _, _ in
            try JSONResponse.make(session)
        }
    }
}

struct SessionBody: Codable, Sendable {
    var csrfToken: String
    var epoch: String
    var simulator: Bool
}

/// `application/json` responses from `Encodable` values.
enum JSONResponse {
    /// `dates: true` writes dates as ISO-8601 with milliseconds, e.g. `2026-11-29T12:00:00.000Z`.
    static func make<Value: Encodable>(_ value: Value, status: HTTPStatus = .ok, dates: Bool = false) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if dates {
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)
                    .timeZone(separator: .omitted)))
            }
        }
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(try encoder.encode(value)))
    }
}
