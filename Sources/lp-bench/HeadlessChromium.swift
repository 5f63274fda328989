import Foundation

/// Real headless Chromium, driven through the DevTools protocol over `--remote-debugging-pipe`
/// (file descriptors 3 and 4, messages separated by NUL): no WebSocket, no driver, no Python.
/// What a page does is timed inside the page (`performance.now()`, event time stamps); this
/// class only loads pages, clicks and reads the results.
final class HeadlessChromium {
    /// A DevTools answer that carried an error, or a script that threw.
    struct ProtocolError: Error, CustomStringConvertible {
        let description: String
    }

    private let pid: pid_t
    private let commands: Int32
    private let events: Int32
    private let profile: String
    private var pending: [UInt8] = []
    private var nextId = 0
    private var session: String?

    /// Starts Chromium with an empty profile and one blank tab attached.
    init(width: Int = 1280, height: Int = 900) throws {
        guard let executable = findExecutable("chromium", "chromium-browser", "google-chrome") else {
            throw BenchError("this benchmark needs Chromium (Debian: apt-get install chromium)")
        }
        profile = NSTemporaryDirectory() + "lp-bench-chromium-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        var arguments = ["--headless=new", "--disable-gpu", "--remote-debugging-pipe", "--user-data-dir=\(profile)", "--no-first-run",
                         "--no-default-browser-check", "--disable-background-networking", "--disable-extensions",
                         "--window-size=\(width),\(height)", "about:blank"]
        if geteuid() == 0 { arguments.insert("--no-sandbox", at: 0) }  // Chromium refuses to run its sandbox as root

        // Chromium reads commands on fd 3 and writes answers on fd 4. Our ends are close-on-exec and
        // above 9, so that the dup2 below never meets them and the child holds only its own ends.
        let toChromium = try Self.pipeAboveNine(), fromChromium = try Self.pipeAboveNine()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChromium.read, 3)
        posix_spawn_file_actions_adddup2(&actions, fromChromium.write, 4)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, nil, argv, environ)
        close(toChromium.read)
        close(fromChromium.write)
        guard spawned == 0 else {
            close(toChromium.write)
            close(fromChromium.read)
            throw BenchError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        pid = child
        commands = toChromium.write
        events = fromChromium.read

        let target = try call("Target.createTarget", ["url": "about:blank"])
        guard let targetId = target["targetId"] as? String else { throw ProtocolError(description: "no target id from Chromium") }
        let attached = try call("Target.attachToTarget", ["targetId": targetId, "flatten": true])
        session = attached["sessionId"] as? String
        guard session != nil else { throw ProtocolError(description: "no session from Chromium") }
    }

    deinit {
        _ = try? call("Browser.close", [:], inSession: false)
        close(commands)
        close(events)
        // Chromium takes a moment to close, and its helpers write into the profile until it has:
        // killed at once, it left half of the profile folder behind in the temporary folder.
        var status: Int32 = 0
        var exited = waitpid(pid, &status, WNOHANG) != 0
        var waited = 0
        while !exited && waited < 300 {
            usleep(10_000)
            waited += 1
            exited = waitpid(pid, &status, WNOHANG) != 0
        }
        if !exited {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// Opens `url` in the tab and waits until its document has loaded.
    func navigate(to url: String) throws {
        _ = try call("Page.navigate", ["url": url])
        // The answer comes when the navigation starts; until the new document is there, a script
        // may still run in the old one (or fail as its context goes), so ask until the new one says so.
        try waitUntil("location.href !== 'about:blank' && document.readyState === 'complete'", what: "\(url) loaded")
    }

    /// Starts opening `url` in the tab and returns at once (the answer comes when the navigation starts).
    func startNavigation(to url: String) throws {
        _ = try call("Page.navigate", ["url": url])
    }

    /// Runs `source` in every document the tab opens from now on, before the page's own scripts.
    func addScriptOnNewDocument(_ source: String) throws {
        _ = try call("Page.enable", [:])
        _ = try call("Page.addScriptToEvaluateOnNewDocument", ["source": source])
    }

    /// Every request from now on goes to the server: nothing comes from the browser's cache.
    func disableCache() throws {
        _ = try call("Network.enable", [:])
        _ = try call("Network.setCacheDisabled", ["cacheDisabled": true])
    }

    /// Asks `condition` (a script giving a boolean) every `interval` seconds until it holds, for
    /// `seconds` at most.
    func waitUntil(_ condition: String, what: String, seconds: Double = 15, interval: Double = 0.01) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? evaluate(condition)) as? Bool == true { return }
            usleep(useconds_t(interval * 1_000_000))
        }
        throw BenchError("timed out waiting for \(what)")
    }

    /// Runs `expression` in the page, awaits it when it is a promise, and returns its value as JSON
    /// gives it (numbers as `Double`, arrays, dictionaries).
    @discardableResult
    func evaluate(_ expression: String) throws -> Any? {
        let answer = try call("Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true])
        if let exception = answer["exceptionDetails"] as? [String: Any] {
            let detail = (exception["exception"] as? [String: Any])?["description"] as? String ?? exception["text"] as? String ?? "an exception"
            throw ProtocolError(description: "the page threw: \(detail)")
        }
        return (answer["result"] as? [String: Any])?["value"]
    }

    /// A left click at a point of the page, as the mouse does it (pressed, then released): the page
    /// sees trusted pointer, mouse and click events.
    func click(x: Double, y: Double) throws {
        for type in ["mousePressed", "mouseReleased"] {
            _ = try call("Input.dispatchMouseEvent", ["type": type, "x": x, "y": y, "button": "left", "clickCount": 1])
        }
    }

    /// Types `text` into the focused element as a keyboard's text input does: the page sees a
    /// trusted `input` event.
    func insertText(_ text: String) throws {
        _ = try call("Input.insertText", ["text": text])
    }

    /// Sends one DevTools command and waits for its answer; events in between are dropped.
    private func call(_ method: String, _ parameters: [String: Any], inSession: Bool = true) throws -> [String: Any] {
        nextId += 1
        var message: [String: Any] = ["id": nextId, "method": method, "params": parameters]
        if inSession, let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard count > 0 else { throw ProtocolError(description: "Chromium stopped reading (\(method))") }
            written += count
        }
        while true {
            let answer = try readMessage()
            guard answer["id"] as? Int == nextId else { continue }
            if let error = answer["error"] as? [String: Any] {
                throw ProtocolError(description: "\(method): \(error["message"] as? String ?? "failed")")
            }
            return answer["result"] as? [String: Any] ?? [:]
        }
    }

    private func readMessage() throws -> [String: Any] {
        while true {
            if let end = pending.firstIndex(of: 0) {
                let message = Data(pending[..<end])
                pending.removeFirst(end + 1)
                return try JSONSerialization.jsonObject(with: message) as? [String: Any] ?? [:]
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(events, $0.baseAddress, $0.count) }
            guard count > 0 else { throw ProtocolError(description: "Chromium exited") }
            pending.append(contentsOf: chunk[0..<count])
        }
    }

    private static func pipeAboveNine() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        let moved = ends.map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        ends.forEach { close($0) }
        guard moved.allSatisfy({ $0 >= 10 }) else { throw BenchError("fcntl: \(String(cString: strerror(errno)))") }
        return (moved[0], moved[1])
    }
}
