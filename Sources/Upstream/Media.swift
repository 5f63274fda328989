/// Files of messages (CONTRACT section 10, `media`), fetched on demand from an upstream that
/// serves them (Matrix authenticated media).
public protocol MediaSource: Sendable {
    /// The file `reference` names, or a small image of it (`thumbnail`); an answer over
    /// `maxBytes` is `UpstreamError.tooLarge`.
    func media(token: String, _ reference: MediaReference, thumbnail: Bool, maxBytes: Int) async throws(UpstreamError) -> FetchedMedia
}

/// A file as the upstream served it.
public struct FetchedMedia: Sendable, Equatable {
    /// What the upstream said it is (never trusted for serving: see the dashboard's media route).
    public var contentType: String?
    public var body: [UInt8]

    public init(contentType: String?, body: [UInt8]) {
        self.contentType = contentType
        self.body = body
    }
}

/// A `mxc://SERVER/MEDIA_ID` reference, checked: only a server name and a media id of the
/// characters the spec allows, so that nothing read from an event can make the dashboard ask for
/// another path than the homeserver's media of that id.
public struct MediaReference: Sendable, Equatable {
    public let server: String
    public let mediaID: String

    /// `SERVER/MEDIA_ID`, as the store keeps it.
    public var path: String { "\(server)/\(mediaID)" }

    /// A stored `SERVER/MEDIA_ID`, checked again.
    public init?(path: String) {
        guard let slash = path.firstIndex(of: "/") else { return nil }
        self.init(server: String(path[..<slash]), mediaID: String(path[path.index(after: slash)...]))
    }

    public init?(mxc: String) {
        guard mxc.hasPrefix("mxc://") else { return nil }
        let rest = mxc.dropFirst("mxc://".count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        self.init(server: String(rest[..<slash]), mediaID: String(rest[rest.index(after: slash)...]))
    }

    public init?(server: String, mediaID: String) {
        guard Self.isServerName(server), Self.isMediaID(mediaID) else { return nil }
        self.server = server
        self.mediaID = mediaID
    }

    /// A media id: `A-Z a-z 0-9 _ -`, 1 to 255 of them (the spec's "opaque identifier" as servers make them).
    public static func isMediaID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255 && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x2D
        }
    }

    /// A server name (appendices, "Server Name"): a DNS name or IPv4 address, or a bracketed IPv6
    /// literal, with an optional port: `A-Z a-z 0-9 . - : [ ]`, beginning with a letter, a digit or
    /// `[` (so never a dot-segment), 1 to 255 of them; no slash, no percent sign.
    public static func isServerName(_ text: String) -> Bool {
        guard let first = text.utf8.first, text.utf8.count <= 255, isAlphanumeric(first) || first == 0x5B else { return false }
        return text.utf8.allSatisfy { byte in
            isAlphanumeric(byte) || byte == 0x2E || byte == 0x2D || byte == 0x3A || byte == 0x5B || byte == 0x5D
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

