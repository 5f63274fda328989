import ChatServerClient
import ChatSimulator
import DashboardApp
import Engine
import Foundation
import HTTPCore
import Logging
import MatrixClient
import Platform
import Store
import Synchronization
import Upstream

// The dashboard executable: parse flags, wire the pieces, run until SIGINT / SIGTERM.
@main
enum DashboardCommand {
    static func main() async throws {
        func fail(_ message: String, code: Int32) -> Never {
            FileHandle.standardError.write(Data("dashboard: \(message)\n".utf8))
            exit(code)
        }

        func say(_ line: String) {
            // Unbuffered: scripts wait for these exact lines.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }

        let options: DashboardOptions
        do {
            switch try DashboardOptions.parse(Array(CommandLine.arguments.dropFirst())) {
            case .help:
                print(DashboardOptions.help)
                exit(0)
            case .version:
                print("dashboard \(DashboardOptions.version)")
                exit(0)
            case .run(let parsed):
                options = parsed
            }
        } catch {
            fail("\(error.message) (see --help)", code: 2)
        }

        LogConfiguration.level = options.logLevel
        TerminationSignals.ignoreBrokenPipes()
        let signals = TerminationSignals.install()
        let log = Logger("dashboard")

        guard let publicPath = PublicDirectory.locate(explicit: options.publicDirectory,
                                                      executablePath: CommandLine.arguments[0]) else {
            if let explicit = options.publicDirectory {
                fail("--public \(explicit.debugDescription) is not a folder with an index.html", code: 2)
            }
            fail("cannot find the Public/ folder; pass --public DIR", code: 1)
        }

        let storeLocation = options.database.map(StoreLocation.init(argument:)) ?? StoreLocation.defaultFile()
        let store: MessageStore
        var reader: StoreReader?
        do {
            // Only the default place gets its folder made; an explicit --db names an existing folder.
            store = try MessageStore(location: storeLocation, createFolder: options.database == nil) { log.info("store: \($0)") }
            if case .file(let path) = storeLocation {
                reader = try StoreReader(path: path)
            }
        } catch {
            fail("cannot open the store at \(storeLocation.description): \(error)", code: 1)
        }

        // Two loop threads: "http" serves the browser (pages, polls), "upstream" carries the sync
        // (the engine's requests, and the built-in simulator standing in for a remote server), so a
        // message on its way in never queues behind thousands of polls being answered or re-armed.
        let loop: EventLoop
        let upstreamLoop: EventLoop
        do {
            loop = try EventLoop(name: "http")
            upstreamLoop = try EventLoop(name: "upstream")
        } catch {
            fail("cannot start the event loop: \(error)", code: 1)
        }

        // The upstream: the one given, or the built-in simulator on a free loopback port.
        var simulator: SimulatorServer?
        let upstreamURL: URL
        if let given = options.upstream {
            upstreamURL = URL(string: given)!
        } else {
            do {
                // With a persistent store the simulator keeps its world beside it, so a restart of the
                // dashboard is not a reset of the chat server.
                // The demo (a short history, a message now and then) unless asked not to or nothing is kept.
                let demo = !options.noDemo && storeLocation != .memory
                let configuration = SimulatorConfiguration(storageQuotaBytes: SimulatorConfiguration.builtInQuotaBytes, demo: demo)
                let started = try await SimulatorServer.start(configuration: configuration, dataPath: storeLocation.simulatorWorldPath,
                                                              loop: upstreamLoop)
                await started.simulator.startDemo()
                simulator = started
                upstreamURL = URL(string: started.url)!
                say("simulator listening on \(started.url)")
            } catch {
                fail("cannot start the built-in simulator: \(error)", code: 1)
            }
        }
        let upstreamHost = upstreamURL.host ?? ""
        let upstreamIsLocal = upstreamHost == "localhost" || upstreamHost.hasPrefix("127.") || upstreamHost == "::1" || upstreamHost == "[::1]"
        // Loopback never goes away; for a remote upstream, watch the machine's interfaces.
        let netlink = upstreamIsLocal ? nil : LinuxNetworkMonitor()
        let network: any NetworkMonitor = netlink.map { NetlinkNetwork(monitor: $0) } ?? AlwaysOnline()

        let engineOptions = EngineOptions(
            alwaysOn: options.alwaysOn,
            backoff: Backoff(base: .milliseconds(options.backoffBaseMilliseconds), cap: .milliseconds(options.backoffCapMilliseconds)),
            holdSeconds: options.holdSeconds,
            quotaOverride: options.quota
        )
        // The access token is kept beside a file store, so a page left open survives a restart.
        var keptToken: String?
        if !options.noAuth, let tokenPath = storeLocation.accessTokenPath {
            do {
                let (token, isNew) = try AccessTokenFile.load(path: tokenPath, renew: options.newToken)
                keptToken = token
                if isNew { log.info("made a new access token, kept in \(tokenPath)") }
            } catch {
                fail("\(error)", code: 1)
            }
        }
        let secrets = LaunchSecrets(accessToken: keptToken)
        let upstream: any UpstreamAPI
        if let matrixUser = options.matrixUser, let homeserver = URL(string: String(upstreamURL.absoluteString.dropFirst("matrix+".count))) {
            // Secrets come from the environment only, and are not left there for child processes.
            let environment = ProcessInfo.processInfo.environment
            let signIn = MatrixUpstream.SignIn(user: matrixUser, password: environment["LP_MATRIX_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 },
                                               accessToken: environment["LP_MATRIX_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
            unsetenv("LP_MATRIX_PASSWORD")
            unsetenv("LP_MATRIX_TOKEN")
            let keeper = StoreMatrixCredentials(store: store, user: matrixUser)
            let kept = await keeper.load()
            if signIn.password == nil && signIn.accessToken == nil && kept?.accessToken == nil {
                log.warning("no LP_MATRIX_PASSWORD or LP_MATRIX_TOKEN and no token kept in the store: the page will ask to sign in")
            }
            upstream = MatrixUpstream(homeserver: homeserver, signIn: signIn, keeper: keeper, loop: upstreamLoop, timelineLimit: options.matrixTimelineLimit)
        } else {
            upstream = ChatServerUpstream(baseURL: upstreamURL, loop: upstreamLoop, holdSeconds: engineOptions.holdSeconds)
        }
        let serverBox = ServerBox()
        let services = await DashboardServices.assemble(
            store: store, reader: reader, epoch: secrets.epoch, loop: loop, simulator: simulator?.simulator,
            httpStatistics: { serverBox.server?.statistics }, olderHistory: upstream as? any OlderHistory
        ) { emit in
            SyncEngine(store: store, upstream: upstream, options: engineOptions, environment: EngineEnvironment(network: network, executor: upstreamLoop), emit: emit)
        }
        let engine = services.engine

        let server: HTTPServer
        do {
            server = try HTTPServer(
                configuration: HTTPServerConfiguration(host: options.host, port: options.port,
                                                       errorResponse: DashboardApp.coreErrorResponse),
                loop: loop
            )
            serverBox.server = server
            let app = DashboardApp(port: server.localAddress.port, staticFiles: try StaticFiles(root: publicPath),
                                   services: services, secrets: secrets, requireAccessToken: !options.noAuth, bound: server.localAddress)
            try await server.start(responder: app)
        } catch {
            fail("cannot listen on \(options.host):\(options.port): \(error)", code: 1)
        }

        if !server.localAddress.isLoopback {
            log.warning("listening on \(server.localAddress), which is not a loopback address: other machines may reach it")
        }
        log.info("serving \(publicPath); store at \(storeLocation.description); upstream \(upstreamURL.absoluteString)")
        await engine.activate()
        // The one place the access token is shown: open this address to get in.
        say("dashboard listening on http://\(HostAllowList.openableAddress(for: server.localAddress))/"
            + (options.noAuth ? "" : "?token=\(secrets.accessToken)"))

        let signal = await signals.received()
        log.info("received signal \(signal), stopping")
        await engine.stop()
        // Parked page polls answer now rather than holding the shutdown for their timeout.
        await services.feed.releaseAll()
        await server.shutdown(gracePeriod: .milliseconds(1200))
        if let simulator {
            await simulator.server.shutdown(gracePeriod: .milliseconds(100))
            await simulator.simulator.close()
        }
        await store.close()
        log.info("stopped")
        exit(0)

        /// Lets `/metrics` read the server's counters although the server is made after the services.
        final class ServerBox: Sendable {
            private let value = Mutex<HTTPServer?>(nil)

            var server: HTTPServer? {
                get { value.withLock { $0 } }
                set { value.withLock { $0 = newValue } }
            }
        }
    }
}

/// The platform's netlink monitor as the engine's `NetworkMonitor`.
struct NetlinkNetwork: NetworkMonitor {
    let monitor: LinuxNetworkMonitor
    var isOnline: Bool { monitor.isOnline }
    func transitions() -> AsyncStream<Bool> { monitor.transitions() }
}

/// The Matrix transport's credentials, kept in the store under the user they belong to: another
/// `--matrix-user` starts from a password again.
struct StoreMatrixCredentials: MatrixCredentialKeeper {
    let store: MessageStore
    let user: String

    func load() async -> MatrixCredentials? {
        guard (try? await store.credential("matrix.user")) == user else { return nil }
        let token = try? await store.credential("matrix.access_token")
        let device = try? await store.credential("matrix.device_id")
        return token == nil && device == nil ? nil : MatrixCredentials(accessToken: token, deviceID: device)
    }

    func save(_ credentials: MatrixCredentials) async {
        try? await store.setCredential("matrix.user", user)
        try? await store.setCredential("matrix.access_token", credentials.accessToken)
        try? await store.setCredential("matrix.device_id", credentials.deviceID)
    }
}
