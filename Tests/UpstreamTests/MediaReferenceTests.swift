import Testing
import Upstream

/// What the dashboard lets through to a homeserver's media API: a server name and a media id of
/// the characters the spec allows, nothing that could name another path.
@Suite("Media references")
struct MediaReferenceTests {
    @Test func anMxcURIOfAServerAndAnIDIsAReference() {
        #expect(MediaReference(mxc: "mxc://matrix.org/AbC-123_x")?.path == "matrix.org/AbC-123_x")
        #expect(MediaReference(mxc: "mxc://localhost:8448/id")?.server == "localhost:8448")
        #expect(MediaReference(mxc: "mxc://[::1]:8448/id")?.server == "[::1]:8448")
        #expect(MediaReference(path: "matrix.org/AbC")?.mediaID == "AbC")
    }

    @Test(arguments: ["https://matrix.org/x", "mxc://", "mxc://matrix.org", "mxc://matrix.org/", "mxc:///id", "mxc://matrix.org/a/b",
                      "mxc://../id", "mxc://matrix.org/..", "mxc://-x/id", "mxc://.hidden/id", "mxc://matrix.org/a%2Fb",
                      "mxc://matrix.org/a b", "mxc://matr ix.org/id", "mxc://matrix.org/a?b", "mxc://matrix.org/é"])
    func anythingElseIsNot(_ uri: String) {
        #expect(MediaReference(mxc: uri) == nil, "\(uri)")
    }

    @Test func overLongPartsAreRefused() {
        #expect(MediaReference(server: "matrix.org", mediaID: String(repeating: "a", count: 255)) != nil)
        #expect(MediaReference(server: "matrix.org", mediaID: String(repeating: "a", count: 256)) == nil)
        #expect(MediaReference(server: String(repeating: "a", count: 256), mediaID: "id") == nil)
        #expect(MediaReference(server: "", mediaID: "id") == nil)
    }
}
