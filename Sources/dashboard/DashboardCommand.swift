import ChatServerClient
import ChatSimulator
import DashboardApp
import Engine
import Foundation
import HTTPCore
import Lifecycle
import Logging
import MatrixClient
import Platform
import Store
import Upstream

// The dashboard executable: parse flags, build the pieces, run them until SIGINT / SIGTERM.
@main
enum DashboardCommand {
    static func main() async throws {
        let options = parseOrExit()
        LogConfiguration.level = options.logLevel
        TerminationSignals.ignoreBrokenPipes()
        let signals = TerminationSignals.install(environment: ProcessInfo.processInfo.environment)

        let running = await Launch.build(options)
        let services = ServiceGroup(running.services)
        let ending = await services.wait { "signal \(await signals.received())" }
        let log = Logger("dashboard")
        switch ending {
        case .asked(let why): log.info("received \(why), stopping")
        case .serviceEnded(let name, let error): log.error("\(name) ended by itself\(error.map { ": \($0)" } ?? ""), stopping")
        }
        let late = await services.stop(within: .seconds(2))
        if !late.isEmpty { log.warning("not stopped within 2 s: \(late.joined(separator: ", "))") }
        log.info("stopped")
        if case .serviceEnded = ending { exit(1) }
        exit(0)
    }

    /// The options, or the help, the version, or a bad flag said on stderr (exit 2).
    private static func parseOrExit() -> DashboardOptions {
        do {
            switch try DashboardOptions.parse(Array(CommandLine.arguments.dropFirst())) {
            case .help:
                print(DashboardOptions.help)
                exit(0)
            case .version:
                print("dashboard \(DashboardOptions.version)")
                exit(0)
            case .run(let parsed):
                return parsed
            }
        } catch {
            fail("\(error.message) (see --help)", code: 2)
        }
    }
}

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("dashboard: \(message)\n".utf8))
    exit(code)
}

/// Says one of the lines scripts wait for on stdout, unbuffered.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Everything the process runs, built and listening; a failure to build is said and exits.
struct Launch {
    /// In the order they depend on each other: the group stops them from the last to the first
    /// (the HTTP server first, the store last).
    var services: [any Service]

    static func build(_ options: DashboardOptions) async -> Launch {
        let log = Logger("dashboard")
        guard let publicPath = PublicDirectory.locate(explicit: options.publicDirectory, executablePath: CommandLine.arguments[0]) else {
            if let explicit = options.publicDirectory {
                fail("--public \(explicit.debugDescription) is not a folder with an index.html", code: 2)
            }
            fail("cannot find the Public/ folder; pass --public DIR", code: 1)
        }
        // Loop threads, one per kind of traffic, so none queues behind another: "http" serves the
        // browser (pages, polls; a message on its way in never waits for thousands of polls being
        // answered), "upstream" carries the sync, "send" what the person writes (a message on its
        // way out never waits while a sync batch is read), and "simulator" is the built-in
        // upstream, apart from the client as a remote server would be.
        let loop: EventLoop, upstreamLoop: EventLoop, sendLoop: EventLoop, simulatorLoop: EventLoop?
        do {
            loop = try EventLoop(name: "http")
            upstreamLoop = try EventLoop(name: "upstream")
            sendLoop = try EventLoop(name: "send")
            simulatorLoop = options.upstream == nil ? try EventLoop(name: "simulator") : nil
        } catch {
            fail("cannot start the event loop: \(error)", code: 1)
        }

        // Bound before anything else starts (the store, the simulator), so a port in use or an
        // address not of this machine is said before anything is made or printed: a script waiting
        // for the ready lines never sees half of them.
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: HTTPServerConfiguration(host: options.host, port: options.port, errorResponse: DashboardApp.coreErrorResponse),
                                    loop: loop)
        } catch let error as SystemError where error.errno == EADDRNOTAVAIL {
            fail("--host \(options.host) is not an address of this machine (see --help)", code: 2)
        } catch {
            fail("cannot listen on \(options.host):\(options.port): \(error)", code: 1)
        }
        let storeLocation = options.database.map(StoreLocation.init(argument:)) ?? StoreLocation.defaultFile()
        let (store, reader) = openStore(storeLocation, makeFolder: options.database == nil, log: log)
        let simulator = if let simulatorLoop { await startSimulator(options, storeLocation: storeLocation, loop: simulatorLoop) } else { nil as SimulatorServer? }
        let upstreamURL = URL(string: options.upstream ?? simulator!.url)!
        let engineOptions = EngineOptions(
            alwaysOn: options.alwaysOn,
            backoff: Backoff(base: .milliseconds(options.backoffBaseMilliseconds), cap: .milliseconds(options.backoffCapMilliseconds)),
            holdSeconds: options.holdSeconds,
            quotaOverride: options.quota
        )
        let secrets = LaunchSecrets(accessToken: accessToken(options, storeLocation: storeLocation, log: log))
        let upstream = await upstreamAPI(options, url: upstreamURL, store: store, loop: upstreamLoop, sendLoop: sendLoop,
                                         holdSeconds: engineOptions.holdSeconds, log: log)
        let network = networkMonitor(for: upstreamURL)

        let dashboard = await DashboardServices.assemble(
            store: store, reader: reader, epoch: secrets.epoch, loop: loop, upstream: UpstreamAccess(upstream), simulator: simulator?.simulator,
            httpStatistics: { server.statistics }, olderHistory: upstream as? any OlderHistory,
            sending: upstream as? any MessageSending, sendLoop: sendLoop
        ) { emit in
            SyncEngine(store: store, upstream: upstream, options: engineOptions, environment: EngineEnvironment(network: network, executor: upstreamLoop), emit: emit)
        }
        do {
            let app = DashboardApp(port: server.localAddress.port, staticFiles: try StaticFiles(root: publicPath),
                                   services: dashboard, secrets: secrets, requireAccessToken: !options.noAuth, bound: server.localAddress)
            try await server.start(responder: app)
        } catch {
            fail("cannot serve the page: \(error)", code: 1)
        }
        if !server.localAddress.isLoopback {
            log.warning("listening on \(server.localAddress), which is not a loopback address: other machines may reach it")
        }
        log.info("serving \(publicPath); store at \(storeLocation.description); upstream \(upstreamURL.absoluteString)")
        let engine = dashboard.engine, feed = dashboard.feed
        await engine.activate()
        if let simulator { say("simulator listening on \(simulator.url)") }
        // The one place the access token is shown: open this address to get in.
        say("dashboard listening on http://\(HostAllowList.openableAddress(for: server.localAddress))/"
            + (options.noAuth ? "" : "?token=\(secrets.accessToken)"))

        var services: [any Service] = [NamedService("store") {
            await untilCancelled()
            await store.close()
        }]
        if let simulator {
            services.append(NamedService("simulator") {
                await untilCancelled()
                await simulator.server.shutdown(gracePeriod: .milliseconds(100))
                await simulator.simulator.close()
            })
        }
        services += dashboard.background
        services.append(NamedService("engine") {
            await untilCancelled()
            await engine.stop()
        })
        services.append(NamedService("http server") {
            await untilCancelled()
            // Parked page polls answer now rather than holding the shutdown for their timeout.
            await feed.releaseAll()
            await server.shutdown(gracePeriod: .milliseconds(1200))
        })
        return Launch(services: services)
    }

    private static func openStore(_ location: StoreLocation, makeFolder: Bool, log: Logger) -> (MessageStore, StoreReader?) {
        do {
            // Only the default place gets its folder made; an explicit --db names an existing folder.
            let store = try MessageStore(location: location, createFolder: makeFolder) { log.info("store: \($0)") }
            guard case .file(let path) = location else { return (store, nil) }
            return (store, try StoreReader(path: path))
        } catch {
            fail("cannot open the store at \(location.description): \(error)", code: 1)
        }
    }

    /// The built-in simulator on a free loopback port. With a persistent store it keeps its world
    /// beside it, so a restart of the dashboard is not a reset of the chat server; it plays the
    /// demo (a short history, a message now and then) unless asked not to or nothing is kept.
    private static func startSimulator(_ options: DashboardOptions, storeLocation: StoreLocation, loop: EventLoop) async -> SimulatorServer {
        do {
            let demo = !options.noDemo && storeLocation != .memory
            let configuration = SimulatorConfiguration(storageQuotaBytes: SimulatorConfiguration.builtInQuotaBytes, demo: demo)
            let started = try await SimulatorServer.start(configuration: configuration, dataPath: storeLocation.simulatorWorldPath, loop: loop)
            await started.simulator.startDemo()
            return started
        } catch {
            fail("cannot start the built-in simulator: \(error)", code: 1)
        }
    }

    /// The access token, kept beside a file store so a page left open survives a restart; nil
    /// makes one for this launch (`:memory:`) or when access is not checked.
    private static func accessToken(_ options: DashboardOptions, storeLocation: StoreLocation, log: Logger) -> String? {
        guard !options.noAuth, let tokenPath = storeLocation.accessTokenPath else { return nil }
        do {
            let (token, isNew) = try AccessTokenFile.load(path: tokenPath, renew: options.newToken)
            if isNew { log.info("made a new access token, kept in \(tokenPath)") }
            return token
        } catch {
            fail("\(error)", code: 1)
        }
    }

    /// The transport: a Matrix homeserver for `--matrix-user`, else this project's protocol.
    private static func upstreamAPI(_ options: DashboardOptions, url: URL, store: MessageStore, loop: EventLoop, sendLoop: EventLoop,
                                    holdSeconds: Int, log: Logger) async -> any UpstreamAPI {
        guard let matrixUser = options.matrixUser, let homeserver = URL(string: String(url.absoluteString.dropFirst("matrix+".count))) else {
            return ChatServerUpstream(baseURL: url, loop: loop, sendLoop: sendLoop, holdSeconds: holdSeconds)
        }
        // Secrets come from the environment only, and are not left there for child processes.
        let environment = ProcessInfo.processInfo.environment
        let signIn = MatrixUpstream.SignIn(user: matrixUser, password: environment["LP_MATRIX_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 },
                                           accessToken: environment["LP_MATRIX_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        unsetenv("LP_MATRIX_PASSWORD")
        unsetenv("LP_MATRIX_TOKEN")
        if url.scheme == "matrix+http" && !isLoopback(host: homeserver.host ?? "") {
            log.warning("matrix+http:// sends the password, the token and every message unencrypted to \(homeserver.host ?? ""), "
                + "which is not this machine; use matrix+https:// unless the network between is yours")
        }
        let keeper = StoreMatrixCredentials(store: store, user: matrixUser)
        if signIn.password == nil && signIn.accessToken == nil, await keeper.load()?.accessToken == nil {
            log.warning("no LP_MATRIX_PASSWORD or LP_MATRIX_TOKEN and no token kept in the store: the page will ask to sign in")
        }
        return MatrixUpstream(homeserver: homeserver, signIn: signIn, keeper: keeper, loop: loop, sendLoop: sendLoop, timelineLimit: options.matrixTimelineLimit)
    }

    /// Loopback never goes away; for a remote upstream, the machine's interfaces are watched.
    private static func networkMonitor(for upstream: URL) -> any NetworkMonitor {
        (isLoopback(host: upstream.host ?? "") ? nil : LinuxNetworkMonitor()).map { NetlinkNetwork(monitor: $0) } ?? AlwaysOnline()
    }

    /// A host name that can only mean this machine.
    private static func isLoopback(host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
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
