/// Builds FTS5 MATCH expressions that cannot be syntax errors, from text a person typed.
///
/// The text is split into words (runs of letters, digits and combining marks — the characters
/// FTS5's `unicode61` tokenizer keeps), each word is quoted as an FTS5 string, and the words are
/// joined with `OR`, so BM25 ranks rows by how many of the words they contain and how rare those
/// words are. Operators, quotes, parentheses, `*`, `^`, `:` and `NEAR` lose their meaning.
///
/// ```swift
/// FTS5Pattern(typed: "dentist (tuesday)?")?.expression  // "\"dentist\" OR \"tuesday\""
/// FTS5Pattern(typed: "  ?! ")                          // nil: nothing to search for
/// ```
public struct FTS5Pattern: Hashable, Sendable {
    /// The words, in order, without duplicates.
    public let words: [String]
    /// The FTS5 MATCH expression.
    public let expression: String

    /// Makes a pattern from person-typed text; nil when the text has no words.
    public init?(typed text: String) {
        let words = Self.words(in: text)
        guard !words.isEmpty else { return nil }
        self.init(words: words)
    }

    /// Makes a pattern that matches any of the given words (each quoted).
    public init?(anyOf words: [String]) {
        var seen = Set<String>()
        let unique = words.filter { !$0.isEmpty && seen.insert($0.lowercased()).inserted }
        guard !unique.isEmpty else { return nil }
        self.words = unique
        self.expression = unique.map(Self.quote).joined(separator: " OR ")
    }

    private init(words: [String]) {
        self.init(anyOf: words)!
    }

    /// Quotes one word as an FTS5 string (double quotes doubled).
    public static func quote(_ word: String) -> String {
        "\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Splits text into the runs of letters, digits and marks that FTS5's unicode61 tokenizer keeps.
    public static func words(in text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isWordScalar(scalar) {
                current.append(scalar)
            } else if !current.isEmpty {
                words.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { words.append(String(current)) }
        return words
    }

    private static func isWordScalar(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark,
            .enclosingMark,
            .privateUse:
            true
        default:
            false
        }
    }
}
