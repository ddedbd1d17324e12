/// One hit of ``VectorStore/search(vector:topK:source:where:bindings:)`` or
/// ``VectorStore/searchText(_:topK:source:where:bindings:)``, best first.
///
/// ```swift
/// for hit in try await store.search(vector: query, topK: 5) {
///     print(hit.id, hit.distance, hit.content)
///     let info = try hit.decodeMetadata(ChunkInfo.self)
/// }
/// ```
public struct SearchResult: Sendable, Equatable, Identifiable, Codable {
    /// The row's id.
    public let id: Int
    /// The row's text.
    public let content: String
    /// The row's source label.
    public let source: String
    /// The row's metadata string, nil when it has none.
    public let metadata: String?
    /// Lower is better. Vector search: the distance to the query (cosine `0...2`, or Euclidean).
    /// Text search: the BM25 score as SQLite's FTS5 reports it (negative; not comparable with
    /// vector distances).
    public let distance: Double

    /// The metadata decoded from JSON, or nil when the row has none.
    ///
    /// - Throws: `DecodingError` when the metadata is not JSON of that shape.
    public func decodeMetadata<T: Decodable>(_ type: T.Type) throws -> T? {
        try metadata.map { try MetadataJSON.decode(type, from: $0) }
    }
}

/// One hit of ``VectorStore/searchHybrid(text:vector:topK:source:where:bindings:)``: vector and
/// text results fused with reciprocal rank fusion (Cormack, Clarke & Büttcher 2009).
public struct HybridSearchResult: Sendable, Equatable, Identifiable, Codable {
    /// The row's id.
    public let id: Int
    /// The row's text.
    public let content: String
    /// The row's source label.
    public let source: String
    /// The row's metadata string, nil when it has none.
    public let metadata: String?
    /// Σ 1 / (60 + rank) over the lists the row is in: higher is better.
    public let score: Double
    /// The row's 1-based rank in the vector results, nil when it is not among them.
    public let vectorRank: Int?
    /// The row's 1-based rank in the text results, nil when it is not among them.
    public let textRank: Int?
}
