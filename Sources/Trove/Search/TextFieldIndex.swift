import Foundation
import TroveSQLite
import TroveText

/// The in-memory BM25 leg of a document collection's full-text fields: a `BM25Index`
/// (TroveText) that follows the change log like the vector indexes, and answers typed text
/// queries without asking FTS5 to rank every row that shares a word (MaxScore skips the long
/// lists of common words; BENCHMARKS.md, "Text search").
///
/// It ranks exactly as the FTS5 leg does (`bm25()` with k1 1.2, b 0.75, FTS5's idf, every row
/// of the table counted): so it exists only where that equality holds, that is when TroveText
/// reproduces the collection's tokenizer and every field's BM25 weight is 1 (FTS5 then sums
/// term frequencies and lengths over the columns, as TroveText's `BM25Index.add(id:fields:)` does).
/// Raw FTS5 syntax, a leg restricted to some of the fields, snippets, and reads inside a write
/// transaction (whose uncommitted rows the shared index must not see) stay with FTS5.
///
/// Memory: about 8 bytes per posting plus 4 bytes per indexed term occurrence (see BM25Index).
final class TextFieldIndex: DerivedIndex {
    let definition: FullTextDefinition
    let tokenizer: Tokenizer
    private(set) var index: BM25Index?

    /// The in-memory leg for `definition`, or nil where it would not rank as FTS5 does.
    init?(_ definition: FullTextDefinition) {
        guard definition.weights.allSatisfy({ $0 == 1 }),
            let configuration = TokenizerConfiguration(fts5TokenizeArgument: definition.tokenizer)
        else { return nil }
        self.definition = definition
        self.tokenizer = Tokenizer(configuration)
    }

    var name: String { "bm25(\(definition.fields.joined(separator: ", ")))" }
    var columns: [String] { definition.fields.map { "\"\($0)\"" } }
    var isLoaded: Bool { index != nil }
    var count: Int { index?.count ?? 0 }

    func reset() { index = BM25Index(tokenizer: tokenizer) }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        guard let statement else {
            index!.remove(id: rid)
            return
        }
        // Every row is indexed, empty or not, since FTS5 counts every row in its idf and mean length.
        index!.add(
            id: rid,
            fields: definition.fields.indices.lazy.map {
                statement.string(at: firstColumn + $0) ?? ""
            })
    }

    /// Whether this index answers `leg`: a typed query over all the full-text fields.
    func answers(_ leg: TextLeg) -> Bool {
        guard leg.query.kind == .typed else { return false }
        guard let fields = leg.fields, !fields.isEmpty else { return true }
        return Set(fields) == Set(definition.fields)
    }

    /// The best `k` rows for a typed query among `candidates`, as (row id, FTS5-style bm25 = −score,
    /// the share of the query's words the row matches).
    func search(_ text: String, k: Int, candidates: DocumentStore.Candidates) -> [(
        rid: Int64, bm25: Double, coverage: Double
    )] {
        guard let index else { return [] }
        let typed = TypedQuery(text, tokenizer: tokenizer)
        guard !typed.isEmpty else { return [] }
        let allowed = candidates.rids.map(Set.init)
        // k more than the rows left out: the best k of the rest are among them.
        let hits = index.search(typed, topK: k + candidates.excluded.count, allowedIDs: allowed)
        return hits.lazy.filter { candidates.allows($0.id) }.prefix(k).map {
            (rid: $0.id, bm25: -$0.score, coverage: $0.coverage)
        }
    }

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard isLoaded else { return [] }
        let stored = try connection.scalar("SELECT count(*) FROM \(layout.table)")?.int64Value ?? 0
        return Int(stored) == count
            ? [] : ["\(name): \(count) rows in memory, \(stored) in the table"]
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {}
}
