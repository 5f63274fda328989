import DashboardApp
import Foundation
import HTTPCore

/// `lp-bench feed-server`: the dashboard's event feed and poll entrance with nothing behind them
/// (`DashboardApp.FeedBenchmarkResponder`), on the dashboard's HTTP server.
enum FeedOnlyServer {
    static func run(port: Int) async throws -> Never {
        let loop = try EventLoop(name: "feed-server")
        let server = try HTTPServer(configuration: HTTPServerConfiguration(port: port, maxConnections: 16_000), loop: loop)
        try await server.start(responder: FeedBenchmarkResponder(loop: loop))
        FileHandle.standardOutput.write(Data("feed-server listening on http://127.0.0.1:\(server.localAddress.port)/\n".utf8))
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}
