import Foundation

/// Where the store lives: a file, or memory only (`--db :memory:`).
public enum StoreLocation: Sendable, Equatable {
    case file(String)
    case memory

    public static let applicationFolderName = "lp-dashboard"

    /// `--db` values: `:memory:` or a path.
    public init(argument: String) {
        self = argument == ":memory:" ? .memory : .file(argument)
    }

    /// `$XDG_DATA_HOME/lp-dashboard/store.sqlite`, else `~/.local/share/lp-dashboard/store.sqlite`.
    public static func defaultFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> StoreLocation {
        let base: String
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            base = dataHome
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            base = home + "/.local/share"
        }
        return .file(base + "/" + applicationFolderName + "/store.sqlite")
    }

    /// Creates the file's folder (and missing parents) when needed; the folder itself gets mode 0700.
    func prepareFolder() throws {
        guard case .file(let path) = self else { return }
        let folder = (path as NSString).deletingLastPathComponent
        guard !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) else { return }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// Where the built-in simulator keeps its world beside a file store: `store.sqlite` ->
    /// `store.simulator.sqlite`. Nil in memory: then nothing is kept.
    public var simulatorWorldPath: String? {
        guard case .file(let path) = self else { return nil }
        let stem = path.hasSuffix(".sqlite") ? String(path.dropLast(".sqlite".count)) : path
        return stem + ".simulator.sqlite"
    }

    /// Where the dashboard keeps its access token beside a file store: `store.sqlite` ->
    /// `store.token` (mode 0600), so a page left open survives a restart. Nil in memory: then the
    /// token lives for one launch.
    public var accessTokenPath: String? {
        guard case .file(let path) = self else { return nil }
        let stem = path.hasSuffix(".sqlite") ? String(path.dropLast(".sqlite".count)) : path
        return stem + ".token"
    }

    /// Where files fetched for the page (a Matrix account's images and attachments) are kept
    /// beside a file store: `store.sqlite` -> `store.media/`; nil for `:memory:`, which keeps none.
    public var mediaCachePath: String? {
        guard case .file(let path) = self else { return nil }
        let stem = path.hasSuffix(".sqlite") ? String(path.dropLast(".sqlite".count)) : path
        return stem + ".media"
    }

    /// The path, or `:memory:`.
    public var description: String { sqlitePath }

    var sqlitePath: String {
        switch self {
        case .file(let path): path
        case .memory: ":memory:"
        }
    }
}
