import Foundation

/// Finds the `Public/` folder whatever the current directory is.
public enum PublicDirectory {
    /// This file's path when it was compiled: a default argument would take the caller's instead.
    private static let ownSourceFile = #filePath

    /// In order: the `--public` option; a `Public/` with an `index.html` in the executable's folder
    /// or any folder above it (a checkout's `.build/<config>/dashboard` finds the checkout's
    /// `Public/`); the `Public/` of the checkout this binary was compiled from.
    public static func locate(explicit: String?, executablePath: String, sourceFile: String? = nil) -> String? {
        let fileManager = FileManager.default
        func isPublic(_ path: String) -> Bool {
            fileManager.fileExists(atPath: path + "/index.html")
        }
        if let explicit {
            return isPublic(explicit) ? explicit : nil
        }
        var folder = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("Public").path
            if isPublic(candidate) { return candidate }
            folder.deleteLastPathComponent()
        }
        // Sources/DashboardApp/Configuration/PublicDirectory.swift -> the package root.
        let packageRoot = URL(fileURLWithPath: sourceFile ?? ownSourceFile)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidate = packageRoot.appendingPathComponent("Public").path
        return isPublic(candidate) ? candidate : nil
    }
}
