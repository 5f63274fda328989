import Testing
@testable import Engine

@Suite("Network monitor")
struct NetworkMonitorTests {
    @Test func theNetlinkMonitorStartsAndAgreesWithTheInterfaceList() throws {
        let monitor = try #require(LinuxNetworkMonitor(), "a NETLINK_ROUTE socket opens on Linux")
        #expect(monitor.isOnline == LinuxNetworkMonitor.hasUsableInterface())
    }

    @Test func loopbackUpstreamsAreAlwaysOnline() {
        #expect(AlwaysOnline().isOnline)
    }
}
