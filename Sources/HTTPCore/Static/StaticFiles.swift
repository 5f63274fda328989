import CShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Serves regular files under one directory, with `ETag` revalidation.
///
/// A path is percent-decoded first and only then checked: `..` segments, NUL, backslashes, empty
/// or hidden segments are refused, and the file is opened with `openat2(RESOLVE_BENEATH)`, so not
/// even a symbolic link can lead outside the root. Anything but a regular file is "not found".
/// File contents are cached and revalidated against the file's identity and mtime on every request.
public final class StaticFiles: Sendable {
    public enum Result: Sendable {
        case found(HTTPResponse)
        case notFound
        /// The path's percent-encoding is broken.
        case badPath
    }

    private struct CachedFile {
        var device: UInt64
        var inode: UInt64
        var modified: Int64
        var size: Int
        var response: HTTPResponse
    }

    public let root: String
    private let rootFD: Int32
    private let cache = Mutex<[String: CachedFile]>([:])

    /// Throws when `root` is not a readable directory.
    public init(root: String) throws {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(call: "open(\(root))", errno: errno) }
        self.root = root
        self.rootFD = fd
    }

    deinit {
        close(rootFD)
    }

    /// The response for a GET or HEAD of `request.path`; `/` and paths ending in `/` mean `index.html`.
    public func response(for request: HTTPRequest) -> Result {
        guard let decoded = PercentDecoding.decode(request.path) else { return .badPath }
        guard let relative = Self.safeRelativePath(decoded) else { return .notFound }
        guard let file = load(relative) else { return .notFound }
        let etag = file.headers["ETag"] ?? ""
        if let ifNoneMatch = request.headers["If-None-Match"], Self.matches(ifNoneMatch, etag: etag) {
            var headers = file.headers
            headers.remove("Content-Type")
            return .found(HTTPResponse(status: .notModified, headers: headers))
        }
        return .found(file)
    }

    /// The decoded path made relative to the root, or nil when it must not be served.
    static func safeRelativePath(_ decoded: String) -> String? {
        guard decoded.hasPrefix("/") else { return nil }
        var relative = String(decoded.dropFirst())
        if relative.isEmpty || relative.hasSuffix("/") { relative += "index.html" }
        var previous = UInt8(ascii: "/")
        for byte in relative.utf8 {
            switch byte {
            case 0, UInt8(ascii: "\\"):
                return nil
            case UInt8(ascii: "/") where previous == UInt8(ascii: "/"):
                return nil  // an empty segment
            case UInt8(ascii: ".") where previous == UInt8(ascii: "/"):
                return nil  // `..`, `.` and hidden files
            default:
                break
            }
            previous = byte
        }
        return relative
    }

    private func load(_ relative: String) -> HTTPResponse? {
        if let cached = cache.withLock({ $0[relative] }), isUnchanged(cached, relative) {
            return cached.response
        }
        let fd = openBeneath(relative)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let device = UInt64(info.st_dev), inode = UInt64(info.st_ino), size = Int(info.st_size)
        if let cached = cache.withLock({ $0[relative] }),
           cached.device == device, cached.inode == inode, cached.modified == modified, cached.size == size {
            return cached.response
        }
        guard let bytes = Self.readAll(fd, expected: size) else { return nil }
        let etag = "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(modified, radix: 16))\""
        let response = HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": MediaType.forFile(named: relative),
                "ETag": etag,
                "Cache-Control": "no-cache",
            ],
            body: bytes
        )
        cache.withLock {
            $0[relative] = CachedFile(device: device, inode: inode, modified: modified, size: size, response: response)
        }
        return response
    }

    /// A cache hit costs one `fstatat`. The entry was made through a safe open, and no file outside
    /// the root can show the same device, inode, size and mtime, so a swapped-in symlink only misses.
    private func isUnchanged(_ cached: CachedFile, _ relative: String) -> Bool {
        var info = stat()
        guard fstatat(rootFD, relative, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return false
        }
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return cached.device == UInt64(info.st_dev) && cached.inode == UInt64(info.st_ino)
            && cached.modified == modified && cached.size == Int(info.st_size)
    }

    private func openBeneath(_ relative: String) -> Int32 {
        let fd = cshims_open_beneath(rootFD, relative)
        guard fd < 0, errno == ENOSYS else { return fd }
        // Kernels before 5.6: resolve the path and check it is still under the root.
        guard let resolvedRoot = realpath(root, nil) else { return -1 }
        defer { free(resolvedRoot) }
        guard let resolved = realpath(root + "/" + relative, nil) else { return -1 }
        defer { free(resolved) }
        let rootPath = String(cString: resolvedRoot), path = String(cString: resolved)
        guard path.hasPrefix(rootPath + "/") else { return -1 }
        return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
    }

    private static func readAll(_ fd: Int32, expected: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: expected)
        var offset = 0
        while offset < expected {
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, expected - offset, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            offset += count
        }
        return bytes
    }

    /// `If-None-Match` uses weak comparison (RFC 9110 section 13.1.2).
    static func matches(_ header: String, etag: String) -> Bool {
        let wanted = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for candidate in header.split(separator: ",") {
            var tag = String(candidate).trimmingHTTPWhitespace()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == wanted { return true }
        }
        return false
    }
}
