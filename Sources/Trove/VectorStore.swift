import Foundation
import TroveSQLite
import TroveVectors

/// A single-collection vector store with the capabilities of SQLiteVecKit's `VectorStore`, one
/// for one, so its users can switch: the same initialiser settings, entries, CRUD, raw SQL, and
/// vector/text/hybrid searches — with filters applied before ranking (a filtered top-k returns k
/// matches whenever k exist), text and vector indexes that follow raw-SQL writes, and topK up to
/// ``maxTopK``.
///
/// Its search methods keep SQLiteVecKit's shape on purpose: filters as `source:where:bindings:`,
/// text as an FTS5 string, `[Double]` overloads, `topK` 5 by default. Trove's own forms (a
/// ``SearchFilter``, ``TextQuery/typed(_:)``, snippets, ``Query``) are on ``collection``.
///
/// ```swift
/// let store = try VectorStore(path: "chunks.sqlite", dimension: 384)
/// try await store.insert(id: 1, content: "Buy oat milk", source: "today.md", vector: embedding)
/// let hits = try await store.search(vector: embedding, topK: 5, source: "today.md")
/// ```
public final class VectorStore: Sendable {
    /// The largest topK accepted.
    public static var maxTopK: Int { Collection.maxTopK }
    /// The default per-row metadata cap: 16 KB.
    public static let defaultMetadataByteLimit = CollectionConfiguration.defaultMetadataByteLimit

    /// The underlying database (for other collections or raw SQL).
    public let database: Database
    /// The store's collection.
    public let collection: Collection

    /// Opens or creates the store.
    ///
    /// - Parameters:
    ///   - path: the SQLite file, created when missing; nil for a private in-memory store.
    ///   - dimension: vector length, frozen in the file.
    ///   - metric: `.cosine` (default), `.l2` or `.dot`; frozen.
    ///   - tableName: the collection's table, `[A-Za-z_][A-Za-z0-9_]*`.
    ///   - metadataByteLimit: largest metadata JSON per row, in UTF-8 bytes; frozen.
    ///   - lexicalSearch: keep the FTS5 index for text and hybrid search; frozen.
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` when the file holds the table
    ///   with another configuration, ``TroveError/invalidName(_:reason:)``,
    ///   ``TroveError/invalidDimension(_:)``, or `SQLiteError` when the file can't be opened.
    public init(
        path: String?, dimension: Int, metric: DistanceMetric = .cosine, tableName: String = "chunks",
        metadataByteLimit: Int = VectorStore.defaultMetadataByteLimit, lexicalSearch: Bool = true
    ) throws {
        let configuration = CollectionConfiguration(
            dimension: dimension, metric: metric, lexicalSearch: lexicalSearch, metadataByteLimit: metadataByteLimit)
        try CollectionSchema.validate(name: tableName)
        try configuration.validate()
        database = try Database(
            path.map { .file($0) } ?? .inMemory, options: .init(),
            preparing: [(tableName, configuration)])
        collection = Collection(database: database, name: tableName, configuration: configuration, embedder: nil)
    }

    /// Opens or creates the store at a file URL.
    public convenience init(
        url: URL, dimension: Int, metric: DistanceMetric = .cosine, tableName: String = "chunks",
        metadataByteLimit: Int = VectorStore.defaultMetadataByteLimit, lexicalSearch: Bool = true
    ) throws {
        try self.init(path: url.path, dimension: dimension, metric: metric, tableName: tableName,
                      metadataByteLimit: metadataByteLimit, lexicalSearch: lexicalSearch)
    }

    /// The frozen vector dimension.
    public var dimension: Int { collection.configuration.dimension }
    /// The frozen metric.
    public var metric: DistanceMetric { collection.configuration.metric }
    /// The collection's table name.
    public var tableName: String { collection.name }

    // MARK: Insert

    /// Inserts one entry; throws ``TroveError/duplicateID(_:)`` if its id exists.
    public func insert(_ entry: VectorEntry) async throws { try await collection.insert(entry) }

    /// Inserts one row with the given id.
    public func insert(id: Int64, content: String, source: String, metadata: String? = nil, vector: [Float]) async throws {
        try await collection.insert(VectorEntry(id: id, content: content, source: source, metadata: metadata, vector: vector))
    }

    /// `[Double]` variant: the vector is converted to Float.
    @_disfavoredOverload
    public func insert(id: Int64, content: String, source: String, metadata: String? = nil, vector: [Double]) async throws {
        try await insert(id: id, content: content, source: source, metadata: metadata, vector: vector.map(Float.init))
    }

    /// Inserts one row and returns the id SQLite assigned.
    @discardableResult
    public func insert(content: String, source: String, metadata: String? = nil, vector: [Float]) async throws -> Int64 {
        try await collection.insert(content: content, source: source, metadata: metadata, vector: vector)
    }

    /// `[Double]` variant: the vector is converted to Float.
    @_disfavoredOverload @discardableResult
    public func insert(content: String, source: String, metadata: String? = nil, vector: [Double]) async throws -> Int64 {
        try await collection.insert(content: content, source: source, metadata: metadata, vector: vector.map(Float.init))
    }

    /// Inserts entries all-or-nothing in one transaction, validated before the first write.
    public func insertBatch(_ entries: [VectorEntry]) async throws { try await collection.insertBatch(entries) }

    // MARK: Mutations

    /// Replaces an existing row; throws ``TroveError/rowNotFound(id:)`` when it is missing.
    public func update(_ entry: VectorEntry) async throws { try await collection.update(entry) }
    /// Inserts or replaces a row.
    public func upsert(_ entry: VectorEntry) async throws { try await collection.upsert(entry) }
    /// Deletes a row (a missing id is a no-op that returns false).
    @discardableResult public func delete(id: Int64) async throws -> Bool { try await collection.delete(id: id) }
    /// Deletes every row with this source; returns how many.
    @discardableResult public func delete(source: String) async throws -> Int { try await collection.delete(source: source) }
    /// Deletes every row; returns how many.
    @discardableResult public func deleteAll() async throws -> Int { try await collection.deleteAll() }

    // MARK: Reads

    /// The row with its vector, or nil.
    public func fetch(id: Int64) async throws -> VectorEntry? { try await collection.fetch(id: id) }
    /// Whether a row has this id.
    public func contains(id: Int64) async throws -> Bool { try await collection.contains(id: id) }
    /// The number of rows.
    public func count() async throws -> Int { try await collection.count() }
    /// The number of rows with this source.
    public func count(source: String) async throws -> Int { try await collection.count(source: source) }

    // MARK: Search

    /// Exact k-nearest search with filters applied before ranking.
    public func search(
        vector: [Float], topK: Int = 5, source: String? = nil, where sql: String? = nil, bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try await collection.search(vector: vector, topK: topK, filter: SearchFilter(source: source, sql: sql, bindings: bindings))
    }

    /// `[Double]` variant: the query is converted to Float.
    @_disfavoredOverload
    public func search(
        vector: [Double], topK: Int = 5, source: String? = nil, where sql: String? = nil, bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try await search(vector: vector.map(Float.init), topK: topK, source: source, where: sql, bindings: bindings)
    }

    /// BM25 full-text search; the string is FTS5 syntax (malformed → ``TroveError/invalidTextQuery(query:reason:)``).
    public func searchText(
        _ query: String, topK: Int = 5, source: String? = nil, where sql: String? = nil, bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try await collection.searchText(.fts5(query), topK: topK, filter: SearchFilter(source: source, sql: sql, bindings: bindings))
    }

    /// Hybrid search fused with reciprocal rank fusion (k = 60 unless `fusion` says otherwise).
    public func searchHybrid(
        text: String, vector: [Float], topK: Int = 5, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], fusion: Fusion = Fusion()
    ) async throws -> [SearchResult] {
        try await collection.searchHybrid(text: .fts5(text), vector: vector, topK: topK,
                                          filter: SearchFilter(source: source, sql: sql, bindings: bindings), fusion: fusion)
    }

    /// `[Double]` variant: the query is converted to Float.
    @_disfavoredOverload
    public func searchHybrid(
        text: String, vector: [Double], topK: Int = 5, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], fusion: Fusion = Fusion()
    ) async throws -> [SearchResult] {
        try await searchHybrid(text: text, vector: vector.map(Float.init), topK: topK, source: source, where: sql,
                               bindings: bindings, fusion: fusion)
    }

    // MARK: Raw SQL

    /// Runs a row-returning SQL statement on the store's connection.
    public func query(_ sql: String, bindings: [SQLValue] = []) async throws -> [Row] {
        try await database.query(sql, bindings: bindings)
    }

    /// Runs a SQL statement on the store's connection; returns the number of rows changed.
    @discardableResult
    public func execute(_ sql: String, bindings: [SQLValue] = []) async throws -> Int {
        try await database.execute(sql, bindings: bindings)
    }
}
