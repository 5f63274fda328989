/// Values made fresh for each launch of the process.
public struct LaunchSecrets: Sendable {
    /// Sent back by the page in `X-CSRF-Token` on every state-changing request. 256 random bits.
    public let csrfToken: String
    /// Identifies this run of the process; a poll naming another epoch gets a reset.
    public let epoch: String
    /// Needed to read anything through the API (see `AccessGate`). 256 random bits; printed once,
    /// in the ready line, and never logged.
    public let accessToken: String

    public init<Generator: RandomNumberGenerator>(using generator: inout Generator) {
        csrfToken = Self.hex(byteCount: 32, using: &generator)
        epoch = Self.hex(byteCount: 8, using: &generator)
        accessToken = Self.hex(byteCount: 32, using: &generator)
    }

    /// Draws from the system's cryptographic generator (`getrandom`).
    public init() {
        var generator = SystemRandomNumberGenerator()
        self.init(using: &generator)
    }

    private static func hex<Generator: RandomNumberGenerator>(byteCount: Int, using generator: inout Generator) -> String {
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
