import Foundation
import HTTPCore
import Store
import Testing
import TestSupport
@testable import DashboardApp
import Upstream

/// `GET /api/export` over a real socket from a real file store: every message once, oldest first,
/// each line a JSON object that reads back to what was stored.
@Suite("Export over loopback")
struct ExportOverLoopbackTests {
    @Test func anAccountAndOneChatExportAsJSONLinesThatReadBackToTheStoredMessages() async throws {
        let fixture = try PublicFixture()
        let path = fixture.root.path + "/store.sqlite"
        let store = try MessageStore(location: .file(path))
        let texts = ["plain", "a \"quoted\" \\ backslash", "two\nlines\ttab \u{01}", "é 👋 </script>", String(repeating: "long ", count: 3000)]
        var all: [UpstreamMessage] = []
        for id in Int64(1)...5_001 {  // three slices of the store, the last one short
            all.append(UpstreamMessage(id: id, chatId: id % 4, sender: "sender \(id % 7)", text: texts[Int(id) % texts.count] + " \(id)",
                                       sentAt: "2026-11-29T12:00:00.000Z", chatName: id % 4 == 1 ? "Work" : nil))
        }
        for start in stride(from: 0, to: all.count, by: 1000) {
            let batch = Array(all[start..<min(start + 1000, all.count)])
            _ = try await store.apply(batch, to: .primary, receivedAt: "2026-11-29T12:00:01.000Z", cursor: String(batch.last!.id))
        }
        let dashboard = try await LoopbackDashboard.start(store: store, reader: try StoreReader(path: path), loopName: "export-test",
                                                          fixture: fixture)
        let (port, auth) = (dashboard.port, dashboard.authorization)
        let (whole, work) = try await RawClient.run {
            let client = try RawClient(port: port)
            try client.send(rawGet("/api/export?account=primary", host: "127.0.0.1:\(port)", extraHeaders: auth)
                            + rawGet("/api/export?account=primary&chat=1", host: "127.0.0.1:\(port)", extraHeaders: auth))
            return (try client.readResponse(), try client.readResponse())
        }
        #expect(whole.status == 200 && whole.header("Transfer-Encoding") == "chunked")
        #expect(whole.header("Content-Disposition")?.contains("messages-primary-") == true)
        let lines = whole.text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "every line ends with a newline")
        let objects = try lines.dropLast().map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.count == all.count)
        #expect(objects.map { $0["id"] as? Int } == all.map { Int($0.id) }, "every message once, oldest first")
        for (object, message) in zip(objects, all) where object["text"] as? String != message.text || object["sender"] as? String != message.sender
            || object["chatId"] as? Int != Int(message.chatId) || object["chatName"] as? String != message.chatName
            || object["account"] as? String != "primary" || object["sentAt"] as? String != message.sentAt
            || object["receivedAt"] as? String != "2026-11-29T12:00:01.000Z" {
            Issue.record("message \(message.id) does not read back: \(object)")
            break
        }
        let workIDs = work.text.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? Int }
        #expect(workIDs == all.filter { $0.chatId == 1 }.map { Int($0.id) })
        #expect(work.header("Content-Disposition")?.contains("messages-primary-work-") == true)
        await dashboard.server.shutdown(gracePeriod: .milliseconds(100))
        await dashboard.loop.shutdown()
    }
}
