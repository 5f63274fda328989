import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The secrets of one launch: the CSRF token and the epoch are fresh each time; the access token
/// is fresh too unless it is kept across launches (`AccessTokenFile`).
public struct LaunchSecrets: Sendable {
    /// Sent back by the page in `X-CSRF-Token` on every state-changing request. 256 random bits.
    public let csrfToken: String
    /// Identifies this run of the process; a poll naming another epoch gets a reset.
    public let epoch: String
    /// Needed to read anything through the API (see `AccessGate`). 256 random bits; printed once,
    /// in the ready line, and never logged.
    public let accessToken: String

    /// `accessToken`: the one kept from an earlier launch; nil makes a new one.
    public init<Generator: RandomNumberGenerator>(using generator: inout Generator, accessToken: String? = nil) {
        csrfToken = Self.hex(byteCount: 32, using: &generator)
        epoch = Self.hex(byteCount: 8, using: &generator)
        self.accessToken = accessToken ?? Self.hex(byteCount: 32, using: &generator)
    }

    /// Draws from the system's cryptographic generator (`getrandom`).
    public init(accessToken: String? = nil) {
        var generator = SystemRandomNumberGenerator()
        self.init(using: &generator, accessToken: accessToken)
    }

    /// A new access token: 256 random bits from the system's generator, as 64 hex digits.
    public static func newAccessToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex(byteCount: 32, using: &generator)
    }

    static func hex<Generator: RandomNumberGenerator>(byteCount: Int, using generator: inout Generator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(byteCount * 2)
        for _ in 0..<byteCount {
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The access token kept in a file beside the store (mode 0600, readable by its owner only), so a
/// page left open goes on after a restart without a new address.
public enum AccessTokenFile {
    public enum Failure: Error, CustomStringConvertible {
        case unwritable(path: String, errno: Int32)

        public var description: String {
            switch self {
            case let .unwritable(path, code): "cannot keep the access token in \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    /// The token kept at `path`, or a new one written there (`renew`: always a new one). A file
    /// that does not hold a token of 64 hex digits is replaced; one readable by others is made
    /// private again. Returns the token and whether it is new.
    public static func load(path: String, renew: Bool) throws(Failure) -> (token: String, isNew: Bool) {
        if !renew, let kept = try? String(contentsOfFile: path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), isToken(kept) {
            chmod(path, 0o600)
            return (kept, false)
        }
        let token = LaunchSecrets.newAccessToken()
        try write(token, to: path)
        return (token, true)
    }

    static func isToken(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Written to a temporary file made with mode 0600 and renamed over the old one, so no moment
    /// exists where the token is readable by others or half written.
    private static func write(_ token: String, to path: String) throws(Failure) {
        let temporary = path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unwritable(path: path, errno: errno) }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .unwritable(path: path, errno: code)
        }
    }
}

/// Compares two strings in time that depends only on their lengths, not on where they differ.
public func constantTimeEquals<Left: StringProtocol, Right: StringProtocol>(_ left: Left, _ right: Right) -> Bool {
    // Over the bytes in place when the strings are contiguous (native ones are): walking two
    // UTF-8 views in step was 3 % of a poll's CPU.
    let inPlace = left.utf8.withContiguousStorageIfAvailable { leftBytes in
        right.utf8.withContiguousStorageIfAvailable { rightBytes in constantTimeEquals(bytes: leftBytes, rightBytes) }
    }
    if let inPlace = inPlace ?? nil { return inPlace }
    return constantTimeEquals(bytes: Array(left.utf8), Array(right.utf8))
}

private func constantTimeEquals<Bytes: RandomAccessCollection<UInt8>>(bytes left: Bytes, _ right: Bytes) -> Bool where Bytes.Index == Int {
    guard left.count == right.count else { return false }
    var difference: UInt8 = 0
    for offset in 0..<left.count {
        difference |= left[left.startIndex + offset] ^ right[right.startIndex + offset]
    }
    return difference == 0
}
