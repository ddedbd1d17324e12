import Foundation
import TroveSQLite
import TroveText
import TroveVectors

/// The in-memory indexes of one search collection, as conformances of ``DerivedIndex`` in one
/// ``DerivedIndexSet`` over the collection's table and change log: the exact index (always
/// present, loaded on the first vector query of a flat collection, or by `verify` and
/// rerank of an HNSW one), the HNSW index of an approximate collection
/// (``CollectionHNSWIndex``, with its snapshot), and the BM25 index of typed text queries when
/// TroveText reproduces the collection's tokenizer. One watermark, one catch-up per query.
///
/// Shared by the writer's engine and the engines that searches make on reader connections.
/// Concurrency: the set's readers-writer lock (writer-preferring). Searches share it once the
/// indexes they need are current (``CollectionEngine/inSearchScope(loading:_:)``); catch-up,
/// loading, snapshot saves and the writer's post-commit catch-up take it exclusively.
final class PresetIndexState: @unchecked Sendable {
    // @unchecked Sendable: the lets are never reassigned; the index objects' contents are read
    // only under `indexes.lock` (shared) and changed only under it (exclusive); `hook` only
    // under `hookLock`.
    let indexes: DerivedIndexSet
    let flat: FlatVectorIndex
    let ann: CollectionHNSWIndex?
    let text: TextFieldIndex?

    /// The document engine's view of the collection (its preset schema over the same table and
    /// indexes: DocumentLayout+Preset.swift), for unranked queries, aggregates, patches, deletes
    /// by filter and transactions; nil when the table predates format 3 and the file is open
    /// read-only (it has no `_version` yet).
    let documents: DocumentStore?

    /// - Parameters:
    ///   - graph: the database's links, for the document view's link filters.
    ///   - hasVersions: whether the table has its `_version` column (format 3).
    init(schema: CollectionSchema, graph: GraphStore = GraphStore(), clock: any ExpiryClock = SystemClock(), hasVersions: Bool = true) {
        let configuration = schema.configuration
        flat = FlatVectorIndex(field: "embedding", dimension: configuration.dimension, metric: configuration.metric)
        ann = configuration.index.isApproximate ? CollectionHNSWIndex(schema: schema) : nil
        text = configuration.lexicalSearch
            ? TextFieldIndex(FullTextDefinition(fields: ["content"], tokenizer: configuration.tokenizer)) : nil
        var all: [any DerivedIndex] = [flat]
        if let ann { all.append(ann) }
        if let text { all.append(text) }
        let layout = DocumentLayout(preset: schema)
        let set = DerivedIndexSet(
            source: schema.derivedSource, indexes: all, prefersWriters: true,
            vectors: ["embedding": flat], text: text)
        indexes = set
        if hasVersions {
            documents = DocumentStore(layout: layout, graph: graph, clock: clock, indexes: set)
        } else {
            documents = nil
        }
    }

    /// The document view, or why there is none.
    func documentStore() throws -> DocumentStore {
        guard let documents else {
            throw TroveError.invalidQuery(
                "this search collection's table predates format 3 (no row versions); open the file writable once to upgrade it")
        }
        return documents
    }

    /// The index vector searches use: HNSW for approximate collections, else the exact one.
    var vectors: any DerivedIndex { ann ?? flat }

    /// Tests only: called inside every search, while it holds the index lock, so a test can see
    /// two searches inside at once (PresetConcurrencyTests).
    var searchHook: (@Sendable () -> Void)? {
        get { hookLock.withLock { hook } }
        set { hookLock.withLock { hook = newValue } }
    }
    private let hookLock = NSLock()
    private var hook: (@Sendable () -> Void)?
}

extension CollectionSchema {
    /// The table, its `id` and `<name>_log(seq, id, op)`. Search collections take every snapshot
    /// while holding the index lock, so a log behind the watermark was rolled back or recreated.
    var derivedSource: DerivedSource {
        DerivedSource(
            table: table, rid: "id", log: log, logRid: "id", changeLog: ChangeLog(table: log, floorKey: logFloorKey),
            watermarkMayLeadSnapshots: false)
    }
}

/// The HNSW index of an approximate search collection and what is known about where it came
/// from. On first use it loads the stored snapshot (``ANNSnapshotStore``) and the set replays the
/// log after the snapshot's watermark; it is rebuilt from the table when there is no snapshot, it
/// fails a check, its parameters differ, or its watermark is below the pruned log floor (or above
/// the log's newest seq: the log was recreated).
///
/// Memory: the float32 vectors (4 × dimension bytes each, kept for exact scans and re-scoring
/// unless the kind says `keepsFloatVectors: false`), the links (about 4 × (2m + 1) bytes per
/// vector on layer 0), the walked codes in quantized modes, and the id map; see
/// `HNSWIndex.memoryUsage`.
final class CollectionHNSWIndex: DerivedIndex {
    let schema: CollectionSchema
    let hnsw: HNSWConfiguration
    private(set) var index: HNSWIndex?
    /// The watermark of the snapshot stored in `<name>_index`, when it is known to be this
    /// index's ancestor (nil: nothing saved since the last rebuild).
    var savedWatermark: Int64?
    var origin: IndexStatistics.Origin = .notLoaded
    var loadSeconds = 0.0
    /// Rows replayed from the change log by queries since the index was loaded.
    private(set) var replayedRows = 0
    /// Why the next build from the table happens (set when a snapshot is refused).
    private var rebuildReason = "no snapshot saved"
    private var loadStarted: ContinuousClock.Instant?
    /// Upserts of the current pass, inserted together (on all cores) when it finishes.
    private var pending: [(id: Int64, vector: [Float])] = []
    private var pendingRows = 0

    init(schema: CollectionSchema) {
        self.schema = schema
        self.hnsw = schema.configuration.index.hnswConfiguration!
    }

    var name: String { "hnsw(embedding)" }
    var columns: [String] { ["\"embedding\""] }
    var isLoaded: Bool { index != nil }

    func reset() {
        if loadStarted == nil { loadStarted = .now }
        // The configuration was validated with the schema, so this cannot fail.
        index = try! HNSWIndex(dimension: schema.configuration.dimension, metric: schema.configuration.metric, configuration: hnsw)
        origin = .rebuilt(reason: rebuildReason)
        rebuildReason = "no snapshot saved"
        savedWatermark = nil
        replayedRows = 0
    }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        pendingRows += 1
        if let statement, let vector = Self.vector(statement, column: firstColumn, schema: schema) {
            pending.append((rid, vector))
        } else {
            index!.remove(id: rid)
        }
    }

    func reserve(rows: Int) { pending.reserveCapacity(rows) }

    func finishApplying(_ pass: DerivedIndexPass) {
        if pending.count == 1 {
            index?.insert(id: pending[0].id, vector: pending[0].vector)
        } else if !pending.isEmpty {
            index?.insert(contentsOf: pending)
        }
        pending.removeAll()
        if pass == .replay { replayedRows += pendingRows }
        pendingRows = 0
        if let started = loadStarted, pass != .commit {
            let d = ContinuousClock.now - started
            loadSeconds = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
            loadStarted = nil
        }
    }

    func loadSaved(_ connection: Connection, maxSeq: Int64, floor: Int64) throws -> Int64? {
        loadStarted = .now
        switch try ANNSnapshotStore(connection: connection, schema: schema).read() {
        case .none:
            rebuildReason = "no snapshot saved"
        case .unusable(let why):
            rebuildReason = why
        case .snapshot(let saved, let bytes):
            if saved < floor {
                rebuildReason = "snapshot watermark \(saved) is below the pruned log floor \(floor)"
            } else if saved > maxSeq {
                rebuildReason = "snapshot watermark \(saved) is ahead of the change log (newest seq \(maxSeq))"
            } else {
                do {
                    let loaded = try HNSWIndex(snapshot: bytes)
                    if let mismatch = parameterMismatch(loaded) {
                        rebuildReason = mismatch
                    } else {
                        loaded.efSearch = hnsw.efSearch
                        index = loaded
                        origin = .snapshot
                        savedWatermark = saved
                        replayedRows = 0
                        return saved
                    }
                } catch {
                    rebuildReason = "snapshot rejected: \(error)"
                }
            }
        }
        return nil
    }

    private func parameterMismatch(_ index: HNSWIndex) -> String? {
        let configuration = schema.configuration
        let found = index.configuration
        if index.dimension != configuration.dimension || index.metric != configuration.metric
            || found.m != hnsw.m || found.efConstruction != hnsw.efConstruction
            || found.quantization != hnsw.quantization || found.storesFullPrecision != hnsw.storesFullPrecision
        {
            return "snapshot parameters (\(index.dimension)-d \(index.metric), m \(found.m), efConstruction "
                + "\(found.efConstruction), \(found.quantization)) differ from the collection's"
        }
        return nil
    }

    /// Search collections check their HNSW index in `CollectionEngine.health()`.
    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] { [] }
    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {}

    /// A stored vector the HNSW index can hold: finite, of the collection's dimension, and under
    /// cosine not all zeros (raw SQL can store one; it has no direction, so it is no vector).
    static func vector(_ statement: Statement, column: Int, schema: CollectionSchema) -> [Float]? {
        let configuration = schema.configuration
        guard let vector = statement.withBlob(at: column, { bytes in
            bytes.flatMap { VectorBlob.vector($0, dimension: configuration.dimension) }
        }) else { return nil }
        if configuration.metric == .cosine, vector.allSatisfy({ $0 == 0 }) { return nil }
        return vector
    }
}

extension CollectionEngine {
    /// Runs one search's `body` in one read transaction whose snapshot every in-memory index it
    /// uses reflects: the indexes in `needed` (and any other built one) are caught up at most
    /// once, from one read of the log, before `body` runs; searches share the index lock when
    /// nothing needed catching up. Nested calls join the scope already open.
    ///
    /// `body` may run twice (once shared, once exclusive) when it uses an index it did not
    /// announce, so it must only read.
    func inSearchScope<T>(loading needed: [any DerivedIndex], _ body: () throws -> T) throws -> T {
        if searchScope != nil { return try body() }
        return try state.indexes.withCurrentIndexes(connection, loading: needed) { indexes in
            searchScope = SearchScope(indexes: indexes)
            defer { searchScope = nil }
            state.searchHook?()
            return try body()
        }
    }

    /// Makes sure `index` is current: inside a search scope through the scope, otherwise with a
    /// catch-up of its own (in the caller's transaction or a read transaction of its own).
    func require(_ index: any DerivedIndex) throws {
        if let searchScope { return try searchScope.indexes.require(index) }
        // Exclusive from before the log is read, so no other connection can move the indexes
        // past this snapshot in between.
        try state.indexes.withExclusiveIndexes(connection, loading: [index]) { _ in }
    }

    /// Runs `body` on the current indexes: in a search scope directly, otherwise under the
    /// shared lock (a catch-up by another connection may run at any time).
    func readingIndexes<T>(_ body: () throws -> T) rethrows -> T {
        if searchScope != nil { return try body() }
        return try state.indexes.lock.read(body)
    }

    /// The exact index, current (see ``require(_:)``).
    @discardableResult
    func catchUp() throws -> FlatIndex {
        try require(state.flat)
        return readingIndexes { state.flat.index! }
    }

    /// The HNSW index of an approximate collection, current (see ``require(_:)``).
    @discardableResult
    func catchUpANN() throws -> CollectionHNSWIndex {
        let ann = state.ann!
        try require(ann)
        return ann
    }

    /// The BM25 index of typed queries, current, or nil when the collection has no lexical
    /// search or a tokenizer TroveText cannot reproduce.
    func catchUpText() throws -> BM25Index? {
        guard let text = state.text else { return nil }
        try require(text)
        return readingIndexes { text.index }
    }
}
