import Foundation
import TroveEmbeddings
import TroveSQLite
import TroveVectors

/// A search collection: records with text, source, JSON metadata and a vector, searchable by
/// vector, by words (BM25) and by both (hybrid).
///
/// It is a typed facade over a document collection of a preset schema (`content`, `source`,
/// `metadata`, `embedding`, `created_at`, `updated_at`; DocumentLayout+Preset.swift), as a
/// ``ModelCollection`` is over its model's schema: every query, filter, index and search runs
/// through the one document engine. Handles are cheap values.
///
/// ```swift
/// let notes = try await SearchCollection("notes", in: database, dimension: 3)
/// try await notes.insert(VectorEntry(id: 1, content: "Buy oat milk", source: "today", vector: [1, 0, 0]))
/// // Ids that cannot collide across devices (for sync): UUIDv7s when left to Trove.
/// let synced = try await SearchCollection("synced", in: database, configuration: .init(dimension: 3, ids: .uuid))
/// let id = try await synced.insert(VectorEntry(content: "Call the plumber", vector: [0, 1, 0]))
/// let nearest = try await notes.search(vector: [0.9, 0.1, 0], limit: 1)
/// let words = try await notes.search(Query().matching(.typed("oat milk")))
/// ```
public struct SearchCollection: RecordCollection {
    /// The database holding this collection.
    public let database: Database
    /// The collection's name (also its table's name).
    public let name: String
    /// The frozen configuration.
    public let configuration: CollectionConfiguration
    /// The embedder used by the text-in API, when one was attached.
    public let embedder: (any Embedder)?
    /// The embedders of the further models (``CollectionConfiguration/additionalEmbeddings``),
    /// in order, when they were attached; empty otherwise.
    public let additionalEmbedders: [any Embedder]
    /// The document collection underneath: the same table, indexes and engine.
    let documents: DocumentCollection

    init(
        documents: DocumentCollection, configuration: CollectionConfiguration,
        embedder: (any Embedder)?, additionalEmbedders: [any Embedder] = []
    ) {
        self.database = documents.database
        self.name = documents.name
        self.configuration = configuration
        self.embedder = embedder
        self.additionalEmbedders = additionalEmbedders
        self.documents = documents
    }

    // MARK: Writing (`insert` is ``RecordCollection``'s)

    public func _insert(_ entries: [VectorEntry], expiry: Expiry) async throws -> [DocumentID] {
        // The preset schema has no expiry: anything but `.never` is refused.
        _ = try documents.store.expirySecond(expiry)
        return try await write(try await rows(entries), mode: .insert)
    }

    /// Replaces an existing row's content, source, metadata and vector.
    ///
    /// - Throws: ``TroveError/documentNotFound(_:)`` when no row has the entry's id.
    public func update(_ entry: VectorEntry) async throws {
        guard entry.id != .unassigned else { throw TroveError.documentNotFound(entry.id) }
        try await write(try await rows([entry]), mode: .update)
    }

    /// Inserts the row, or replaces the row with the same id. - Returns: its id.
    @discardableResult
    public func upsert(_ entry: VectorEntry) async throws -> DocumentID {
        try await upsert([entry])[0]
    }

    /// Inserts or replaces rows in one all-or-nothing transaction; an unassigned id gets a new
    /// one, an entry without a vector is embedded (as ``RecordCollection/insert(_:expiry:)->[Self.RecordID]``
    /// says).
    ///
    /// - Returns: their ids, in order.
    @discardableResult
    public func upsert(_ entries: [VectorEntry]) async throws -> [DocumentID] {
        try await write(try await rows(entries), mode: .upsert)
    }

    /// Deletes the row with this id. Returns whether it existed.
    @discardableResult
    public func delete(id: DocumentID) async throws -> Bool {
        try await documents.delete(id: id)
    }

    /// Deletes every row passing `filter` (``Filter/source(_:)`` to re-index one file). - Returns: how many.
    @discardableResult
    public func delete(where filter: Filter) async throws -> Int {
        try await documents.delete(where: filter)
    }

    @discardableResult
    func write(_ rows: [PendingRow], mode: WriteMode) async throws -> [DocumentID] {
        guard !rows.isEmpty else { return [] }
        let store = documents.store
        return try await database.writing { connection in
            try store.writePreset(rows, mode: mode, on: connection)
        }
    }

    // MARK: Reading

    /// The row with this id, with its vector (empty when the row has none), or nil.
    public func fetch(id: DocumentID) async throws -> VectorEntry? {
        try await entries { try PresetRows.read(ids: [id], from: $0, on: $1) }.first
    }

    /// The rows of an unranked query (filter, order, limit, cursor), as entries in its order.
    ///
    /// ```swift
    /// let recent = try await notes.fetch(Query(.source("inbox")).sorted(by: .descending("updated_at")).limit(20))
    /// ```
    /// - Throws: ``TroveError/invalidQuery(_:)`` for a ranked query (use ``search(_:)``) or a
    ///   projection (entries are whole rows), and the filter's errors.
    public func fetch(_ query: Query) async throws -> [VectorEntry] {
        guard query.projection == nil else {
            throw TroveError.invalidQuery(
                "a search collection's fetch returns whole entries; drop select(_:)")
        }
        return try await entries { store, connection in
            let ids = try store.fetch(query.select([]), on: connection, wantsCursor: false)
                .documents.map(\.id)
            return try PresetRows.read(ids: ids, from: store, on: connection)
        }
    }

    /// Whether a row has this id.
    public func contains(id: DocumentID) async throws -> Bool {
        try await count(where: Field.id == id.value) > 0
    }

    /// How many rows pass `filter` (all rows by default).
    public func count(where filter: Filter = .all) async throws -> Int {
        try await documents.count(where: filter)
    }

    /// Every source with its row count, sorted by source.
    public func sources() async throws -> [SourceSummary] {
        try await entries { store, connection in
            try connection.query(
                "SELECT source, count(*), max(updated_at) FROM \(store.layout.table) GROUP BY source ORDER BY source"
            ).map {
                SourceSummary(
                    source: $0.string(at: 0) ?? "", count: $0.int(at: 1) ?? 0,
                    lastUpdated: Date(timeIntervalSince1970: $0.double(at: 2) ?? 0))
            }
        }
    }

    /// Runs `body` with the preset's document store in one read transaction on a reader.
    func entries<T: Sendable>(_ body: @escaping @Sendable (DocumentStore, Connection) throws -> T)
        async throws -> T
    {
        let name = self.name
        return try await database.reading { connection, lookup in
            try body(try lookup(name), connection)
        }
    }

    // MARK: Searching

    /// Runs a ranked ``Query``, the same value document collections take: its filter over
    /// `content`, `source`, `metadata` paths, `created_at`, `updated_at` and `id`; a vector leg
    /// on `embedding`; a text leg on `content`; fused, thresholded, diversified and paged as
    /// asked. The other two `search` methods are conveniences for the common cases.
    ///
    /// ```swift
    /// let hits = try await notes.search(Query(.source("a.pdf") && Field("metadata", path: "$.page") <= 10)
    ///     .nearest(to: q, in: "embedding").matching(.typed("router reset")).limit(5))
    /// ```
    /// - Throws: ``TroveError/invalidQuery(_:)`` for an unranked query (use ``fetch(_:)``) or a
    ///   projection, ``TroveError/notVectorField(field:type:)``, ``TroveError/notTextField(field:fullTextFields:)``,
    ///   ``TroveError/dimensionMismatch(expected:actual:)``, ``TroveError/invalidLimit(_:maximum:)``,
    ///   ``TroveError/invalidTextQuery(query:reason:)``, ``TroveError/invalidFilter(sql:reason:)``,
    ///   ``TroveError/lexicalSearchDisabled(collection:)``.
    public func search(_ query: Query) async throws -> [Hit<VectorEntry>] {
        guard query.projection == nil else {
            throw TroveError.invalidQuery(
                "a search collection's results are whole entries; drop select(_:)")
        }
        return try await entries { store, connection in
            try connection.transaction(.deferred) {
                let hits = try store.rankedHits(query, source: .indexes, on: connection)
                let rows = try PresetRows.read(
                    rids: hits.map(\.record), from: store, vectors: true, on: connection)
                return hits.compactMap { hit in rows[hit.record].map { row in hit.map { _ in row } }
                }
            }
        }
    }

    /// k-nearest-neighbour search, nearest first, among the rows passing `filter` (applied before
    /// ranking: when at least `limit` rows pass, exactly `limit` come back). For the exact answer on
    /// an HNSW collection, or a wider walk, use ``search(_:)`` with ``Query/exact(_:)`` or
    /// ``Query/efSearch(_:)``.
    ///
    /// ```swift
    /// let hits = try await notes.search(vector: q, where: .source("inbox"), limit: 10)
    /// ```
    public func search(vector: [Float], where filter: Filter = .all, limit: Int = 10) async throws
        -> [Hit<VectorEntry>]
    {
        try await search(Query(filter).nearest(to: vector, in: "embedding").limit(limit))
    }
}

/// How many rows came from one source.
public struct SourceSummary: Hashable, Sendable {
    /// The source label.
    public var source: String
    /// How many rows have it.
    public var count: Int
    /// When the most recently written row of this source was written.
    public var lastUpdated: Date
}
