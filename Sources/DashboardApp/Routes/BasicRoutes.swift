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
