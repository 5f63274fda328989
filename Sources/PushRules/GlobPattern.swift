/// A text folded to lower case once, to be matched by many patterns: an event's body is read by
/// every keyword and mention rule, and folding it once per rule was most of an event's cost.
public struct FoldedText: Sendable, Equatable {
    let scalars: [Unicode.Scalar]

    public init(_ text: String) {
        scalars = Array(text.lowercased().unicodeScalars)
    }
}

/// A glob-style pattern as the push rules use them (spec appendix: `*` matches zero or more
/// characters, `?` exactly one), matched case-insensitively. Compiled once. A pattern without
/// wildcards (most keywords, a display name, an event type) is compared directly; one with
/// wildcards is matched by walking the text once with the set of pattern positions reachable so
/// far (no backtracking, so a pattern of many stars costs the same as one).
public struct GlobPattern: Sendable, Equatable {
    enum Token: Equatable {
        case scalar(Unicode.Scalar)
        case one
        case any
    }

    let tokens: [Token]
    /// The pattern's folded scalars when it has no wildcards: matched without the automaton.
    let literal: [Unicode.Scalar]?
    /// The literal as ASCII bytes, when it is ASCII: compared with a text's UTF-8 as it stands.
    let asciiLiteral: [UInt8]?

    /// A glob: `*` and `?` are wildcards, everything else stands for itself.
    public init(glob: String) {
        self.init(tokens: Self.folded(glob).map { scalar in
            switch scalar {
            case "*": .any
            case "?": .one
            default: .scalar(scalar)
            }
        })
    }

    /// A literal text, no wildcards (a display name looked for in a body).
    public init(literal: String) {
        self.init(tokens: Self.folded(literal).map(Token.scalar))
    }

    private init(tokens: [Token]) {
        self.tokens = tokens
        let scalars = tokens.compactMap { token -> Unicode.Scalar? in
            if case .scalar(let scalar) = token { scalar } else { nil }
        }
        literal = scalars.count == tokens.count ? scalars : nil
        asciiLiteral = literal.flatMap { scalars in scalars.allSatisfy(\.isASCII) ? scalars.map { UInt8($0.value) } : nil }
    }

    /// Whether the pattern matches all of `text`.
    public func matchesWhole(_ text: String) -> Bool {
        if let asciiLiteral, let equal = Self.equalFoldingASCII(text, asciiLiteral) { return equal }
        return run(Self.folded(text), words: false)
    }

    /// Whether the pattern matches a part of `text` that starts and ends at a word boundary (the
    /// start or end of the text, or any character not in `[A-Za-z0-9_]`): how `content.body` is
    /// matched.
    public func matchesWords(in text: String) -> Bool {
        matchesWords(in: FoldedText(text))
    }

    /// `matchesWords(in:)` for a text already folded.
    public func matchesWords(in text: FoldedText) -> Bool {
        if let literal, !literal.isEmpty { return Self.literalWords(literal, in: text.scalars) }
        return run(text.scalars, words: true)
    }

    /// What the automaton says, whatever the pattern: the reference the literal paths agree with.
    func matchesByAutomaton(_ text: String, words: Bool) -> Bool {
        run(Self.folded(text), words: words)
    }

    /// nil when the text is not all ASCII (its folding then needs Unicode's rules).
    private static func equalFoldingASCII(_ text: String, _ literal: [UInt8]) -> Bool? {
        var utf8 = text.utf8.makeIterator()
        var index = 0
        while let byte = utf8.next() {
            guard byte < 0x80 else { return nil }
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
            guard index < literal.count, lowered == literal[index] else {
                // The rest must still be ASCII for the answer to stand.
                while let rest = utf8.next() { if rest >= 0x80 { return nil } }
                return false
            }
            index += 1
        }
        return index == literal.count
    }

    /// The literal at a place where a word may start and end.
    private static func literalWords(_ literal: [Unicode.Scalar], in text: [Unicode.Scalar]) -> Bool {
        let length = literal.count
        guard text.count >= length else { return false }
        let first = literal[0]
        for start in 0...(text.count - length) where text[start] == first {
            if start > 0 && isWordCharacter(text[start - 1]) { continue }
            let end = start + length
            if end < text.count && isWordCharacter(text[end]) { continue }
            var index = 1
            while index < length && text[start + index] == literal[index] { index += 1 }
            if index == length { return true }
        }
        return false
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
