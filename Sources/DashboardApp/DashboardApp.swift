import Foundation
import HTTPCore
import Engine
import Logging
import Store

/// The dashboard's HTTP face: security checks, API routes and the static page, in that order.
public struct DashboardApp: HTTPResponder {
    public let secrets: LaunchSecrets
    public let hosts: HostAllowList
    public let access: AccessGate
    private let stateChangeGuard: StateChangeGuard
    private let staticFiles: StaticFiles
    private let router: Router
    private let polls: PollRoutes
    private let log = Logger("app")

    /// - Parameters:
    ///   - port: the port actually bound; it decides which `Host` values are accepted.
    ///   - staticFiles: the `Public/` folder.
    ///   - services: the store, engine, feed and error registry behind the API.
    ///   - secrets: the CSRF token, the epoch (the feed's epoch must be the same) and the access token.
    ///   - requireAccessToken: false for `--no-auth`: reads need no token.
    ///   - bound: the address listened on (decides the allowed `Host` names); nil is IPv4 loopback.
    public init(port: Int, staticFiles: StaticFiles, services: DashboardServices, secrets: LaunchSecrets, requireAccessToken: Bool = true,
                bound: SocketAddress? = nil) {
        self.secrets = secrets
        self.hosts = HostAllowList(port: port, bound: bound)
        self.access = AccessGate(token: requireAccessToken ? secrets.accessToken : nil, port: port)
        self.stateChangeGuard = StateChangeGuard(csrfToken: secrets.csrfToken, hosts: hosts)
        self.staticFiles = staticFiles
        var router = Router()
        BasicRoutes(secrets: secrets, hasSimulator: services.simulator != nil).register(in: &router)
        let copy = LocalCopy(store: services.store, reader: services.reader)
        MessageRoutes(copy: copy).register(in: &router)
        SearchRoutes(copy: copy).register(in: &router)
        ChatRoutes(copy: copy, feed: services.feed, readMarkers: services.readMarkers).register(in: &router)
        ExportRoutes(copy: copy).register(in: &router)
        OutboxRoutes(outboxes: services.outboxes, copy: copy, registry: services.registry).register(in: &router)
        ReactionRoutes(outboxes: services.outboxes).register(in: &router)
        MediaRoutes(engine: services.engine, cache: MediaCache(folder: services.store.location.mediaCachePath, capacity: MediaRoutes.defaultCacheBytes),
                    maxBytes: MediaRoutes.defaultMaxBytes).register(in: &router)
        let state = StateRoutes(services: services)
        state.register(in: &router)
        let polls = PollRoutes(feed: services.feed, state: state)
        polls.register(in: &router)
        self.polls = polls
        ErrorRoutes(services: services).register(in: &router)
        let store = services.store
        let filler = services.simulator.map { simulator in StorageFiller(simulator: simulator, usage: { await store.storageUsage() }) }
        SimulatorRoutes(simulator: services.simulator, filler: filler).register(in: &router)
        MetricsRoutes(services: services).register(in: &router)
        self.router = router
    }

    public func respond(to request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        try await answer(request, context: context)
    }

    /// Every answer's last step, held polls' and the core's own errors' included: the security
    /// headers, and `no-store` on the API.
    public func finishing(for request: HTTPRequest?) -> ResponseFinishing {
        guard let request else { return SecurityHeaders.api }
        if request.path.hasPrefix("/api/media/") { return SecurityHeaders.media }
        return Self.isAPIPath(request.path) ? SecurityHeaders.api : SecurityHeaders.page
    }

    /// The two hot paths, answered on the loop thread without a task: static files and polls.
    /// Anything unusual (a refusal, a bad query, a reset) takes the async path, which answers it.
    public func respondOnLoop(to request: HTTPRequest, context: RequestContext) -> HTTPResponse? {
        guard request.method == "GET", allowsHost(request) else { return nil }
        let path = request.path
        if path == "/api/poll" {
            guard access.allows(request) else { return nil }
            return polls.answerOnLoop(request)
        }
        if !Self.isAPIPath(path), request.query == nil, case .found(let file) = staticFiles.response(for: request) {
            return file
        }
        return nil
    }

    /// The `Host` check, for every request form: an absolute-form target's authority must be
    /// allowed as well as the `Host` field.
    private func allowsHost(_ request: HTTPRequest) -> Bool {
        hosts.allows(request.headers["Host"]) && (request.absoluteFormAuthority.map(hosts.allows) ?? true)
    }

    private func answer(_ request: HTTPRequest, context: RequestContext) async throws -> HTTPResponse {
        guard allowsHost(request) else {
            log.info("refused \(request.method) \(request.path) for Host \(request.headers["Host"] ?? "(none)")")
            return Problem.hostNotAllowed(request.headers["Host"]).response
        }
        if let landing = access.landing(request) {
            return landing
        }
        if let refusal = access.check(request) {
            return refusal
        }
        if let problem = stateChangeGuard.check(request) {
            return problem.response
        }
        switch router.match(method: request.method, path: request.path) {
        case .found(let handler, let parameters):
            return try await handler(request, parameters, context)
        case .methodNotAllowed(let allowed):
            return Self.methodNotAllowed(request.method, allowed: allowed)
        case .notFound:
            break
        }
        if Self.isAPIPath(request.path) {
            return Problem.notFound(request.path).response
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return Self.methodNotAllowed(request.method, allowed: ["GET", "HEAD"])
        }
        switch staticFiles.response(for: request) {
        case .found(let response): return response
        case .notFound: return Problem.notFound(request.path).response
        case .badPath: return Problem(status: .badRequest, detail: "The path's percent-encoding is broken.").response
        }
    }

    private static func methodNotAllowed(_ method: String, allowed: [String]) -> HTTPResponse {
        var response = Problem.methodNotAllowed(method, allowed: allowed).response
        response.headers.set("Allow", allowed.joined(separator: ", "))
        return response
    }

    static func isAPIPath(_ path: Substring) -> Bool {
        path.utf8.starts(with: "/api/".utf8) || path == "/api" || path == "/healthz" || path == "/metrics"
    }

    /// How the HTTP core should answer the errors it detects itself (400, 408, 413, 431, 503, ...):
    /// as problem+json (`finish` adds the headers, as to everything else).
    public static func coreErrorResponse(status: HTTPStatus, detail: String) -> HTTPResponse {
        Problem(status: status, detail: userDetail(for: status, technical: detail)).response
    }

    private static func userDetail(for status: HTTPStatus, technical: String) -> String {
        switch status.code {
        case 400: "The request could not be read: \(technical)."
        case 408: "The request did not arrive in time."
        case 411: "Send the body with a Content-Length."
        case 413: "The request body is too large."
        case 431: "The request head is too large."
        case 503: "The dashboard is too busy to take another connection."
        default: technical
        }
    }
}
