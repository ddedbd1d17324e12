import Foundation
import TroveSQLite
import TroveText

/// The fast text leg: an in-memory BM25 index (TroveText) that follows the collection's change
/// log exactly as the vector index does (DESIGN.md section 3), used for typed queries. FTS5 stays
/// the engine for raw FTS5 syntax and for snippets. Both score with FTS5's BM25 over the same
/// terms, so a typed query ranks the same through either; the in-memory leg answers in well under
/// a millisecond where FTS5 ranks every row that shares any word (BENCHMARKS.md, "Text search").
extension CollectionEngine {
    /// The tokenizer the collection's FTS5 table uses, when TroveText can reproduce it; `nil`
    /// for other FTS5 tokenizers (`ascii`, `trigram`, …), whose typed queries then go to FTS5.
    var textTokenizer: Tokenizer? {
        TokenizerConfiguration(fts5TokenizeArgument: configuration.tokenizer).map { Tokenizer($0) }
    }

    /// Brings ``textIndex`` up to date with the table: replays the change log past its watermark,
    /// or (re)builds it from the table when there is none yet or the log was pruned past it.
    ///
    /// - Returns: The index, or `nil` when the collection has no lexical search or a tokenizer
    ///   TroveText cannot reproduce.
    /// - Complexity: O(changed rows' text) per call; O(all text) on (re)build.
    func catchUpText() throws -> BM25Index? {
        guard configuration.lexicalSearch, let tokenizer = textTokenizer else { return nil }
        return try withLogState { maxSeq, floor in
            if textIndex == nil || textWatermark < floor || maxSeq < textWatermark {
                var fresh = BM25Index(tokenizer: tokenizer)
                let statement = try connection.prepare("SELECT id, content FROM \(schema.table)")
                try statement.forEachRow { row in fresh.add(id: row.int64(at: 0), text: row.string(at: 1) ?? "") }
                textIndex = fresh
            } else if maxSeq > textWatermark {
                let statement = try connection.cachedStatement(
                    """
                    SELECT l.id, t.id IS NOT NULL, t.content FROM (SELECT DISTINCT id FROM \(schema.log) WHERE seq > ?) AS l
                    LEFT JOIN \(schema.table) AS t ON t.id = l.id
                    """)
                try statement.forEachRow([.integer(textWatermark)]) { row in
                    let id = row.int64(at: 0)
                    if row.int64(at: 1) != 0 {
                        textIndex!.add(id: id, text: row.string(at: 2) ?? "")
                    } else {
                        textIndex!.remove(id: id)
                    }
                }
            }
            textWatermark = maxSeq
            return textIndex
        }
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
