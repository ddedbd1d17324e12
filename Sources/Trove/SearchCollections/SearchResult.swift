import Foundation

/// One hit of a search collection's search: a ``DocumentHit`` of its preset schema, with the row
/// as the entry it was written as.
///
/// ``score`` is always "bigger is better": the metric's similarity for vector search
/// (cosine similarity, dot product, or minus the L2 distance), minus BM25 for text search, and the
/// fused score for hybrid search. The per-leg fields say how each leg saw the row.
///
/// ```swift
/// for hit in try await notes.search("dentist", topK: 5) {
///     print(hit.id, hit.score, hit.vectorRank ?? 0, hit.textRank ?? 0, hit.content)
/// }
/// ```
public struct SearchResult: Hashable, Sendable, Identifiable {
    /// The row's id (of the collection's kind).
    public var id: DocumentID
    /// The stored text.
    public var content: String
    /// The stored source label.
    public var source: String
    /// The metadata JSON object as text, or nil.
    public var metadata: String?
    /// Bigger is better; see the type's discussion for what it means per search kind.
    public var score: Double
    /// Distance to the query vector (smaller is closer), when the vector leg saw this row:
    /// cosine `1 - cos`, L2 Euclidean distance, dot `-(a·b)`.
    public var distance: Double?
    /// FTS5's `bm25()` value (negative; more negative is better), when the text leg saw this row.
    public var bm25: Double?
    /// 1-based rank in the vector leg, nil when absent from it.
    public var vectorRank: Int?
    /// 1-based rank in the text leg, nil when absent from it.
    public var textRank: Int?
    /// A fragment of `content` around the matched words, when a snippet was requested.
    public var snippet: String?

    /// A result; the store creates these, tests and adapters may too.
    public init(
        id: DocumentID, content: String, source: String, metadata: String?, score: Double,
        distance: Double? = nil, bm25: Double? = nil, vectorRank: Int? = nil, textRank: Int? = nil,
        snippet: String? = nil
    ) {
        self.id = id
        self.content = content
        self.source = source
        self.metadata = metadata
        self.score = score
        self.distance = distance
        self.bm25 = bm25
        self.vectorRank = vectorRank
        self.textRank = textRank
        self.snippet = snippet
    }

    init(_ hit: DocumentStore.RankedHit, entry: VectorEntry) {
        self.init(
            id: entry.id, content: entry.content, source: entry.source, metadata: entry.metadata,
            score: hit.score,
            distance: hit.distances.first ?? nil, bm25: hit.bm25,
            vectorRank: hit.vectorRanks.first ?? nil,
            textRank: hit.textRank, snippet: hit.snippet)
    }

    /// Decodes the metadata JSON as `T`; nil when the row has no metadata.
    public func decodeMetadata<T: Decodable>(_ type: T.Type) throws -> T? {
        try metadata.map { try MetadataJSON.decode(type, from: $0) }
    }
}
