import Foundation

/// What a person typed into the search box, read into an FTS5 query that cannot be misread.
///
/// Words match words, accents and case folded; the last word, while it is being typed, matches
/// as a prefix from its second letter on ("lun" finds "lunch"; "l" alone is the word "l", since
/// every word that starts with one letter is a large part of a big copy), and so does any word
/// ending in `*`. `"two words"` is a
/// phrase; `OR`, `AND` and `NOT` (in capitals) and parentheses combine. Every word reaches FTS5
/// quoted, so nothing a person types is FTS5 syntax by accident; what cannot be read is a
/// ``SearchQueryError`` that says why in plain words.
public struct SearchQuery: Sendable, Equatable {
    /// The FTS5 `MATCH` expression.
    public let expression: String
    /// The words to mark in snippets: folded, each a prefix or whole.
    public let terms: [Term]
    /// What matches `expression`, split into tiers that are ranked one after the other: for plain
    /// words, first the messages with them as a phrase, then those with every word whole, then
    /// the rest (a word typed so far matching longer ones), so "Message 150" puts the message that
    /// says so before "Message 1500". Disjoint, and together exactly `expression`'s matches.
    public let tiers: [Tier]

    /// One tier's FTS5 expression, and whether it matches words by their beginning (`*`).
    public struct Tier: Sendable, Equatable {
        public var expression: String
        /// A beginning of two letters matches a large part of a big copy: such a tier is ranked
        /// among its newest matches only (`SearchQueries.prefixWindow`).
        public var matchesPrefixes: Bool
    }

    public struct Term: Sendable, Equatable {
        public var folded: String
        public var prefix: Bool
    }

    public static let maximumLength = 200
    /// The fewest letters of a word being typed that match as a prefix.
    static let shortestTypedPrefix = 2

    public init(_ text: String) throws(SearchQueryError) {
        guard text.count <= Self.maximumLength else { throw .tooLong }
        var parts: [String] = []
        var terms: [Term] = []
        var depth = 0
        var index = text.startIndex
        /// Whether the last part is something an operator may follow (a word, a phrase, a `)`).
        var afterOperand = false
        /// Nothing but words so far (no phrase, operator or parenthesis).
        var plainWords = true

        func add(operand: String) {
            if afterOperand { parts.append("AND") }
            parts.append(operand)
            afterOperand = true
        }

        while index < text.endIndex {
            let character = text[index]
            if character.isWhitespace {
                index = text.index(after: index)
            } else if character == "\"" {
                plainWords = false
                guard let close = text[text.index(after: index)...].firstIndex(of: "\"") else { throw .unclosedQuote }
                let words = Self.words(in: text[text.index(after: index)..<close])
                if !words.isEmpty {
                    add(operand: Self.quoted(words.joined(separator: " ")))
                    terms += words.map { Term(folded: Self.fold($0), prefix: false) }
                }
                index = text.index(after: close)
            } else if character == "(" {
                plainWords = false
                if afterOperand { parts.append("AND") }
                parts.append("(")
                depth += 1
                afterOperand = false
                index = text.index(after: index)
            } else if character == ")" {
                guard depth > 0 else { throw .unopenedParenthesis }
                guard afterOperand else { throw .emptyParentheses }
                parts.append(")")
                depth -= 1
                afterOperand = true
                index = text.index(after: index)
            } else {
                let end = text[index...].firstIndex { $0.isWhitespace || $0 == "\"" || $0 == "(" || $0 == ")" } ?? text.endIndex
                let raw = String(text[index..<end])
                index = end
                if ["OR", "AND", "NOT"].contains(raw) {
                    plainWords = false
                    guard afterOperand else { throw .operatorWithoutWords(raw) }
                    parts.append(raw)
                    afterOperand = false
                    continue
                }
                let starred = raw.hasSuffix("*")
                // While typing, the last word is not finished yet.
                let typing = end == text.endIndex
                let words = Self.words(in: Substring(starred ? String(raw.dropLast()) : raw))
                for (position, word) in words.enumerated() {
                    let prefix = position == words.count - 1 && (starred || (typing && word.count >= Self.shortestTypedPrefix))
                    add(operand: Self.quoted(word) + (prefix ? "*" : ""))
                    terms.append(Term(folded: Self.fold(word), prefix: prefix))
                }
            }
        }
        guard depth == 0 else { throw .unclosedParenthesis }
        if let last = parts.last, ["OR", "AND", "NOT"].contains(last) { throw .operatorWithoutWords(last) }
        guard !terms.isEmpty else { throw .empty }
        expression = parts.joined(separator: " ")
        self.terms = terms
        let prefixes = terms.contains(where: \.prefix)
        tiers = plainWords ? Self.tiers(expression: expression, terms: terms) : [Tier(expression: expression, matchesPrefixes: prefixes)]
    }

    /// Plain words only (no phrase, operator or parenthesis) are ranked in tiers.
    private static func tiers(expression: String, terms: [Term]) -> [Tier] {
        let words = terms.map { quoted($0.folded) }
        let exact = words.joined(separator: " AND ")
        let typedPrefix = terms.contains(where: \.prefix)
        guard words.count > 1 else {
            return typedPrefix ? [Tier(expression: exact, matchesPrefixes: false), Tier(expression: "\(expression) NOT \(exact)", matchesPrefixes: true)]
                : [Tier(expression: expression, matchesPrefixes: false)]
        }
        let phrase = quoted(terms.map(\.folded).joined(separator: " "))
        var tiers = [Tier(expression: phrase, matchesPrefixes: false), Tier(expression: "(\(exact)) NOT \(phrase)", matchesPrefixes: false)]
        if typedPrefix { tiers.append(Tier(expression: "(\(expression)) NOT (\(exact))", matchesPrefixes: true)) }
        return tiers
    }

    /// The runs of letters and digits: what FTS5's unicode61 tokenizer calls tokens.
    static func words(in text: Substring) -> [String] {
        text.split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Case and accents folded, as the index folds them.
    public static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }
}

/// Why a search cannot be run, in words for the person who typed it.
public enum SearchQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case tooLong
    case unclosedQuote
    case unclosedParenthesis
    case unopenedParenthesis
    case emptyParentheses
    case operatorWithoutWords(String)
    /// FTS5 itself could not read it (its own words).
    case unreadable(String)

    public var description: String {
        switch self {
        case .empty: "Type a word to search for."
        case .tooLong: "The search is too long: at most \(SearchQuery.maximumLength) characters."
        case .unclosedQuote: "The search has a quotation mark without its closing one."
        case .unclosedParenthesis: "The search has an opening parenthesis without its closing one."
        case .unopenedParenthesis: "The search has a closing parenthesis without an opening one."
        case .emptyParentheses: "The search has parentheses with nothing to search for between them."
        case .operatorWithoutWords(let word): "\(word) needs words to search for on both sides."
        case .unreadable(let detail): "The search could not be read: \(detail)."
        }
    }
}
