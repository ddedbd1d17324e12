import Foundation
import TroveEmbeddings

/// Which vector legs may speak for a query and a note: a model is competent on the languages it
/// was trained on (Documentation/PARAMETERS.md, "Two models").
///
/// multilingual-e5-small was trained on about 100 languages and any model we know nothing
/// about is given the benefit of the doubt: both are always competent. all-MiniLM-L6-v2 was
/// trained on English only, so it is competent on a text only when the text reads as English
/// to it:
///
/// - in a text of four words or more, at least 60% of the words are whole tokens of its
///   WordPiece vocabulary written in the basic Latin alphabet (English words are; Spanish,
///   German, French and Hindi in Latin script come apart into pieces or carry accents, and CJK
///   text is not in the alphabet), so an English note quoting "Día de Muertos" stays English;
/// - a shorter text is too short to count: it reads as English when all its letters are in the
///   basic Latin alphabet (no CJK, Cyrillic, Devanagari…, no accented letters, no `¿`/`¡`).
///
/// No model is competent on a query that is nothing but identifiers (`DEC-0054`;
/// ``Relevance/isIdentifierQuery(_:)``): sentence embeddings place `DEC-0054` and `DEC-0055`
/// side by side, so a vector leg would call a note holding only the near miss a strong match.
/// The words decide such a query's relevance; the ranking is unchanged (with no leg competent,
/// every leg votes).
///
/// The rule looks only at the text and the model's own vocabulary, never at the query set: it
/// is not tuned query by query.
///
/// ```swift
/// let competence = LegCompetence(query: "¿cuándo le toca la vacuna?", embedders: embedders)
/// competence.queryCompetent   // [false, true] for all-MiniLM-L6-v2 + multilingual-e5-small
/// ```
struct LegCompetence: Sendable {
    /// Share of whole-token words from which a text of four words or more reads as English.
    static let knownWordShare = 0.6
    /// Texts with fewer words pass the vocabulary test.
    static let shortText = 4

    /// The English-only models' tokenizers by model position; nil for multilingual ones.
    private let englishTokenizers: [WordPieceTokenizer?]
    /// Whether each model is competent on the query.
    let queryCompetent: [Bool]

    init(query: String, embedders: [any Embedder]) {
        englishTokenizers = embedders.map { embedder in
            guard BuiltInModel(manifest: embedder.manifest) == .allMiniLML6v2 else { return nil }
            return (embedder as? BERTEmbedder)?.tokenizer
        }
        let identifiers = Relevance.isIdentifierQuery(query)
        queryCompetent = englishTokenizers.map { tokenizer in
            !identifiers && (tokenizer.map { Self.readsAsEnglish(query, tokenizer: $0) } ?? true)
        }
    }

    /// Whether model `index` may speak for a note with this content: it must be competent on
    /// the query and on the note.
    func isCompetent(model index: Int, content: String) -> Bool {
        guard index < queryCompetent.count, queryCompetent[index] else { return false }
        guard let tokenizer = englishTokenizers[index] else { return true }
        let text = String(content.prefix(2000))
        return Self.verdicts.value(for: text) { Self.readsAsEnglish(text, tokenizer: tokenizer) }
    }

    /// The English test's verdict by text, for the life of the process: a note's text gives the
    /// same verdict every time, and a long-lived process (`trove mcp`, `index --watch`) would
    /// otherwise run WordPiece over every candidate of every query again (most of a warm hybrid
    /// search's time). Keys are the texts' hashes, so the cache holds 9 bytes per note seen.
    private static let verdicts = VerdictCache()

    /// The English test above.
    static func readsAsEnglish(_ text: String, tokenizer: WordPieceTokenizer) -> Bool {
        let words = Snippet.wordRanges(text).map { text[$0] }.filter {
            $0.contains(where: \.isLetter)
        }
        guard words.count >= shortText else {
            return !text.unicodeScalars.contains { scalar in
                (scalar.properties.isAlphabetic && scalar.value > 0x7F) || scalar == "¿"
                    || scalar == "¡"
            }
        }
        let known = words.filter { word in
            word.unicodeScalars.allSatisfy { $0.value <= 0x7F }
                && tokenizer.wordPieceIDs(String(word)).count == 1
        }.count
        return Double(known) / Double(words.count) >= knownWordShare
    }
}

/// Booleans remembered by the hash of a string.
// @unchecked Sendable: `verdicts` is only read and written while holding `lock`.
private final class VerdictCache: @unchecked Sendable {
    private let lock = NSLock()
    private var verdicts: [Int: Bool] = [:]

    func value(for text: String, compute: () -> Bool) -> Bool {
        let key = text.hashValue
        lock.lock()
        let known = verdicts[key]
        lock.unlock()
        if let known { return known }
        let verdict = compute()
        lock.lock()
        verdicts[key] = verdict
        lock.unlock()
        return verdict
    }
}
