import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The dashboard's command line, parsed by hand (CONTRACT section 2).
public struct DashboardOptions: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var publicDirectory: String?
    /// The store file; nil means the default per-user location. `:memory:` keeps nothing.
    public var database: String?
    /// The upstream chat server (`http://` for this project's protocol, `matrix+http://` for a
    /// Matrix homeserver); nil starts the built-in simulator.
    public var upstream: String?
    /// The Matrix user to sign in as (`--matrix-user`); its secret comes from the environment.
    public var matrixUser: String?
    /// Events per room in a Matrix sync; a longer stretch is a gap, filled from the homeserver.
    public var matrixTimelineLimit = 50
    /// Replaces the upstream's starting storage quota; purchases add to it.
    public var quota: Int64?
    /// Sync even when no dashboard tab is visible.
    public var alwaysOn = false
    /// Reads need no access token (`--no-auth`).
    public var noAuth = false
    /// A new access token even when one is kept beside the store (`--new-token`).
    public var newToken = false
    /// The built-in simulator starts without its demo history and sends nothing by itself
    /// (`--no-demo`; always so with `--db :memory:`).
    public var noDemo = false
    public var backoffBaseMilliseconds = 2000
    public var backoffCapMilliseconds = 30000
    /// How long the upstream is asked to hold a poll.
    public var holdSeconds = 25
    public var logLevel = LogLevel.info

    public init() {}

    /// What the command line asked for.
    public enum Command: Sendable, Equatable {
        case run(DashboardOptions)
        case help
        case version
    }

    /// A command line that cannot be obeyed; its message is one line for stderr.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public static let version = "0.1.0"

    public static let help = """
        Usage: dashboard [options]

        A local web dashboard for a long-poll chat sync engine.

        Options:
          --host HOST        address to listen on: 127.0.0.1 (default), ::1 or [::1], localhost,
                             or another address of this machine (not loopback: prints a warning);
                             0.0.0.0 or :: listen on every address
          --port PORT        port to listen on, 0 picks a free one (default 8080)
          --public DIR       folder of the page's static files (default: the Public/ folder
                             of this checkout, found next to the binary or its sources)
          --upstream URL     the chat server to sync with (default: start the built-in
                             simulator on a free loopback port; it prints
                             "simulator listening on http://127.0.0.1:PORT/" first):
                             http://HOST:PORT for this project's chat-server protocol, or
                             matrix+https://HOST[:PORT] for a Matrix homeserver, with
                             --matrix-user; its certificate must be trusted by the system's
                             store (/etc/ssl/certs); matrix+http:// for a homeserver on this
                             machine (to any other address it warns: nothing is encrypted)
          --matrix-user ID   the Matrix account to sync, e.g. @alice:example.org; the password
                             is read from the environment variable LP_MATRIX_PASSWORD, or an
                             access token from LP_MATRIX_TOKEN (never from the command line);
                             the token and device are then kept in the store, so a restart
                             needs neither
          --matrix-timeline-limit N  events per room in one Matrix sync, 1 to 1000 (default
                             50); a longer stretch is fetched from the homeserver as a gap
          --quota BYTES      storage quota to start with, instead of the upstream's figure;
                             purchases add to it
          --always-on        sync even when no dashboard tab is open and visible (default:
                             only while one is, and 30 s after the last one goes)
          --backoff-base-ms N  first retry waits up to N ms (default 2000); doubles each time
          --backoff-cap-ms N   no retry waits longer than N ms (default 30000)
          --hold-seconds N   how long the upstream holds a poll, 1 to 60 (default 25); a poll
                             gives up 10 s after that, and the page calls the connection slow
                             when it has heard nothing for longer
          --db PATH          the local SQLite copy of the chat account (default
                             $XDG_DATA_HOME/lp-dashboard/store.sqlite, else
                             ~/.local/share/lp-dashboard/store.sqlite); :memory: keeps nothing
          --no-auth          read without the access token (anyone who can reach the port can
                             read every stored message); writes still need the page's CSRF token
          --new-token        make a new access token instead of the one kept beside the store
                             (an address printed before stops working)
          --no-demo          the built-in simulator starts with no demo history and sends no
                             messages by itself (so it is with --db :memory:)
          --log-level LEVEL  error, warning, info, debug or trace (default info); logs go to stderr
          --help             show this help and exit
          --version          print the version and exit

        When ready it prints "dashboard listening on http://HOST:PORT/?token=TOKEN" on stdout:
        open that address; the token is what lets a browser or a client read through the API (as
        a cookie, or "Authorization: Bearer TOKEN"). It is kept beside the store (mode 0600), so a
        page left open goes on after a restart; with --db :memory: it is new each launch. With
        --no-auth the line has no token. SIGINT or SIGTERM stops it gracefully.
        """

    static func isNumericAddress(_ host: String) -> Bool {
        var address4 = in_addr(), address6 = in6_addr()
        return inet_pton(AF_INET, host, &address4) == 1 || inet_pton(AF_INET6, host, &address6) == 1
    }

    public static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        var options = DashboardOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
                    throw UsageError(message: "option \(name) needs a value")
                }
                return next
            }
            switch name {
            case "--help", "-h":
                return .help
            case "--version":
                return .version
            case "--host":
                let text = try value()
                guard !text.isEmpty else { throw UsageError(message: "--host needs a non-empty address") }
                // `[::1]` as in a URL, or `::1`; a numeric address or localhost (no name lookups).
                let host = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
                guard host == "localhost" || Self.isNumericAddress(host) else {
                    throw UsageError(message: "--host must be an IP address of this machine or localhost, not \(text.debugDescription)")
                }
                options.host = host
            case "--port":
                let text = try value()
                guard let port = Int(text), (0...65535).contains(port) else {
                    throw UsageError(message: "--port must be a number from 0 to 65535, not \(text.debugDescription)")
                }
                options.port = port
            case "--public":
                options.publicDirectory = try value()
            case "--db":
                let path = try value()
                guard !path.isEmpty else { throw UsageError(message: "--db needs a path or :memory:") }
                options.database = path
            case "--upstream":
                let text = try value()
                guard let url = URL(string: text), ["http", "matrix+http", "matrix+https"].contains(url.scheme), url.host != nil else {
                    throw UsageError(message: "--upstream must be an http://, matrix+http:// or matrix+https:// URL, not \(text.debugDescription)")
                }
                options.upstream = text.hasSuffix("/") ? text : text + "/"
            case "--matrix-user":
                let text = try value()
                guard text.hasPrefix("@"), let colon = text.firstIndex(of: ":"), colon > text.index(after: text.startIndex),
                      text.index(after: colon) < text.endIndex else {
                    throw UsageError(message: "--matrix-user must be a full Matrix user id like @alice:example.org, not \(text.debugDescription)")
                }
                options.matrixUser = text
            case "--matrix-timeline-limit":
                let text = try value()
                guard let limit = Int(text), (1...1000).contains(limit) else {
                    throw UsageError(message: "--matrix-timeline-limit must be a number from 1 to 1000, not \(text.debugDescription)")
                }
                options.matrixTimelineLimit = limit
            case "--quota":
                let text = try value()
                guard let quota = Int64(text), quota >= 0 else {
                    throw UsageError(message: "--quota must be a number of bytes, not \(text.debugDescription)")
                }
                options.quota = quota
            case "--always-on":
                if inlineValue != nil { throw UsageError(message: "--always-on takes no value") }
                options.alwaysOn = true
            case "--no-auth":
                if inlineValue != nil { throw UsageError(message: "--no-auth takes no value") }
                options.noAuth = true
            case "--new-token":
                if inlineValue != nil { throw UsageError(message: "--new-token takes no value") }
                options.newToken = true
            case "--no-demo":
                if inlineValue != nil { throw UsageError(message: "--no-demo takes no value") }
                options.noDemo = true
            case "--backoff-base-ms", "--backoff-cap-ms":
                let text = try value()
                guard let milliseconds = Int(text), (1...3_600_000).contains(milliseconds) else {
                    throw UsageError(message: "\(name) must be a number of milliseconds from 1 to 3600000, not \(text.debugDescription)")
                }
                if name == "--backoff-base-ms" { options.backoffBaseMilliseconds = milliseconds } else { options.backoffCapMilliseconds = milliseconds }
            case "--hold-seconds":
                let text = try value()
                guard let seconds = Int(text), (1...60).contains(seconds) else {
                    throw UsageError(message: "--hold-seconds must be a number of seconds from 1 to 60, not \(text.debugDescription)")
                }
                options.holdSeconds = seconds
            case "--log-level":
                let text = try value()
                guard let level = LogLevel(name: text) else {
                    throw UsageError(message: "--log-level must be error, warning, info, debug or trace, not \(text.debugDescription)")
                }
                options.logLevel = level
            default:
                if argument.hasPrefix("-") {
                    throw UsageError(message: "unknown option \(name)")
                }
                throw UsageError(message: "unexpected argument \(argument.debugDescription)")
            }
        }
        let isMatrix = options.upstream?.hasPrefix("matrix+") ?? false
        if isMatrix && options.matrixUser == nil {
            throw UsageError(message: "--upstream \(options.upstream?.hasPrefix("matrix+https") == true ? "matrix+https" : "matrix+http"):// needs --matrix-user @name:server")
        }
        if !isMatrix && options.matrixUser != nil {
            throw UsageError(message: "--matrix-user is for a Matrix upstream: give --upstream matrix+https://HOST (or matrix+http://)")
        }
        if options.backoffCapMilliseconds < options.backoffBaseMilliseconds {
            throw UsageError(message: "--backoff-cap-ms (\(options.backoffCapMilliseconds)) must not be below --backoff-base-ms (\(options.backoffBaseMilliseconds))")
        }
        return .run(options)
    }
}
