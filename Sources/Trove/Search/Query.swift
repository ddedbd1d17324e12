import Foundation
import TroveSQLite
import TroveText

/// One query over a document collection, as a value: a filter, optional ranking legs (vector and
/// text) with fusion, an order, paging (limit/offset or a keyset cursor) and a projection.
///
/// Filters apply before ranking, so a filtered top-k returns k documents whenever k match.
///
/// ```swift
/// // Filter, order, page:
/// let page = Query(Field("category") == "c7" && Field("year") >= 2020)
///     .sorted(by: .descending("score")).limit(20)
/// let docs = try await items.fetch(page)
///
/// // Hybrid search restricted by a filter, fused with reciprocal rank fusion:
/// let search = Query(Field("year") >= 2020)
///     .nearest(to: queryVector, in: "embedding")
///     .matching(.typed("dentist appointment"))
///     .limit(10)
/// let hits = try await items.search(search)
/// ```
public struct Query: Hashable, Sendable {
    /// Which documents take part.
    public var filter: Filter
    /// The vector legs: the k nearest documents by one vector field each.
    public var vectorLegs: [VectorLeg]
    /// The text leg: BM25 over the collection's full-text fields.
    public var textLeg: TextLeg?
    /// The geo leg: nearest first by great-circle distance from a point.
    public var geoLeg: GeoLeg?
    /// How ranked legs combine.
    public var fusion: FusionMethod
    /// Maximal marginal relevance (Carbonell & Goldstein 1998) over the fused results: λ in
    /// 0...1 trades relevance against similarity to what is already picked. Needs a vector leg.
    public var mmrLambda: Double?
    /// The order of unranked results; ties are always broken by id.
    public var order: [SortKey]
    /// The most documents returned (for ranked queries, the k of top-k; default 10 there).
    public var limit: Int?
    /// Documents skipped before the first returned.
    public var offset: Int
    /// Continue after the last document of a previous page (keyset paging: stable while rows are
    /// inserted and deleted). Only for unranked queries.
    public var cursor: Cursor?
    /// Only these fields are read and returned (nil: all).
    public var projection: [String]?
    /// Scan vector fields exactly even where they have an approximate (HNSW) index.
    public var exact: Bool
    /// The HNSW candidate list size for this query (nil: the field's own `efSearch`); larger is
    /// slower and finds more of the true neighbours.
    public var efSearch: Int?
    /// How hits show the matched words of the text leg (``Hit/snippet``); nil for none.
    public var snippet: SnippetStyle?
    /// "No good match": hits whose similarity in the first vector leg (cosine similarity for
    /// `.cosine`, −distance otherwise) is below this value are dropped, as are hits that leg did
    /// not find. Nil keeps everything.
    public var minimumScore: Double?

    /// The largest `limit` (and leg depth) a ranked query accepts.
    public static let maximumLimit = 100_000

    /// A query over the documents passing `filter`.
    public init(_ filter: Filter = .all) {
        self.filter = filter
        self.vectorLegs = []
        self.textLeg = nil
        self.geoLeg = nil
        self.fusion = .reciprocalRank()
        self.mmrLambda = nil
        self.order = []
        self.limit = nil
        self.offset = 0
        self.cursor = nil
        self.projection = nil
        self.exact = false
        self.efSearch = nil
        self.snippet = nil
        self.minimumScore = nil
    }

    /// Whether the query ranks (has a vector or text leg).
    public var isRanked: Bool { !vectorLegs.isEmpty || textLeg != nil || geoLeg != nil }

    // MARK: Builders

    /// Adds a condition (AND).
    public func filter(_ condition: Filter) -> Query { with { $0.filter = $0.filter && condition } }
    /// Ranks by nearness to `vector` in the vector field `field`.
    ///
    /// - Parameters:
    ///   - vector: the query vector, of the field's dimension.
    ///   - field: the vector field searched.
    ///   - weight: the leg's weight in fusion.
    ///   - k: how deep the leg goes (nil: the limit when it is the only leg, else
    ///     max(50, 4 × (limit + offset))).
    public func nearest(to vector: [Float], in field: String, weight: Double = 1, k: Int? = nil)
        -> Query
    {
        with { $0.vectorLegs.append(VectorLeg(field: field, vector: vector, weight: weight, k: k)) }
    }
    /// Ranks by BM25 over the full-text fields (or a subset of them).
    ///
    /// - Parameters:
    ///   - text: typed text (``TextQuery/typed(_:)``, never a syntax error) or FTS5 syntax.
    ///   - fields: the full-text fields searched (nil: all of them).
    ///   - weight: the leg's weight in fusion.
    ///   - k: how deep the leg goes (nil: as for ``nearest(to:in:weight:k:)``).
    ///   - minimumCoverage: when fused with other legs, a hit of typed text votes only when it
    ///     matches at least this fraction (0...1) of the query's words after stop words; nil is
    ///     2/3 (Documentation/PARAMETERS.md, "Fusion"), 0 is plain fusion. Raw FTS5 text always votes.
    ///     The gate holds whether the in-memory BM25 leg or FTS5 answers (weighted fields, a
    ///     subset of the fields, reads inside a write transaction).
    public func matching(
        _ text: TextQuery, in fields: [String]? = nil, weight: Double = 1, k: Int? = nil,
        minimumCoverage: Double? = nil
    ) -> Query {
        with {
            $0.textLeg = TextLeg(
                query: text, fields: fields, weight: weight, k: k, minimumCoverage: minimumCoverage)
        }
    }
    /// Ranks by great-circle distance from `point` in the point field `field`, nearest first
    /// (exact), optionally only within `kilometres`. Fuses with vector and text legs by rank.
    ///
    /// ```swift
    /// // "quiet cafe with wifi" near here:
    /// let query = Query().matching(.typed("quiet cafe wifi")).near(here, in: "location").limit(5)
    /// ```
    public func near(
        _ point: GeoPoint, in field: String, within kilometres: Double? = nil, weight: Double = 1
    ) -> Query {
        with {
            $0.geoLeg = GeoLeg(
                field: field, point: point, maximumKilometres: kilometres, weight: weight)
        }
    }
    /// How legs are fused.
    public func fused(_ method: FusionMethod) -> Query { with { $0.fusion = method } }
    /// MMR rerank of the fused results.
    public func diversified(lambda: Double) -> Query { with { $0.mmrLambda = lambda } }
    /// Orders unranked results.
    public func sorted(by keys: SortKey...) -> Query { with { $0.order = keys } }
    /// At most `n` results.
    public func limit(_ n: Int) -> Query { with { $0.limit = n } }
    /// Skips `n` results.
    public func offset(_ n: Int) -> Query { with { $0.offset = n } }
    /// The page after `cursor`.
    public func after(_ cursor: Cursor?) -> Query { with { $0.cursor = cursor } }
    /// Reads only these fields.
    public func select(_ fields: [String]) -> Query { with { $0.projection = fields } }
    /// Scans vector fields exactly, even where they have an HNSW index (the true neighbours, at
    /// O(n) cost).
    public func exact(_ exact: Bool = true) -> Query { with { $0.exact = exact } }
    /// Sets the HNSW candidate list size for this query (1...100000).
    public func efSearch(_ n: Int) -> Query { with { $0.efSearch = n } }
    /// Marks the text leg's matched words in each hit's ``Hit/snippet``.
    public func snippets(_ style: SnippetStyle = SnippetStyle()) -> Query {
        with { $0.snippet = style }
    }
    /// Drops hits less similar than `score` in the first vector leg (see ``minimumScore``).
    public func minimumScore(_ score: Double) -> Query { with { $0.minimumScore = score } }

    private func with(_ change: (inout Query) -> Void) -> Query {
        var copy = self
        change(&copy)
        return copy
    }

    /// Identifies the query's shape for cursors: a cursor from another filter or order is refused.
    var cursorFingerprint: Int {
        var hasher = Hasher()
        hasher.combine(filter)
        hasher.combine(order)
        return hasher.finalize()
    }
}

/// A vector ranking leg.
public struct VectorLeg: Hashable, Sendable {
    /// The vector field searched.
    public var field: String
    /// The query vector.
    public var vector: [Float]
    /// The leg's weight in fusion.
    public var weight: Double
    /// How deep the leg goes (nil: the query's default depth).
    public var k: Int? = nil
}

/// A text ranking leg.
public struct TextLeg: Hashable, Sendable {
    /// The text: typed (safe) or FTS5 syntax.
    public var query: TextQuery
    /// The full-text fields searched (nil: all of the collection's).
    public var fields: [String]?
    /// The leg's weight in fusion.
    public var weight: Double
    /// How deep the leg goes (nil: the query's default depth).
    public var k: Int? = nil
    /// In fused queries, the fraction of a typed query's words a hit must match to vote (nil: 2/3).
    public var minimumCoverage: Double? = nil
}

/// A geo ranking leg: nearest first from a point.
public struct GeoLeg: Hashable, Sendable {
    /// The point field.
    public var field: String
    /// Where distances are measured from.
    public var point: GeoPoint
    /// Only documents at most this far (nil: any distance).
    public var maximumKilometres: Double?
    /// The leg's weight in fusion.
    public var weight: Double
}

/// How a query fuses its ranked legs.
public enum FusionMethod: Hashable, Sendable {
    /// Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): Σ weight / (k + rank).
    case reciprocalRank(k: Double = 60)
    /// The weighted sum of each leg's z-normalised scores (mean 0, deviation 1 over that leg's
    /// candidates); a document missing from a leg gets that leg's lowest score.
    case normalizedScores
}

/// One key of an ordering.
public struct SortKey: Hashable, Sendable {
    /// The field or JSON path.
    public var field: Field
    /// Ascending (default) or descending.
    public var descending: Bool
    /// Whether nulls come first; by default first when ascending and last when descending
    /// (SQLite's convention).
    public var nullsFirst: Bool

    public init(_ field: Field, descending: Bool = false, nullsFirst: Bool? = nil) {
        self.field = field
        self.descending = descending
        self.nullsFirst = nullsFirst ?? !descending
    }

    public static func ascending(_ name: String, nullsFirst: Bool = true) -> SortKey {
        SortKey(Field(name), descending: false, nullsFirst: nullsFirst)
    }
    public static func descending(_ name: String, nullsFirst: Bool = false) -> SortKey {
        SortKey(Field(name), descending: true, nullsFirst: nullsFirst)
    }
}

/// Where a page ended: pass it to ``Query/after(_:)`` for the next page.
public struct Cursor: Hashable, Sendable {
    /// The sort-key values of the last document (its id is kept apart).
    let keys: [SQLValue]
    let id: DocumentID
    let fingerprint: Int
}

/// One page of an unranked query.
public struct Page: Sendable {
    /// The documents, in order.
    public var documents: [Document]
    /// The cursor for the next page, nil when this page is the last.
    public var next: Cursor?
}

/// An aggregate value to compute.
///
/// ```swift
/// let rows = try await items.aggregate([.count(), .average("score")], groupBy: [Field("category")])
/// ```
public struct Aggregate: Hashable, Sendable {
    public enum Function: String, Hashable, Sendable {
        case count, sum, avg, min, max, countDistinct
    }
    /// What is computed.
    public var function: Function
    /// The field (nil for count of documents).
    public var field: Field?
    /// The name of the result in ``AggregateRow/values``.
    public var name: String

    public static func count(as name: String = "count") -> Aggregate {
        Aggregate(function: .count, field: nil, name: name)
    }
    public static func count(_ field: String, as name: String? = nil) -> Aggregate {
        Aggregate(function: .count, field: Field(field), name: name ?? "count_\(field)")
    }
    public static func sum(_ field: String, as name: String? = nil) -> Aggregate {
        Aggregate(function: .sum, field: Field(field), name: name ?? "sum_\(field)")
    }
    public static func average(_ field: String, as name: String? = nil) -> Aggregate {
        Aggregate(function: .avg, field: Field(field), name: name ?? "avg_\(field)")
    }
    public static func minimum(_ field: String, as name: String? = nil) -> Aggregate {
        Aggregate(function: .min, field: Field(field), name: name ?? "min_\(field)")
    }
    public static func maximum(_ field: String, as name: String? = nil) -> Aggregate {
        Aggregate(function: .max, field: Field(field), name: name ?? "max_\(field)")
    }
    public static func countDistinct(_ field: String, as name: String? = nil) -> Aggregate {
        Aggregate(function: .countDistinct, field: Field(field), name: name ?? "distinct_\(field)")
    }
}

/// One group of an aggregate query.
public struct AggregateRow: Hashable, Sendable {
    /// The group's key values, by field description (empty without group by).
    public var group: [String: Value]
    /// The aggregate values by name.
    public var values: [String: Value]
}
