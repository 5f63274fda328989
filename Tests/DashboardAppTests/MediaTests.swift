import Foundation
import HTTPCore
import Testing
@testable import DashboardApp

/// The media route's rules as values, and its cache in a real folder.
@Suite("Media route and cache")
struct MediaTests {
    @Test func onlyRasterImagesAreServedAsWhatTheyAreAndEverythingElseIsADownload() {
        #expect(MediaRoutes.servedType("image/png") == "image/png")
        #expect(MediaRoutes.servedType("IMAGE/JPEG; charset=binary") == "image/jpeg")
        for risky in ["image/svg+xml", "text/html", "application/javascript", "text/plain", "application/pdf", "", nil] as [String?] {
            #expect(MediaRoutes.servedType(risky) == "application/octet-stream", "\(risky ?? "nil")")
        }
        let download = MediaRoutes.answer(contentType: "application/octet-stream", body: [1, 2])
        #expect(download.headers["Content-Disposition"] == "attachment")
        #expect(download.headers["X-Content-Type-Options"] == "nosniff")
        #expect(MediaRoutes.answer(contentType: "image/png", body: []).headers["Content-Disposition"] == nil)
    }

    @Test func aStoredReferenceBecomesTheDashboardsOwnAddressAndABadOneNone() {
        #expect(MessagePageBody.mediaURL("matrix.org/AbC") == "/api/media/matrix.org/AbC")
        #expect(MessagePageBody.mediaURL("[::1]:8448/AbC") == "/api/media/%5B%3A%3A1%5D%3A8448/AbC")
        #expect(MessagePageBody.mediaURL("matrix.org/../x") == nil)
        #expect(MessagePageBody.mediaURL(nil) == nil)
    }

    @Test func theCacheKeepsWhatFitsDropsTheLeastRecentlyUsedAndSurvivesARestart() async throws {
        let folder = NSTemporaryDirectory() + "media-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = MediaCache(folder: folder, capacity: 3_000)
        let kilobyte = [UInt8](repeating: 7, count: 1_000)
        await cache.put("a", contentType: "image/png", body: kilobyte)
        await cache.put("b", contentType: "image/png", body: kilobyte)
        #expect(await cache.get("a")?.body == kilobyte, "a is used again, so b is the oldest now")
        await cache.put("c", contentType: "image/png", body: kilobyte)
        #expect(await cache.get("b") == nil, "over capacity: the least recently used went")
        #expect(await cache.get("a")?.contentType == "image/png")
        #expect(await cache.storedBytes <= 3_000)
        await cache.put("huge", contentType: "image/png", body: [UInt8](repeating: 1, count: 5_000))
        #expect(await cache.get("huge") == nil, "a file larger than the whole cache is not kept")

        let reopened = MediaCache(folder: folder, capacity: 3_000)
        #expect(await reopened.get("c")?.body == kilobyte, "kept across a restart")
        #expect(await reopened.get("../escape") == nil)
        let memory = MediaCache(folder: nil, capacity: 3_000)
        await memory.put("a", contentType: "image/png", body: kilobyte)
        #expect(await memory.get("a") == nil, "an in-memory store keeps no files")
    }
}
