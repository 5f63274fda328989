import HTTPCore

/// The simulator listening on a port: what `chat-server` runs and what `dashboard` starts in-process.
public struct SimulatorServer: Sendable {
    public let simulator: ChatSimulator
    public let server: HTTPServer

    /// - Parameter dataPath: a SQLite file that keeps the simulator's world across restarts; nil
    ///   keeps it in memory only.
    public static func start(host: String = "127.0.0.1", port: Int = 0, configuration: SimulatorConfiguration = SimulatorConfiguration(),
                             dataPath: String? = nil, loop: EventLoop) async throws -> SimulatorServer {
        let simulator = try dataPath.map { try ChatSimulator(configuration: configuration, dataPath: $0) } ?? ChatSimulator(configuration: configuration)
        // Held polls last up to 60 s; the idle timeout must not cut a connection between polls.
        let server = try HTTPServer(configuration: HTTPServerConfiguration(host: host, port: port, wireFaults: simulator.wireFaults), loop: loop)
        try await server.start(responder: SimulatorResponder(simulator: simulator))
        return SimulatorServer(simulator: simulator, server: server)
    }

    public var url: String { "http://\(server.localAddress)/" }
}
