import ChatServerClient
import ChatSimulator
import Engine
import Foundation
import Lifecycle
import HTTPCore
import Store
@testable import DashboardApp

/// The dashboard's HTTP face on a real server, on a free loopback port, for tests over real
/// sockets. Its engine is never activated (its upstream, port 9, would refuse anyway).
struct LoopbackDashboard {
    let fixture: PublicFixture
    let loop: EventLoop
    let secrets: LaunchSecrets
    let services: DashboardServices
    /// The services' background (the hub carrying the engine's events), running while this is kept.
    let background: ServiceGroup
    let server: HTTPServer

    var port: Int { server.localAddress.port }
    /// The `Authorization` header line a client with the access token sends.
    var authorization: String { "Authorization: Bearer \(secrets.accessToken)\r\n" }

    static func start(store: MessageStore, reader: StoreReader? = nil, simulator: ChatSimulator? = nil, loopName: String,
                      fixture: PublicFixture? = nil) async throws -> LoopbackDashboard {
        let fixture = try fixture ?? PublicFixture()
        let loop = try EventLoop(name: loopName)
        let secrets = LaunchSecrets()
        let upstream = ChatServerUpstream(baseURL: URL(string: "http://127.0.0.1:9/")!, loop: loop)
        let services = await DashboardServices.assemble(store: store, reader: reader, epoch: secrets.epoch, loop: loop, upstream: UpstreamAccess(upstream),
                                                        simulator: simulator) { emit in
            SyncEngine(store: store, upstream: upstream, emit: emit)
        }
        let server = try HTTPServer(configuration: HTTPServerConfiguration(port: 0, errorResponse: DashboardApp.coreErrorResponse), loop: loop)
        try await server.start(responder: DashboardApp(port: server.localAddress.port, staticFiles: try StaticFiles(root: fixture.publicPath),
                                                       services: services, secrets: secrets))
        return LoopbackDashboard(fixture: fixture, loop: loop, secrets: secrets, services: services, background: ServiceGroup(services.background),
                                 server: server)
    }
}
