import Foundation
import TroveEmbeddings
import TroveSQLite
import TroveVectors

/// A handle to one named collection in a ``Database``: records with text, source, JSON metadata
/// and a vector, searchable by vector, by words (BM25) and by both (hybrid).
///
/// Handles are cheap values; all work runs on the database's actor.
///
/// ```swift
/// let notes = try await database.collection("notes", dimension: 3)
/// try await notes.insert(VectorEntry(id: 1, content: "Buy oat milk", source: "today", vector: [1, 0, 0]))
/// let nearest = try await notes.search(vector: [0.9, 0.1, 0], topK: 1)
/// let words = try await notes.searchText(.typed("oat milk"))
/// ```
public struct Collection: Sendable {
    /// The database holding this collection.
    public let database: Database
    /// The collection's name (also its table's name).
    public let name: String
    /// The frozen configuration.
    public let configuration: CollectionConfiguration
    /// The embedder used by the text-in API, when one was attached.
    public let embedder: (any Embedder)?

    /// The largest `topK` a search accepts.
    public static var maxTopK: Int { CollectionEngine.maxTopK }

    /// Runs a write on the database's actor (its in-memory indexes are locked only to apply
    /// what it committed).
    private func write<T: Sendable>(_ body: @Sendable (CollectionEngine) throws -> T) async throws -> T {
        try await database.withWritingEngine(name, body)
    }

    /// Runs a read or a search on a reader connection, beside writes (see
    /// ``Database/withReadingEngine(_:_:)``).
    private func read<T: Sendable>(_ body: @escaping @Sendable (CollectionEngine) throws -> T) async throws -> T {
        try await database.withReadingEngine(name, body)
    }

    // MARK: Writing

    /// Inserts one row with the entry's id.
    ///
    /// - Throws: ``TroveError/duplicateID(_:)``, ``TroveError/dimensionMismatch(expected:actual:)``,
    ///   ``TroveError/invalidVector(reason:)``, ``TroveError/metadataTooLarge(limit:actual:)``,
    ///   ``TroveError/invalidMetadata(reason:)``. Nothing is written when it throws.
    public func insert(_ entry: VectorEntry) async throws {
        try await insertBatch([entry])
    }

    /// Inserts one row and lets SQLite choose its id.
    ///
    /// - Returns: the new row's id.
    @discardableResult
    public func insert(content: String, source: String = "", metadata: String? = nil, vector: [Float]) async throws -> Int64 {
        let row = PendingRow(id: nil, content: content, source: source, metadata: metadata, vector: vector)
        return try await write { try $0.write([row], mode: .insert)[0] }
    }

    /// Inserts rows in one transaction, all or nothing: every entry is validated before the first
    /// write, and a failure part-way (a duplicate id, a full disk) leaves the collection unchanged.
    ///
    /// - Complexity: O(n) statements through one cached statement; the text index and change log
    ///   are updated by triggers in the same transaction.
    public func insertBatch(_ entries: [VectorEntry]) async throws {
        let rows = entries.map(PendingRow.init)
        try await write { _ = try $0.write(rows, mode: .insert) }
    }

    /// Replaces an existing row's content, source, metadata and vector.
    ///
    /// - Throws: ``TroveError/rowNotFound(id:)`` when no row has the entry's id.
    public func update(_ entry: VectorEntry) async throws {
        let row = PendingRow(entry)
        try await write { _ = try $0.write([row], mode: .update) }
    }

    /// Inserts the row, or replaces the row with the same id.
    public func upsert(_ entry: VectorEntry) async throws {
        try await upsertBatch([entry])
    }

    /// Inserts or replaces rows in one all-or-nothing transaction.
    public func upsertBatch(_ entries: [VectorEntry]) async throws {
        let rows = entries.map(PendingRow.init)
        try await write { _ = try $0.write(rows, mode: .upsert) }
    }

    /// Deletes the row with this id. Returns whether it existed.
    @discardableResult
    public func delete(id: Int64) async throws -> Bool {
        try await write { try $0.delete(id: id) }
    }

    /// Deletes every row with this source (for example to re-index one file). Returns how many.
    @discardableResult
    public func delete(source: String) async throws -> Int {
        try await write { try $0.delete(source: source) }
    }

    /// Deletes every row. Returns how many.
    @discardableResult
    public func deleteAll() async throws -> Int {
        try await write { try $0.deleteAll() }
    }

    // MARK: Reading

    /// The row with this id, with its vector (empty when the row has none), or nil.
    public func fetch(id: Int64) async throws -> VectorEntry? {
        try await read { try $0.fetch(id: id) }
    }

    /// Whether a row has this id.
    public func contains(id: Int64) async throws -> Bool {
        try await read { try $0.contains(id: id) }
    }

    /// The number of rows.
    public func count() async throws -> Int {
        try await read { try $0.count(source: nil) }
    }

    /// The number of rows with this source.
    public func count(source: String) async throws -> Int {
        try await read { try $0.count(source: source) }
    }

    /// Every source with its row count, sorted by source.
    public func sources() async throws -> [SourceSummary] {
        try await read { try $0.sources() }
    }

    // MARK: Searching
    //
    // One way to write each search: ``search(_:)`` (a ``Query``) is the general form; the methods below
    // are conveniences for the common cases, each taking one ``SearchFilter`` (empty by default)
    // and `topK` defaulting to 10. The older overloads (filters as `source:where:bindings:`,
    // FTS5 strings, `[Double]` vectors) are deprecated in Collection+DeprecatedSearch.swift.

    /// k-nearest-neighbour search, nearest first: exact on a flat collection; an HNSW collection
    /// walks its graph (``searchExplained(vector:topK:filter:exact:efSearch:)`` with `exact: true`
    /// scans exactly and reports the plan).
    ///
    /// Filters are applied before ranking: when at least `topK` rows pass `filter`, exactly
    /// `topK` of them come back.
    ///
    /// ```swift
    /// let hits = try await notes.search(vector: q, topK: 10, filter: SearchFilter(
    ///     source: "inbox", sql: "json_extract(metadata, '$.year') >= ?", bindings: [2024]))
    /// ```
    /// - Parameters:
    ///   - vector: the query; same dimension as the collection, finite components.
    ///   - topK: how many hits, 1 through ``maxTopK``.
    ///   - filter: which rows may compete (source, typed metadata predicates, a SQL fragment
    ///     over id, content, source, metadata, created_at, updated_at).
    /// - Throws: ``TroveError/dimensionMismatch(expected:actual:)``, ``TroveError/invalidVector(reason:)``,
    ///   ``TroveError/invalidTopK(_:maximum:)``, ``TroveError/invalidFilter(sql:reason:)``.
    /// - Complexity: O(n × dimension) for n candidate rows, plus catching up with changes made
    ///   since the previous query.
    public func search(vector: [Float], topK: Int = 10, filter: SearchFilter = SearchFilter()) async throws -> [SearchResult] {
        try await read { try $0.searchVector(vector, topK: topK, filter: filter) }
    }

    /// Full-text search ranked by BM25, best first, with the same filters as vector search.
    ///
    /// ```swift
    /// try await notes.searchText("\"oat milk\" OR groceries")       // a string literal is FTS5 syntax
    /// try await notes.searchText(.typed("oat milk?"), snippet: SnippetStyle())
    /// ```
    /// - Parameters:
    ///   - query: ``TextQuery/fts5(_:)`` (a string literal) or ``TextQuery/typed(_:)``.
    ///   - topK: how many hits, 1 through ``maxTopK``.
    ///   - filter: which rows may compete, applied before ranking.
    ///   - snippet: how to mark the matched words in ``SearchResult/snippet``; nil for none.
    /// - Throws: ``TroveError/invalidTextQuery(query:reason:)`` for malformed FTS5 syntax,
    ///   ``TroveError/lexicalSearchDisabled(collection:)``, ``TroveError/invalidTopK(_:maximum:)``,
    ///   ``TroveError/invalidFilter(sql:reason:)``.
    public func searchText(
        _ query: TextQuery, topK: Int = 10, filter: SearchFilter = SearchFilter(), snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await read { try $0.searchText(query, topK: topK, filter: filter, snippet: snippet) }
    }

    /// Hybrid search: the vector and text legs, each filtered before ranking, fused with
    /// reciprocal rank fusion. Each hit reports its fused score and its rank in each leg.
    ///
    /// ```swift
    /// let hits = try await notes.searchHybrid(text: .typed("dentist"), vector: q, topK: 5,
    ///                                         fusion: Fusion(k: 60, textWeight: 0.5))
    /// ```
    /// - Throws: any error of ``search(vector:topK:filter:)`` or
    ///   ``searchText(_:topK:filter:snippet:)``.
    public func searchHybrid(
        text: TextQuery, vector: [Float], topK: Int = 10, filter: SearchFilter = SearchFilter(),
        fusion: Fusion = Fusion(), snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await read {
            try $0.searchHybrid(text: text, vector: vector, topK: topK, filter: filter, fusion: fusion, snippet: snippet)
        }
    }
}

/// Another name for Trove's ``Collection``, for files that also use the standard library's
/// `Collection` protocol: a type named `Collection` in an imported module shadows `Swift.Collection`,
/// so write `Swift.Collection` for the protocol there, or `TroveCollection` for this type.
public typealias TroveCollection = Collection

extension PendingRow {
    init(_ entry: VectorEntry) {
        self.init(id: entry.id, content: entry.content, source: entry.source, metadata: entry.metadata, vector: entry.vector)
    }
}
