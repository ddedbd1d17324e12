import Foundation
import Trove

/// A single-table vector store with SQLiteVecKit's API, kept by Trove's document engine.
///
/// ## Migrating from SQLiteVecKit
///
/// Change `import SQLiteVecStore` (the module of the SQLiteVecKit package) to
/// `import TroveVecKit`; code written against SQLiteVecKit's `VectorStore`, `VectorEntry`,
/// `SearchResult`, `HybridSearchResult`, `SQLValue`, `SQLRow` and `SQLiteError` compiles
/// unchanged. Files are not shared: a Trove file is re-ingested, not opened from a sqlite-vec one.
///
/// ```swift
/// import TroveVecKit
///
/// let store = try VectorStore(dbPath: path, dimension: 384)
/// try await store.insertBatch(entries)
/// let hits = try await store.search(vector: query, topK: 5, source: "biology_notes.txt")
/// let words = try await store.searchText("mitochondria", topK: 5)      // BM25 in `distance`
/// let both = try await store.searchHybrid(text: "mitochondria", vector: query, topK: 5)
/// ```
///
/// What differs, on purpose:
/// - `source:` and `where:` filter *before* ranking: a filtered top-k returns k rows whenever k
///   rows pass (SQLiteVecKit filters the vector search's top k afterwards). The fragment sees
///   `id`, `content`, `source`, `metadata` and `distance` (the row's distance, or its BM25 score
///   in text search), also as `c.content` and so on; in hybrid search it filters each list with
///   that list's `distance`.
/// - Writes made with raw SQL (``execute(_:bindings:)``) to the store's table reach its vector
///   and text indexes too.
/// - `topK` goes up to ``maxTopK`` (100,000), and there is no sqlite-vec to report a version of.
///
/// The table holds `id INTEGER PRIMARY KEY, content TEXT, source TEXT, metadata TEXT,
/// embedding BLOB` (float32) plus Trove's `_version`; query it freely with ``query(_:bindings:)``.
/// Trove's own forms (typed text queries, snippets, other filters) are on ``collection``.
///
/// Every method throws ``SQLiteError``.
public actor VectorStore {
    /// The default metadata limit: 16 KB per row.
    public static let defaultMetadataByteLimit = 16_384
    /// The largest `topK` a search accepts: the document engine's largest limit (100,000).
    public static let maxTopK = Query.maximumLimit
    /// Names the vector engine: Trove searches vectors itself, without sqlite-vec.
    public static var bundledVecVersion: String { "none (Trove's own vector search)" }

    /// The vector length, frozen in the file.
    public nonisolated let dimension: Int
    /// The metric, frozen in the file.
    public nonisolated let distanceMetric: DistanceMetric
    /// The table's name.
    public nonisolated let tableName: String
    /// The largest metadata string, in UTF-8 bytes, that this store writes.
    public nonisolated let metadataByteLimit: Int
    /// Whether the store keeps a full-text index (text and hybrid search), frozen in the file.
    public nonisolated let lexicalSearch: Bool
    /// The store's document collection, for Trove's own queries (`Query`, typed text, snippets).
    public nonisolated let collection: DocumentCollection
    /// The database (for other collections, transactions, live queries).
    public nonisolated var database: Database { collection.database }

    /// Opens the store at `dbPath`, creating the file and table when they are missing.
    ///
    /// ```swift
    /// let store = try VectorStore(dbPath: url.path, dimension: 384, distanceMetric: .cosine)
    /// ```
    ///
    /// - Parameters:
    ///   - dbPath: the file; `":memory:"` (or `""`) for a private in-memory store.
    ///   - dimension: the embedding model's output length; frozen.
    ///   - distanceMetric: `.cosine` (default) or `.l2`; frozen.
    ///   - tableName: `[A-Za-z_][A-Za-z0-9_]*`; several stores can share a file under other names.
    ///   - metadataByteLimit: the largest metadata string, in UTF-8 bytes, written.
    ///   - lexicalSearch: keep the full-text index for `searchText`/`searchHybrid`; frozen.
    /// - Throws: ``SQLiteError/invalidTableName(_:)``, ``SQLiteError/invalidDimension(_:)``,
    ///   ``SQLiteError/schemaMismatch(expected:found:)`` when the file holds the table with another
    ///   configuration (nothing is changed), ``SQLiteError/databaseOpenFailed(code:message:)``.
    public init(
        dbPath: String, dimension: Int = 512, distanceMetric: DistanceMetric = .cosine,
        tableName: String = "chunks", metadataByteLimit: Int = VectorStore.defaultMetadataByteLimit,
        lexicalSearch: Bool = true
    ) throws {
        guard StoreSchema.isValid(tableName: tableName) else {
            throw SQLiteError.invalidTableName(tableName)
        }
        guard dimension >= 1 else { throw SQLiteError.invalidDimension(dimension) }
        let schema = StoreSchema.documentSchema(
            dimension: dimension, metric: distanceMetric, lexicalSearch: lexicalSearch)
        let path: String? = dbPath == ":memory:" || dbPath.isEmpty ? nil : dbPath
        do {
            collection = try Database.openingDocuments(at: path, tableName, schema: schema)
        } catch let error as TroveError {
            switch error {
            case .schemaMismatch(_, let details):
                throw SQLiteError.schemaMismatch(
                    expected: StoreSchema.describe(schema, table: tableName), found: details)
            case .invalidName(_, let reason):
                // The name passed the rules above, so something else in the file has it.
                throw SQLiteError.schemaMismatch(
                    expected: StoreSchema.describe(schema, table: tableName), found: reason)
            case .invalidDimension(let dimension):
                throw SQLiteError.invalidDimension(dimension)
            default:
                throw SQLiteError(openingFileFailedWith: error)
            }
        } catch {
            throw SQLiteError(openingFileFailedWith: error)
        }
        self.dimension = dimension
        self.distanceMetric = distanceMetric
        self.tableName = tableName
        self.metadataByteLimit = metadataByteLimit
        self.lexicalSearch = lexicalSearch
    }

    /// Opens the store at a file URL; see ``init(dbPath:dimension:distanceMetric:tableName:metadataByteLimit:lexicalSearch:)``.
    public init(
        dbURL: URL, dimension: Int = 512, distanceMetric: DistanceMetric = .cosine,
        tableName: String = "chunks", metadataByteLimit: Int = VectorStore.defaultMetadataByteLimit,
        lexicalSearch: Bool = true
    ) throws {
        try self.init(
            dbPath: dbURL.path, dimension: dimension, distanceMetric: distanceMetric,
            tableName: tableName,
            metadataByteLimit: metadataByteLimit, lexicalSearch: lexicalSearch)
    }

    /// Runs `body`, turning what Trove throws into ``SQLiteError``.
    func translatingErrors<T: Sendable>(_ body: () async throws -> T) async throws(SQLiteError) -> T
    {
        do {
            return try await body()
        } catch {
            throw SQLiteError(translating: error, table: tableName)
        }
    }
}
