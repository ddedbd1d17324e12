/// A ranked result of any collection: the record found (a ``Document``, a search collection's
/// ``VectorEntry``, or a model), its fused score, and how each leg of the query saw it.
///
/// Documents, search collections and models return the same type, so code that shows or
/// re-ranks results is written once.
///
/// ```swift
/// for hit in try await notes.search("dentist", limit: 5) {
///     print(hit.id, hit.score, hit.vectorRanks, hit.textRank ?? 0, hit.record.content)
/// }
/// ```
public struct Hit<Record: Sendable>: Sendable {
    /// What was found: the document (projected when the query selects fields), the entry, or
    /// the model.
    public var record: Record
    /// The fused score, bigger is better (a single leg's own score when there is one leg: the
    /// metric's similarity for a vector leg, minus BM25 for a text leg).
    public var score: Double
    /// 1-based rank in each vector leg (the query's legs in order), nil where the leg missed it.
    public var vectorRanks: [Int?]
    /// Distance to each vector leg's query vector (smaller is closer: cosine `1 - cos`, L2
    /// Euclidean distance, dot `-(a·b)`), nil where the leg missed it.
    public var distances: [Double?]
    /// 1-based rank in the text leg, nil when absent from it.
    public var textRank: Int?
    /// The text leg's BM25 score (smaller is better, as SQLite reports it), nil when absent.
    public var bm25: Double?
    /// 1-based rank in the geo leg, nil when absent from it.
    public var geoRank: Int?
    /// Great-circle distance in kilometres from the geo leg's point, nil when absent.
    public var kilometres: Double?
    /// The text with the text leg's matched words marked, when the query asks for snippets
    /// (``Query/snippets(_:)``) and the text leg found the record.
    public var snippet: String?

    /// A hit; the collections create these, tests and adapters may too.
    public init(
        record: Record, score: Double, vectorRanks: [Int?] = [], distances: [Double?] = [],
        textRank: Int? = nil, bm25: Double? = nil, geoRank: Int? = nil, kilometres: Double? = nil,
        snippet: String? = nil
    ) {
        self.record = record
        self.score = score
        self.vectorRanks = vectorRanks
        self.distances = distances
        self.textRank = textRank
        self.bm25 = bm25
        self.geoRank = geoRank
        self.kilometres = kilometres
        self.snippet = snippet
    }

    /// The first vector leg's distance (the only leg of most queries), nil when it missed the
    /// record or there is no vector leg.
    public var distance: Double? { distances.first ?? nil }

    /// The first vector leg's rank (the only leg of most queries), nil when it missed the
    /// record or there is no vector leg.
    public var vectorRank: Int? { vectorRanks.first ?? nil }

    /// The same ranking with another record (a typed facade's view of the row).
    func map<Other>(_ transform: (Record) throws -> Other) rethrows -> Hit<Other> {
        Hit<Other>(
            record: try transform(record), score: score, vectorRanks: vectorRanks,
            distances: distances, textRank: textRank, bm25: bm25, geoRank: geoRank,
            kilometres: kilometres, snippet: snippet)
    }
}

extension Hit: Equatable where Record: Equatable {}
extension Hit: Hashable where Record: Hashable {}

extension Hit: Identifiable where Record: Identifiable {
    /// The record's id, so hits are rows of a SwiftUI `List` as they are.
    public var id: Record.ID { record.id }
}
