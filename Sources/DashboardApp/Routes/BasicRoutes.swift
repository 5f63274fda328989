import Foundation
import HTTPCore

/// Routes that need nothing but the process itself: liveness and the page's session bootstrap.
struct BasicRoutes {
    let secrets: LaunchSecrets

    func register(in router: inout Router) {
        router.add("GET", "/healthz") { _, _, _ in
            .text("ok")
        }
        let session = SessionBody(csrfToken: secrets.csrfToken, epoch: secrets.epoch)
        router.add("GET", "/api/session") { _, _, _ in
            try JSONResponse.make(session)
        }
    }
}

struct SessionBody: Codable, Sendable {
    var csrfToken: String
    var epoch: String
}

/// `application/json` responses from `Encodable` values.
enum JSONResponse {
    static func make<Value: Encodable>(_ value: Value, status: HTTPStatus = .ok) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(try encoder.encode(value)))
    }
}
