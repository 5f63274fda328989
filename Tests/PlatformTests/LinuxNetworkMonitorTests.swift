import Testing
import Platform

@Suite("Linux network monitor")
struct LinuxNetworkMonitorTests {
    /// A smoke test: the socket opens. Transitions are not provoked here (that needs changing the
    /// machine's links); the engine's reaction to them is tested with a scripted monitor.
    @Test func theNetlinkSocketOpens() {
        #expect(LinuxNetworkMonitor() != nil, "a NETLINK_ROUTE socket opens on Linux")
    }
}
