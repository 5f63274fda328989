/// A glob-style pattern as the push rules use them (spec appendix: `*` matches zero or more
/// characters, `?` exactly one), matched case-insensitively. Compiled once, matched by walking
/// the text once with the set of pattern positions reachable so far (no backtracking, so a
/// pattern of many stars costs the same as one).
public struct GlobPattern: Sendable, Equatable {
    enum Token: Equatable {
        case scalar(Unicode.Scalar)
        case one
        case any
    }

    let tokens: [Token]

    /// A glob: `*` and `?` are wildcards, everything else stands for itself.
    public init(glob: String) {
        tokens = Self.folded(glob).map { scalar in
            switch scalar {
            case "*": .any
            case "?": .one
            default: .scalar(scalar)
            }
        }
    }

    /// A literal text, no wildcards (a display name looked for in a body).
    public init(literal: String) {
        tokens = Self.folded(literal).map(Token.scalar)
    }

    /// Whether the pattern matches all of `text`.
    public func matchesWhole(_ text: String) -> Bool {
        run(Self.folded(text), words: false)
    }

    /// Whether the pattern matches a part of `text` that starts and ends at a word boundary (the
    /// start or end of the text, or any character not in `[A-Za-z0-9_]`): how `content.body` is
    /// matched.
    public func matchesWords(in text: String) -> Bool {
        run(Self.folded(text), words: true)
    }

    private func run(_ text: [Unicode.Scalar], words: Bool) -> Bool {
        let count = tokens.count
        var states = [Bool](repeating: false, count: count + 1)
        var next = states
        func close(_ set: inout [Bool]) {
            // A star may match nothing: reaching it reaches what follows it.
            for index in 0..<count where set[index] && tokens[index] == .any { set[index + 1] = true }
        }
        states[0] = true
        close(&states)
        if words && states[count] && (text.isEmpty || !Self.isWordCharacter(text[0])) { return true }
        for (position, scalar) in text.enumerated() {
            for index in 0...count { next[index] = false }
            for index in 0..<count where states[index] {
                switch tokens[index] {
                case .any: next[index] = true; next[index + 1] = true
                case .one: next[index + 1] = true
                case .scalar(let expected): if expected == scalar { next[index + 1] = true }
                }
            }
            // A match may begin after any character that is not a word character.
            if words && !Self.isWordCharacter(scalar) { next[0] = true }
            close(&next)
            swap(&states, &next)
            let end = position + 1
            if words && states[count] && (end == text.count || !Self.isWordCharacter(text[end])) { return true }
        }
        return !words && states[count]
    }

    static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x5F: true
        default: false
        }
    }

    private static func folded(_ text: String) -> [Unicode.Scalar] {
        Array(text.lowercased().unicodeScalars)
    }
}
