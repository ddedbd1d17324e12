import Foundation
import TroveEmbeddings
import TroveSQLite
import TroveText
import TroveVectors

/// The working state of one open collection on one connection: its schema, that connection's
/// statements, and the collection's in-memory indexes (shared, see ``PresetIndexState``).
///
/// The writer's engine lives on its ``Database`` actor; a search or read on a reader connection
/// makes a short-lived engine of its own over the same shared state. Not Sendable: each engine is
/// used by one task at a time.
final class CollectionEngine {
    let connection: Connection
    let schema: CollectionSchema
    var configuration: CollectionConfiguration { schema.configuration }
    var name: String { schema.name }
    /// The in-memory indexes, shared by every engine of this collection in this `Database`.
    /// Touch them only while holding `state.lock` (see ``PresetIndexState``).
    let state: PresetIndexState

    /// The exact index, loaded on the first vector query. Memory: 4 × dimension bytes per row
    /// (about 1.5 KB per row at 384-d), plus the id map.
    var index: FlatIndex? {
        get { state.index }
        _modify { yield &state.index }
    }
    /// The last change-log `seq` that ``index`` reflects.
    var watermark: Int64 {
        get { state.watermark }
        set { state.watermark = newValue }
    }
    /// The HNSW index of a collection whose kind is `.hnsw` (see CollectionEngine+ANN.swift),
    /// loaded on first use; such collections never load ``index``.
    var ann: ANNState? {
        get { state.ann }
        set { state.ann = newValue }
    }
    /// The in-memory BM25 index for typed text queries (see CollectionEngine+TextIndex.swift),
    /// built on the first typed query, and the change-log `seq` it reflects.
    var textIndex: BM25Index? {
        get { state.textIndex }
        _modify { yield &state.textIndex }
    }
    var textWatermark: Int64 {
        get { state.textWatermark }
        set { state.textWatermark = newValue }
    }
    /// Merges this collection's FTS5 segments after writes (nil for in-memory or read-only files,
    /// and on reader connections).
    var merger: BackgroundMerger?
    /// The search in progress, if any (CollectionEngine+SearchScope.swift).
    var searchScope: SearchScope?

    /// See ``ChangeLog/limit``.
    static let logLimit = ChangeLog.limit
    static let logKeep = ChangeLog.keep
    /// The largest topK accepted by searches.
    static let maxTopK = 100_000

    init(connection: Connection, schema: CollectionSchema, state: PresetIndexState = PresetIndexState()) {
        self.connection = connection
        self.schema = schema
        self.state = state
    }

    // MARK: Opening

    /// Opens the collection, creating it when `requested` is given and it does not exist.
    ///
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` or
    ///   ``TroveError/embeddingMismatch(collection:stored:requested:)`` when the stored
    ///   configuration differs (nothing is changed), ``TroveError/collectionNotFound(_:)``.
    static func open(
        connection: Connection, name: String, requested: CollectionConfiguration?
    ) throws -> CollectionEngine {
        try CollectionSchema.validate(name: name)
        try requested?.validate()
        let configuration: CollectionConfiguration = try connection.transaction(
            connection.isReadOnly ? .deferred : .immediate
        ) {
            let key = CollectionSchema(name: name, configuration: CollectionConfiguration(dimension: 1)).configKey
            let storedJSON = try connection.scalar(
                "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(key)])?.stringValue
            if let storedJSON {
                let stored: CollectionConfiguration
                do {
                    stored = try JSONDecoder().decode(CollectionConfiguration.self, from: Data(storedJSON.utf8))
                } catch {
                    throw TroveError.schemaMismatch(
                        collection: name, details: "stored configuration is unreadable: \(error)")
                }
                if let requested {
                    if let a = stored.embedding, let b = requested.embedding, a != b {
                        throw TroveError.embeddingMismatch(collection: name, stored: a, requested: b)
                    }
                    let differences = stored.differences(from: requested)
                    if !differences.isEmpty {
                        throw TroveError.schemaMismatch(collection: name, details: differences.joined(separator: "; "))
                    }
                }
                // Collections created before the FTS5 settings get them once, when writable
                // (they are rows in the FTS5 config table; only speed depends on them).
                let schema = CollectionSchema(name: name, configuration: stored)
                if stored.lexicalSearch, !connection.isReadOnly,
                    try connection.scalar("SELECT 1 FROM \"\(schema.ftsName)_config\" WHERE k = 'hashsize'") == nil
                {
                    for statement in schema.ftsSettings { try connection.execute(script: statement) }
                }
                return stored
            }
            guard let requested else { throw TroveError.collectionNotFound(name) }
            let schema = CollectionSchema(name: name, configuration: requested)
            // Checked before creating anything, never by matching SQLite's message text.
            for object in schema.objectNames {
                if try connection.scalar("SELECT 1 FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(object)]) != nil {
                    throw TroveError.invalidName(name, reason: "the file already has a table or index that this collection needs (\(object))")
                }
            }
            if try connection.scalar("SELECT 1 FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(DocumentLayout.metaKeyPrefix + name)]) != nil {
                throw TroveError.invalidName(name, reason: "a document collection of that name exists")
            }
            for statement in schema.createStatements { try connection.execute(script: statement) }
            try connection.execute(
                "INSERT INTO \(CollectionSchema.metaTable)(key, value) VALUES (?, ?)",
                [.text(key), .text(requested.encodedJSON())])
            return requested
        }
        return CollectionEngine(connection: connection, schema: CollectionSchema(name: name, configuration: configuration))
    }

    // MARK: Keeping the vector index in step with the table

    /// The collection's change log.
    var changeLog: ChangeLog { ChangeLog(table: schema.log, floorKey: schema.logFloorKey) }

    /// The log's newest seq and the highest seq ever pruned from it.
    func logState() throws -> (maxSeq: Int64, floor: Int64) { try changeLog.state(connection) }

    /// Brings ``index`` up to date with the table: replays the change log past the watermark
    /// (whoever wrote it: this connection, raw SQL, another connection or process), or reloads
    /// from the table when there is no index yet or the log was pruned past the watermark.
    ///
    /// - Complexity: O(changes since the last call); O(rows) on (re)load.
    @discardableResult
    func catchUp() throws -> FlatIndex {
        // One read transaction (the search's, or its own): the log and the rows are read from
        // the same snapshot.
        try withLogState { maxSeq, floor in
            if index == nil || watermark < floor || maxSeq < watermark {
                try reload(watermark: maxSeq)
            } else if maxSeq > watermark {
                try replay(after: watermark)
                watermark = maxSeq
            }
            return index!
        }
    }

    private func reload(watermark newWatermark: Int64) throws {
        var fresh = FlatIndex(dimension: configuration.dimension, metric: configuration.metric)
        let count = try connection.scalar("SELECT count(*) FROM \(schema.table)")?.int64Value ?? 0
        fresh.reserveCapacity(Int(count))
        let statement = try connection.prepare(
            "SELECT id, embedding FROM \(schema.table) WHERE embedding IS NOT NULL")
        try statement.forEachRow { row in
            if let vector = decodeVector(row, column: 1) { fresh.upsert(id: row.int64(at: 0), vector: vector) }
        }
        index = fresh
        watermark = newWatermark
    }

    private func replay(after seq: Int64) throws {
        let statement = try connection.cachedStatement(
            """
            SELECT l.id, t.embedding FROM (SELECT DISTINCT id FROM \(schema.log) WHERE seq > ?) AS l
            LEFT JOIN \(schema.table) AS t ON t.id = l.id
            """)
        try statement.forEachRow([.integer(seq)]) { row in
            let id = row.int64(at: 0)
            if let vector = decodeVector(row, column: 1) {
                index!.upsert(id: id, vector: vector)
            } else {
                index!.remove(id: id)
            }
        }
    }

    /// Reads a stored embedding; nil when NULL, the wrong length, or not finite (raw SQL can
    /// store such blobs; they are treated as "no vector" rather than poisoning the index).
    func decodeVector(_ statement: Statement, column: Int) -> [Float]? {
        let dimension = configuration.dimension
        return statement.withBlob(at: column) { bytes -> [Float]? in
            guard let bytes, bytes.count == 4 * dimension else { return nil }
            // Stored little-endian float32, which is the native layout on every supported platform.
            let vector = [Float](unsafeUninitializedCapacity: dimension) { buffer, count in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: bytes)
                count = dimension
            }
            return vector.allSatisfy(\.isFinite) ? vector : nil
        }
    }

    /// Applies changes this connection just committed straight to the index, when the index was
    /// current before the write (`before` is the log's max seq read inside the write
    /// transaction), saving the next query a log replay.
    func applyCommitted(_ changes: [IndexChange], before: Int64, after: Int64) {
        if configuration.index.isApproximate { return applyCommittedANN(changes, before: before, after: after) }
        guard index != nil, watermark == before else { return }
        for change in changes {
            switch change {
            case .upsert(let id, let vector): index!.upsert(id: id, vector: vector)
            case .remove(let id): index!.remove(id: id)
            case .removeAll: index!.removeAll()
            }
        }
        watermark = after
    }

    /// Deletes old change-log entries once the log is long; call inside a write transaction.
    func pruneLogIfNeeded(maxSeq: Int64) throws { try changeLog.pruneIfNeeded(connection, maxSeq: maxSeq) }
}

/// The in-memory indexes of one search collection: the exact index, the HNSW index, the BM25
/// index and their watermarks, shared by the writer's engine and the engines that searches make
/// on reader connections.
///
/// Concurrency: one lock, held around every use. `Database.withEngine` holds it for the whole
/// body (administration and searches on the writer), `Database.withReadingEngine` for a search on
/// a reader connection, and a write holds it only to apply what it committed
/// (`CollectionEngine.write`), never while its SQL runs, so searches proceed during writes.
/// Searches of one collection take turns on its indexes, as they did on the actor.
final class PresetIndexState: @unchecked Sendable {
    // @unchecked Sendable: every stored property below is read and written only while `lock` is
    // held (the three entry points above are the only ways engines reach them).
    let lock = NSLock()
    var index: FlatIndex?
    var watermark: Int64 = 0
    var ann: ANNState?
    var textIndex: BM25Index?
    var textWatermark: Int64 = 0
}

/// A change to apply to the in-memory index.
enum IndexChange {
    case upsert(Int64, [Float])
    case remove(Int64)
    case removeAll
}
