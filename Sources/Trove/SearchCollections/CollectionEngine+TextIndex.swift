import Foundation
import TroveSQLite
import TroveText

/// The fast text leg: an in-memory BM25 index (TroveText; a ``TextFieldIndex`` over `content` in
/// the collection's ``PresetIndexState``) that follows the change log with the vector indexes
/// (DESIGN.md section 3), used for typed queries. FTS5 stays
/// the engine for raw FTS5 syntax and for snippets. Both score with FTS5's BM25 over the same
/// terms, so a typed query ranks the same through either; the in-memory leg answers in well under
/// a millisecond where FTS5 ranks every row that shares any word (BENCHMARKS.md, "Text search").
extension CollectionEngine {
    /// The tokenizer the collection's FTS5 table uses, when TroveText can reproduce it; `nil`
    /// for other FTS5 tokenizers (`ascii`, `trigram`, …), whose typed queries then go to FTS5.
    var textTokenizer: Tokenizer? {
        TokenizerConfiguration(fts5TokenizeArgument: configuration.tokenizer).map { Tokenizer($0) }
    }

    /// The parsed form of a typed query with this collection's tokenizer and English stop words.
    func typedQuery(_ text: String) -> TypedQuery? {
        textTokenizer.map { TypedQuery(text, tokenizer: $0) }
    }

    /// The FTS5 MATCH expression for a query: raw syntax as given; a typed query rendered by
    /// ``TypedQuery`` (stop words dropped, phrases kept), or by FTS5Pattern for tokenizers
    /// TroveText does not reproduce.
    func matchExpression(for query: TextQuery) -> String? {
        if query.kind == .typed, let typed = typedQuery(query.text) { return typed.fts5Expression }
        return query.matchExpression
    }

    /// Typed-query hits from the in-memory index, best first, as (id, FTS5-style bm25 = −score,
    /// coverage); `nil` when the query is not typed or the collection's tokenizer is not one
    /// TroveText reproduces (the caller then asks FTS5).
    func fastTextHits(_ query: TextQuery, k: Int, filter: SearchFilter) throws
        -> [(id: Int64, bm25: Double, coverage: Double)]?
    {
        guard query.kind == .typed, let typed = typedQuery(query.text), let index = try catchUpText() else { return nil }
        guard !typed.isEmpty else { return [] }
        let allowed = try candidates(filter).map(Set.init)
        return index.search(typed, topK: k, allowedIDs: allowed).map { (id: $0.id, bm25: -$0.score, coverage: $0.coverage) }
    }

    /// The text leg's hits that vote in hybrid fusion: for typed queries, those covering at least
    /// `fusion.minimumTextCoverage` of the query's words (RankFusion.confidentLexicalHits); raw
    /// FTS5 queries vote unfiltered (their author chose the operators).
    func votingTextHits(_ query: TextQuery, k: Int, filter: SearchFilter, fusion: Fusion) throws
        -> [(id: Int64, bm25: Double)]
    {
        guard let hits = try fastTextHits(query, k: k, filter: filter) else {
            return try textHits(query, k: k, filter: filter)
        }
        // Same rule and epsilon as RankFusion.confidentLexicalHits.
        return hits.filter { $0.coverage + 1e-9 >= fusion.minimumTextCoverage }.map { (id: $0.id, bm25: $0.bm25) }
    }
}
