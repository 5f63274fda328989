import Engine
import Foundation
import HTTPCore
import Upstream

/// `GET /api/media/{server}/{mediaId}` (`?thumbnail=1` for a small image): a message's file
/// through the dashboard (CONTRACT section 10), so the upstream's token never reaches the browser.
///
/// Security first: the server name and media id are checked (`MediaReference`: no `/`, `..`,
/// `%`, nothing empty or over-long) before anything is asked; only the engine's own upstream is
/// asked, through its media API; a file over `maxBytes` is a 413 problem; only raster images are
/// served inline (as the type they are), everything else (SVG and HTML included) as
/// `application/octet-stream` to download; every answer is `nosniff` and sandboxed.
struct MediaRoutes {
    let engine: SyncEngine
    let cache: MediaCache
    /// The largest file fetched.
    let maxBytes: Int

    static let defaultMaxBytes = 20 * 1024 * 1024
    /// What the cache in the data folder may hold in all.
    static let defaultCacheBytes: Int64 = 256 * 1024 * 1024

    /// Image types a browser draws without running anything (no SVG: it can carry script).
    static let inlineTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"]

    func register(in router: inout Router) {
        router.add("GET", "/api/media/{server}/{mediaId}") { request, parameters, _ in
            await serve(request, server: parameters["server"] ?? "", mediaID: parameters["mediaId"] ?? "")
        }
    }

    private func serve(_ request: HTTPRequest, server: String, mediaID: String) async -> HTTPResponse {
        guard let reference = MediaReference(server: server, mediaID: mediaID) else {
            return Problem(status: .badRequest, detail: "Not a media reference: a server name and a media id of letters, digits, - and _.").response
        }
        let thumbnail: Bool
        switch request.queryValue("thumbnail") {
        case nil, "0": thumbnail = false
        case "1": thumbnail = true
        default: return Problem(status: .badRequest, detail: "thumbnail must be 0 or 1.").response
        }
        guard engine.servesMedia else {
            return Problem(status: .notFound, detail: "This upstream has no files to fetch.").response
        }
        let key = "\(reference.server)!\(reference.mediaID)\(thumbnail ? "!thumbnail" : "")"
        if let kept = await cache.get(key) {
            return Self.answer(contentType: kept.contentType, body: kept.body)
        }
        let fetched: FetchedMedia
        do {
            fetched = try await engine.fetchMedia(reference, thumbnail: thumbnail, maxBytes: maxBytes)
        } catch {
            switch error {
            case .tooLarge:
                return Problem(status: .contentTooLarge, detail: "The file is larger than \(maxBytes / 1024 / 1024) MB, the most this dashboard fetches; open it in Element or another Matrix app.").response
            case .forbidden, .badResponse:
                return Problem(status: .notFound, detail: "The homeserver has no such file for this account (\(error)).").response
            default:
                return Problem(status: .badGateway, detail: "The homeserver did not give the file: \(error).").response
            }
        }
        let type = Self.servedType(fetched.contentType)
        await cache.put(key, contentType: type, body: fetched.body)
        return Self.answer(contentType: type, body: fetched.body)
    }

    /// The type the file is served as: a raster image type as given, anything else a download.
    static func servedType(_ given: String?) -> String {
        let type = (given ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return inlineTypes.contains(type) ? type : "application/octet-stream"
    }

    static func answer(contentType: String, body: [UInt8]) -> HTTPResponse {
        var headers: HTTPHeaders = [
            "Content-Type": contentType,
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
            "Cache-Control": "private, max-age=86400",
        ]
        if !inlineTypes.contains(contentType) { headers.add("Content-Disposition", "attachment") }
        return HTTPResponse(status: .ok, headers: headers, body: body)
    }
}
