import TroveSQLite

/// The text leg's query: raw FTS5 syntax, or text a person typed.
///
/// ```swift
/// try await notes.search(Query().matching(.fts5("\"oat milk\" OR groceries*")))   // may throw invalidTextQuery
/// try await notes.search(Query().matching(.typed("oat milk (2 l)?")))            // never a syntax error
/// ```
public struct TextQuery: Hashable, Sendable, ExpressibleByStringLiteral {
    enum Kind: Hashable, Sendable { case fts5, typed }
    let kind: Kind
    /// The text as given.
    public let text: String

    /// FTS5 query syntax: terms, "phrases", AND/OR/NOT, prefix*, NEAR(...), column filters.
    /// Malformed syntax throws ``TroveError/invalidTextQuery(query:reason:)``.
    public static func fts5(_ query: String) -> TextQuery { TextQuery(kind: .fts5, text: query) }

    /// Whatever a person typed: split into words, each quoted, OR-ed and ranked by BM25.
    /// Never a syntax error; text without words matches nothing.
    public static func typed(_ text: String) -> TextQuery { TextQuery(kind: .typed, text: text) }

    /// A string literal is FTS5 syntax (as in SQLiteVecKit's `searchText`, which TroveVecKit keeps).
    public init(stringLiteral value: String) { self.init(kind: .fts5, text: value) }

    init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }

    /// The MATCH expression, or nil when the query cannot match anything.
    var matchExpression: String? {
        switch kind {
        case .fts5: text.allSatisfy(\.isWhitespace) ? nil : text
        case .typed: FTS5Pattern(typed: text)?.expression
        }
    }
}

/// Which legs a text-in search runs (``SearchCollection/search(_:mode:where:limit:snippet:)``,
/// ``ModelCollection/search(_:mode:where:limit:)``).
public enum SearchMode: Hashable, Sendable {
    /// Meaning and words: the vector and text legs fused (reciprocal rank fusion).
    case hybrid
    /// Meaning only: nearness of the embedded text.
    case vector
    /// Words only: BM25.
    case text
}

/// How text hits show the matched words (FTS5 `snippet()`).
///
/// ```swift
/// let hits = try await notes.search(Query().matching(.typed("dentist")).snippets(SnippetStyle()))
/// print(hits[0].snippet ?? "")   // "…call the [dentist] on tuesday…"
/// ```
public struct SnippetStyle: Hashable, Sendable {
    /// Text placed before each matched word.
    public var open: String
    /// Text placed after each matched word.
    public var close: String
    /// Text marking cut-off content.
    public var ellipsis: String
    /// Approximate number of words in the snippet (1...64).
    public var words: Int

    /// A snippet style; `words` is clamped to 1...64.
    public init(open: String = "[", close: String = "]", ellipsis: String = "…", words: Int = 16) {
        self.open = open
        self.close = close
        self.ellipsis = ellipsis
        self.words = max(1, min(64, words))
    }
}
