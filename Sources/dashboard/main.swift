import DashboardApp
import Foundation
import HTTPCore
import Lifecycle
import Logging
import Store

// The dashboard executable: parse flags, wire the pieces, run until SIGINT / SIGTERM.

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("dashboard: \(message)\n".utf8))
    exit(code)
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
    store = try MessageStore(location: storeLocation)
    if case .file(let path) = storeLocation {
        reader = try StoreReader(path: path)
    }
} catch {
    fail("cannot open the store at \(storeLocation.description): \(error)", code: 1)
}

let server: HTTPServer
let app: DashboardApp
do {
    let loop = try EventLoop(name: "http")
    server = try HTTPServer(
        configuration: HTTPServerConfiguration(host: options.host, port: options.port,
                                               errorResponse: DashboardApp.coreErrorResponse),
        loop: loop
    )
    app = DashboardApp(port: server.localAddress.port, staticFiles: try StaticFiles(root: publicPath),
                       store: store, reader: reader)
    try await server.start(responder: app)
} catch {
    fail("cannot listen on \(options.host):\(options.port): \(error)", code: 1)
}

if !server.localAddress.isLoopback {
    log.warning("listening on \(server.localAddress), which is not a loopback address: other machines may reach it")
}
log.info("serving \(publicPath); store at \(storeLocation.description)")
// Written unbuffered: scripts wait for this exact line.
FileHandle.standardOutput.write(Data("dashboard listening on http://\(server.localAddress)/\n".utf8))

let signal = await signals.received()
log.info("received signal \(signal), stopping")
await server.shutdown(gracePeriod: .milliseconds(1200))
await store.close()
log.info("stopped")
exit(0)
