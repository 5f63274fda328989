import Foundation

/// Resident memory and CPU time of a process, from /proc.
struct ProcessStats {
    var residentKiB: Int
    /// User plus system CPU time in clock ticks.
    var cpuTicks: Int

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func read(pid: Int32) throws -> ProcessStats {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let rssLine = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        let rss = Int(rssLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name, which is in parentheses and may contain spaces.
        let afterName = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        let user = Int(afterName[11]) ?? 0, system = Int(afterName[12]) ?? 0
        return ProcessStats(residentKiB: rss, cpuTicks: user + system)
    }
}
