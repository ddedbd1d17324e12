/// What a person typed into a search box, turned into a structured keyword query.
///
/// Parsing never fails: any string yields a query (possibly an empty one, which matches
/// nothing). Rules:
///
/// - text between double quotes is a phrase (its terms must appear in order, adjacent); an
///   unbalanced quote runs to the end of the text;
/// - outside quotes, each term is a clause: a word the tokenizer cuts in several terms
///   (`e-mail`, `GNU/Linux`, the bigrams of `数据库`) gives several clauses, OR-ed like any others
///   (BM25 then favours documents with more of them; quote the word to require the sequence);
/// - everything else (`AND`, `NEAR`, `*`, `^`, `col:`, parentheses) is just text: operators are
///   not interpreted, punctuation separates terms;
/// - stop words (``Stopwords/english`` by default) are dropped from unquoted clauses, unless every
///   unquoted clause is a stop word and there is no phrase (then the words are all the person
///   gave us, so they stay);
/// - repeated clauses count once.
///
/// ```swift
/// let query = TypedQuery("where did I put the \"blue folder\" receipts", tokenizer: Tokenizer(.english))
/// query.fts5Expression // "\"put\" OR \"blue folder\" OR \"receipts\""
/// query.contentTerms   // ["put", "blue", "folder", "receipt"]
/// ```
public struct TypedQuery: Sendable, Hashable {
    /// One unit of the query: a word or a quoted phrase.
    public struct Clause: Sendable, Hashable {
        /// The words as typed (token characters only), in order; fewer than ``terms`` when
        /// terms overlap (CJK bigrams).
        public var words: [String]
        /// Their indexed forms, as the tokenizer produces them for documents.
        public var terms: [String]
        /// Whether the person quoted it.
        public var isQuoted: Bool

        /// Whether matching needs positions (several terms in order).
        public var isPhrase: Bool { terms.count > 1 }
    }

    /// The text as typed.
    public let text: String
    /// The clauses kept, in typed order.
    public let clauses: [Clause]
    /// The clauses dropped as stop words.
    public let droppedStopwords: [String]

    /// Parses typed text.
    ///
    /// - Parameters:
    ///   - text: Anything a person typed.
    ///   - tokenizer: The collection's tokenizer (the one its documents were indexed with).
    ///   - stopwords: Folded, unstemmed words to drop from unquoted clauses; nil (the default)
    ///     picks them from the query's language (``Stopwords/forQuery(_:)``).
    /// - Complexity: O(n) in the length of `text`.
    public init(_ text: String, tokenizer: Tokenizer, stopwords: Set<String>? = nil) {
        self.text = text
        var surfaceTokenizerConfiguration = tokenizer.configuration
        surfaceTokenizerConfiguration.stemsEnglish = false
        let surface = Tokenizer(surfaceTokenizerConfiguration)

        // Split into (segment, quoted) pieces: quotes toggle, unbalanced runs to the end.
        var pieces: [(Substring, Bool)] = []
        var quoted = false
        var start = text.startIndex
        for index in text.indices where text[index] == "\"" {
            pieces.append((text[start..<index], quoted))
            quoted.toggle()
            start = text.index(after: index)
        }
        pieces.append((text[start...], quoted))
        // Each piece tokenized once: the indexed terms, and the folded, unstemmed forms that stop
        // words (and the query's language) are judged on.
        let parsed = pieces.map { piece, isQuoted in
            let segment = String(piece)
            return (
                segment: segment, isQuoted: isQuoted, tokens: tokenizer.tokens(in: segment),
                folded: surface.tokens(in: segment)
            )
        }
        let stopwords = stopwords ?? Stopwords.forQuery(parsed.flatMap { $0.folded.map(\.term) })

        var candidates: [(clause: Clause, isStopword: Bool)] = []
        var seen = Set<[String]>()
        func append(_ clause: Clause, isStopword: Bool) {
            guard seen.insert(clause.terms).inserted else { return }
            candidates.append((clause, isStopword))
        }
        for (segment, isQuoted, tokens, folded) in parsed {
            guard !tokens.isEmpty else { continue }
            let bytes = Array(segment.utf8)
            if isQuoted {
                // The typed words: token spans, merged where they touch or overlap (CJK bigrams,
                // `MySQL数据库`), so FTS5 re-tokenizes them into exactly these terms.
                var spans: [Range<Int>] = []
                for token in tokens {
                    if let last = spans.last, token.byteRange.lowerBound <= last.upperBound {
                        spans[spans.count - 1] =
                            last.lowerBound..<max(last.upperBound, token.byteRange.upperBound)
                    } else {
                        spans.append(token.byteRange)
                    }
                }
                let words = spans.map { String(decoding: bytes[$0], as: UTF8.self) }
                append(
                    Clause(words: words, terms: tokens.map(\.term), isQuoted: true),
                    isStopword: false)
            } else {
                // Each term its own clause; stop words judged on the folded, unstemmed form.
                for (token, plain) in zip(tokens, folded) {
                    let word = String(decoding: bytes[token.byteRange], as: UTF8.self)
                    append(
                        Clause(words: [word], terms: [token.term], isQuoted: false),
                        isStopword: stopwords.contains(plain.term))
                }
            }
        }
        if candidates.allSatisfy(\.isStopword) {
            clauses = candidates.map(\.clause)
            droppedStopwords = []
        } else {
            clauses = candidates.filter { !$0.isStopword }.map(\.clause)
            droppedStopwords = candidates.filter(\.isStopword).map {
                $0.clause.words.joined(separator: " ")
            }
        }
    }

    /// Whether nothing is left to search for (the query matches no document).
    public var isEmpty: Bool { clauses.isEmpty }

    /// The distinct indexed terms of all clauses, in first-seen order: the query's content words,
    /// against which a document's coverage is measured.
    public var contentTerms: [String] {
        var seen = Set<String>()
        return clauses.flatMap(\.terms).filter { seen.insert($0).inserted }
    }

    /// A safe FTS5 MATCH expression: each clause a quoted string, OR-ed; `nil` when empty.
    ///
    /// The strings hold only the token characters of the typed words, separated by spaces, so
    /// no input can produce an operator, a column filter, a prefix query or a syntax error; FTS5
    /// tokenizes each string with the table's tokenizer into the same terms as ``Clause/terms``.
    public var fts5Expression: String? {
        guard !clauses.isEmpty else { return nil }
        return clauses.map { "\"" + $0.words.joined(separator: " ") + "\"" }.joined(
            separator: " OR ")
    }
}
