import ChatSimulator
import Foundation
import HTTPCore
import Platform
import Logging

// chat-server: the built-in chat simulator on its own port.
@main
enum ChatServerCommand {
    static func main() async throws {
        let help = """
            Usage: chat-server [options]

            The chat simulator on its own port: a chat server implementing the upstream protocol (/v1/*)
            with a control API (/sim/*) to publish messages, inject faults, attach or detach the linked
            account, set the quota and expire tokens. `dashboard --upstream http://HOST:PORT/` syncs with it.

            Options:
              --host HOST      address to listen on (default 127.0.0.1)
              --port PORT      port to listen on, 0 picks a free one (default 8081)
              --seed N         seed of the generator that draws faults, chats and senders (default 1)
              --no-linked      start without a linked account (POST /sim/linked attaches one)
              --quota BYTES    the storage quota sessions announce (default 50000000)
              --data FILE      keep the world (users, messages and their ids, quota, purchases) in this
                               SQLite file, so a restart goes on where it stopped; without it everything
                               is forgotten when it stops, like a server reset
              --help           show this help and exit
              --version        print the version and exit

            When ready it prints "simulator listening on http://HOST:PORT/" on stdout.
            SIGINT or SIGTERM stops it.
            """

        var host = "127.0.0.1", port = 8081
        var dataPath: String?
        var configuration = SimulatorConfiguration()
        var arguments = Array(CommandLine.arguments.dropFirst())[...]
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("chat-server: \(message) (see --help)\n".utf8))
            exit(2)
        }
        while let argument = arguments.popFirst() {
            func value() -> String {
                guard let next = arguments.popFirst() else { fail("option \(argument) needs a value") }
                return next
            }
            switch argument {
            case "--help", "-h": print(help); exit(0)
            case "--version": print("chat-server 0.1.0"); exit(0)
            case "--host": host = value()
            case "--port":
                guard let parsed = Int(value()), (0...65535).contains(parsed) else { fail("--port must be 0...65535") }
                port = parsed
            case "--seed":
                guard let seed = UInt64(value()) else { fail("--seed must be a non-negative integer") }
                configuration.seed = seed
            case "--quota":
                guard let quota = Int64(value()), quota >= 0 else { fail("--quota must be a number of bytes") }
                configuration.storageQuotaBytes = quota
            case "--no-linked": configuration.linkedAtStart = false
            case "--data":
                let path = value()
                guard !path.isEmpty else { fail("--data needs a file path") }
                dataPath = path
            default: fail("unknown option \(argument)")
            }
        }

        TerminationSignals.ignoreBrokenPipes()
        let signals = TerminationSignals.install(environment: ProcessInfo.processInfo.environment)
        let running: SimulatorServer
        do {
            running = try await SimulatorServer.start(host: host, port: port, configuration: configuration, dataPath: dataPath,
                                                      loop: try EventLoop(name: "simulator"))
        } catch {
            FileHandle.standardError.write(Data("chat-server: cannot start on \(host):\(port)\(dataPath.map { " with --data \($0)" } ?? ""): \(error)\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("simulator listening on \(running.url)\n".utf8))
        _ = await signals.received()
        await running.server.shutdown(gracePeriod: .milliseconds(500))
        await running.simulator.close()
        exit(0)
    }
}
