/// A piece of a search result's snippet: text as it is in the message, and whether it is a match.
/// The page writes the pieces as text nodes (a match in a `<mark>`): no HTML travels.
public struct SnippetPiece: Sendable, Equatable {
    public var text: String
    public var match: Bool

    public init(_ text: String, match: Bool) {
        self.text = text
        self.match = match
    }
}

public enum Snippet {
    /// The part of `text` around its first match of `terms`, cut at word boundaries to about
    /// `length` characters (with "…" where it was cut), as pieces: plain text and matches.
    public static func pieces(of text: String, matching terms: [SearchQuery.Term], length: Int = 160) -> [SnippetPiece] {
        // Words of the message (runs of letters and digits) that match a term.
        var matches: [Range<String.Index>] = []
        var index = text.startIndex
        while index < text.endIndex {
            guard text[index].isLetter || text[index].isNumber else {
                index = text.index(after: index)
                continue
            }
            let end = text[index...].firstIndex { !($0.isLetter || $0.isNumber) } ?? text.endIndex
            let word = SearchQuery.fold(String(text[index..<end]))
            if terms.contains(where: { $0.prefix ? word.hasPrefix($0.folded) : word == $0.folded }) {
                matches.append(index..<end)
            }
            index = end
        }
        // A window that starts a little before the first match.
        let first = matches.first?.lowerBound ?? text.startIndex
        var start = text.index(first, offsetBy: -min(40, text.distance(from: text.startIndex, to: first)))
        if start > text.startIndex, let space = text[start..<first].firstIndex(where: \.isWhitespace) {
            start = text.index(after: space)
        }
        var end = text.index(start, offsetBy: length, limitedBy: text.endIndex) ?? text.endIndex
        if end < text.endIndex, let space = text[first..<end].lastIndex(where: \.isWhitespace) {
            end = space
        }
        var pieces: [SnippetPiece] = []
        var cursor = start
        for match in matches where match.lowerBound >= start && match.upperBound <= end {
            if cursor < match.lowerBound { pieces.append(SnippetPiece(String(text[cursor..<match.lowerBound]), match: false)) }
            pieces.append(SnippetPiece(String(text[match]), match: true))
            cursor = match.upperBound
        }
        if cursor < end { pieces.append(SnippetPiece(String(text[cursor..<end]), match: false)) }
        if start > text.startIndex { pieces.insert(SnippetPiece("…", match: false), at: 0) }
        if end < text.endIndex { pieces.append(SnippetPiece("…", match: false)) }
        return pieces
    }
}
