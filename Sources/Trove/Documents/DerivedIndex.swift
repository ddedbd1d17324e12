import Foundation
import TroveSQLite
import TroveVectors

/// Something derived from a collection's table that must agree with it (DESIGN.md section 3):
/// kept by SQLite inside the writing transaction (FTS5, B-tree, later R*Tree), or kept in memory
/// and brought up to date from the change log before each query (vectors, later adjacency).
///
/// A new kind of index is one new conformance; ``DerivedIndexSet`` does the catch-up for all of
/// them at once: one read of the log per query, whatever the number of indexes.
protocol DerivedIndex: AnyObject {
    /// A name for reports (`verify`, `explain`).
    var name: String { get }
    /// The columns an in-memory index reads for each changed row; empty for SQLite-maintained
    /// indexes, which need no catch-up.
    var columns: [String] { get }
    /// Whether the index has been built (in-memory indexes load lazily).
    var isLoaded: Bool { get }
    /// Forgets everything (before a rebuild).
    func reset()
    /// Applies the current state of one row: `statement` is positioned on a row whose columns
    /// from `firstColumn` are this index's ``columns``, or nil when the row no longer exists.
    func apply(rid: Int64, statement: Statement?, firstColumn: Int)
    /// Problems found comparing the index with the table (empty when healthy).
    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String]
    /// Rebuilds a SQLite-maintained index from the table (in-memory indexes rebuild through
    /// ``DerivedIndexSet``).
    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws
    /// Loads the index from something saved (an HNSW snapshot) instead of the table, when that is
    /// usable at this log state, and returns the change-log seq it reflects; the set then replays
    /// the log after that seq into it. Nil (the default): build from the table.
    func loadSaved(_ connection: Connection, maxSeq: Int64, floor: Int64) throws -> Int64?
    /// Called once after each pass that applied rows to this index (an index that inserts in
    /// batches, such as HNSW, inserts them here).
    func finishApplying(_ pass: DerivedIndexPass)
    /// Called after ``reset()`` before a build from the table of about `rows` rows, so the index
    /// can allocate once instead of growing.
    func reserve(rows: Int)
}

extension DerivedIndex {
    func loadSaved(_ connection: Connection, maxSeq: Int64, floor: Int64) throws -> Int64? { nil }
    func finishApplying(_ pass: DerivedIndexPass) {}
    func reserve(rows: Int) {}
}

/// Why rows were applied to an in-memory index.
enum DerivedIndexPass {
    /// Built from the table.
    case build
    /// A query replayed the log (changes by raw SQL, other connections, other processes).
    case replay
    /// The writer applied what it had just committed.
    case commit
}

/// An in-memory index of one vector field, searched by the query's vector legs.
protocol VectorFieldSearching: DerivedIndex {
    var field: String { get }
    var dimension: Int { get }
    var metric: DistanceMetric { get }
    var count: Int { get }
    /// A short description of how a search runs, for `explain`.
    var strategy: String { get }
    /// The k nearest rows (by row id), among `candidates` when given; `table` reads the field's
    /// stored vectors on the query's connection, for indexes that keep none in memory.
    func search(_ query: [Float], k: Int, among candidates: [Int64]?, table: TableVectors) throws -> [Neighbor]
}

extension VectorFieldSearching {
    var name: String { "vector(\(field))" }
    var columns: [String] { ["\"\(field)\""] }

    func vector(from statement: Statement?, column: Int) -> [Float]? {
        statement?.withBlob(at: column) { bytes in bytes.flatMap { VectorBlob.vector($0, dimension: dimension) } }
    }

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard isLoaded else { return [] }
        let stored = try connection.scalar("SELECT count(*) FROM \(layout.table) WHERE \"\(field)\" IS NOT NULL")?.int64Value ?? 0
        return Int(stored) == count ? [] : ["\(name): \(count) vectors in memory, \(stored) in the table"]
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {}
}

/// The exact (flat) in-memory index of one vector field: a SIMD scan over every vector, or over
/// the filter's candidates.
///
/// Memory: 4 × dimension bytes per document with a vector, plus the id map.
final class FlatVectorIndex: VectorFieldSearching {
    let field: String
    let dimension: Int
    let metric: DistanceMetric
    private(set) var index: FlatIndex?

    init(field: String, dimension: Int, metric: DistanceMetric) {
        self.field = field
        self.dimension = dimension
        self.metric = metric
    }

    var isLoaded: Bool { index != nil }
    var count: Int { index?.count ?? 0 }
    var strategy: String { "exact \(metric) scan (\(dimension)-d)" }

    func reset() { index = FlatIndex(dimension: dimension, metric: metric) }
    func reserve(rows: Int) { index?.reserveCapacity(rows) }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        if let vector = vector(from: statement, column: firstColumn) {
            index!.upsert(id: rid, vector: vector)
        } else {
            _ = index!.remove(id: rid)
        }
    }

    func search(_ query: [Float], k: Int, among candidates: [Int64]?, table: TableVectors) -> [Neighbor] {
        guard let index else { return [] }
        if let candidates { return index.search(query, k: k, among: candidates) }
        return index.search(query, k: k)
    }

    /// Every stored vector against the one in memory, bit for bit: missing, stale, and vectors
    /// without a row. The index stores vectors as it prepares them (normalised under cosine), so
    /// each stored one goes through the same preparation first. Nothing when not loaded.
    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard let index else { return [] }
        var missing = 0, stale = 0, stored = 0
        var expected = FlatIndex(dimension: dimension, metric: metric)
        let statement = try connection.prepare(
            "SELECT \(layout.rid), \"\(field)\" FROM \(layout.table) WHERE \"\(field)\" IS NOT NULL")
        try statement.forEachRow { row in
            guard let vector = vector(from: row, column: 1) else { return }
            stored += 1
            expected.upsert(id: 0, vector: vector)
            switch index.vector(for: row.int64(at: 0)) {
            case nil: missing += 1
            case let indexed? where indexed != expected.vector(for: 0): stale += 1
            default: break
            }
        }
        let extra = index.count - (stored - missing)
        guard missing > 0 || stale > 0 || extra > 0 else { return [] }
        return ["\(name): vector index disagrees with the table: \(missing) vectors missing, \(stale) stale, \(extra) without a row"]
    }
}

/// An HNSW graph (Malkov & Yashunin 2018) over one vector field, approximate; a filtered search
/// plans its own strategy (an exact scan of few candidates, a filter-aware walk for many).
///
/// Memory: the float32 vectors (or int8 codes plus float32 for re-scoring, or in codes-only
/// mode the int8 codes alone) and about 2·M links per node on layer 0.
///
/// Codes-only (`.hnsw(quantization: .int8, keepsFloatVectors: false)`): the codes steer the walk
/// and every exact distance (re-scoring the walk's best, exact scans of few candidates) reads the
/// field's vector from the table, as codes-only search collections do.
final class HNSWVectorIndex: VectorFieldSearching {
    let field: String
    let dimension: Int
    let metric: DistanceMetric
    let configuration: HNSWConfiguration
    private(set) var index: HNSWIndex?

    init(field: String, dimension: Int, metric: DistanceMetric, configuration: HNSWConfiguration) {
        self.field = field
        self.dimension = dimension
        self.metric = metric
        self.configuration = configuration
    }

    var isLoaded: Bool { index != nil }
    var count: Int { index?.count ?? 0 }
    var strategy: String {
        configuration.storesFullPrecision
            ? "HNSW walk (M \(configuration.m), efSearch \(configuration.efSearch), \(configuration.quantization)); exact scan when the filter leaves few candidates"
            : "HNSW walk over int8 codes only (M \(configuration.m), efSearch \(configuration.efSearch)), best candidates re-scored from the table; exact scan of the table's vectors when the filter leaves few candidates"
    }

    func reset() {
        // The configuration was validated with the schema, so this cannot fail.
        index = try! HNSWIndex(dimension: dimension, metric: metric, configuration: configuration)
    }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        if let vector = vector(from: statement, column: firstColumn) {
            index!.insert(id: rid, vector: vector)
        } else {
            _ = index!.remove(id: rid)
        }
    }

    func search(_ query: [Float], k: Int, among candidates: [Int64]?, table: TableVectors) throws -> [Neighbor] {
        guard let index else { return [] }
        guard !configuration.storesFullPrecision else {
            guard let candidates else { return index.search(query, k: k) }
            return index.search(query, k: k, candidates: Set(candidates)).results
        }
        guard let candidates else {
            var failure: (any Error)?
            let hits = index.search(query, k: k, efSearch: nil) { rid in
                do { return try table.vector(rid: rid) } catch {
                    failure = failure ?? error
                    return nil
                }
            }
            if let failure { throw failure }
            return hits
        }
        switch CollectionEngine.codesOnlyPlan(matching: candidates.count, total: index.count, k: k, efSearch: index.efSearch) {
        case .exactScan:
            return try table.exactSearch(query, k: k, among: candidates)
        case .graphTraversal:
            // The filtered walk ranks by code distances; widen it and let the table's vectors pick the k.
            let allowed = Set(candidates)
            let wide = k * configuration.rescoreFactor
            let found = index.search(query, k: wide, efSearch: max(index.efSearch, wide), where: allowed.contains)
            return try table.exactSearch(query, k: k, among: found.map(\.id))
        }
    }
}

/// The collection's FTS5 index, kept by triggers in the writing transaction.
final class FullTextIndex: DerivedIndex {
    let definition: FullTextDefinition
    init(_ definition: FullTextDefinition) { self.definition = definition }

    var name: String { "fts5(\(definition.fields.joined(separator: ", ")))" }
    var columns: [String] { [] }
    var isLoaded: Bool { true }
    func reset() {}
    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {}

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        do {
            try connection.execute("INSERT INTO \(layout.fts)(\(layout.fts), rank) VALUES ('integrity-check', 1)")
            return []
        } catch let error as SQLiteError where error.code == .corrupt {
            return ["\(name): \(error.message)"]
        }
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {
        try connection.execute("INSERT INTO \(layout.fts)(\(layout.fts)) VALUES ('rebuild')")
    }
}

/// The collection's B-tree indexes (per-field flags, compound, unique, JSON-path expressions).
final class BTreeIndexes: DerivedIndex {
    let names: [String]
    init(names: [String]) { self.names = names }

    var name: String { "b-tree(\(names.joined(separator: ", ")))" }
    var columns: [String] { [] }
    var isLoaded: Bool { true }
    func reset() {}
    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {}

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        let rows = try connection.query("PRAGMA integrity_check(\(layout.table))")
        let messages = rows.compactMap { $0.string(at: 0) }.filter { $0 != "ok" }
        return messages.map { "\(name): \($0)" }
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {
        try connection.execute(script: "REINDEX \(layout.table)")
    }
}

/// All derived indexes of one table and the one catch-up that keeps the in-memory ones in step
/// with its change log: a document collection's, the link table's, a search collection's
/// (`PresetIndexState`). What the indexes derive from is a ``DerivedSource``.
///
/// Shared by the writer and every reader connection. Concurrency: a readers-writer lock; a
/// catch-up takes it exclusively (only when the log moved), searches share it. Only committed
/// state is ever applied: catch-up runs on a reader's snapshot or on the writer outside a
/// transaction, never inside an open write transaction (a rolled-back change would otherwise
/// stay in memory).
final class DerivedIndexSet: @unchecked Sendable {
    // @unchecked Sendable: every mutable member (`indexes`' contents, `watermark`, `counters`) is
    // read under `lock` (shared) and written under it (exclusive).
    let source: DerivedSource
    /// The document layout, for document collections and the link table (`verify`, `repair`).
    let layout: DocumentLayout?
    let indexes: [any DerivedIndex]
    let vectors: [String: any VectorFieldSearching]
    /// The R*Tree of each point field.
    let geo: [String: GeoIndex]
    /// The in-memory BM25 leg of the full-text fields, where it ranks as FTS5 does.
    let text: TextFieldIndex?
    let lock: ReadWriteLock
    /// The last change-log seq the in-memory indexes reflect; -1 before the first load.
    private var watermark: Int64 = -1
    /// How often the log was read and the table scanned (tests check one catch-up per query).
    private var counters = DerivedIndexCounters()

    init(layout: DocumentLayout) {
        var indexes: [any DerivedIndex] = []
        var vectors: [String: any VectorFieldSearching] = [:]
        for field in layout.schema.fields {
            if case .vector(let dimension, let metric) = field.type {
                let index: any VectorFieldSearching
                if let configuration = layout.schema.vectorIndexes[field.name]?.hnswConfiguration {
                    index = HNSWVectorIndex(field: field.name, dimension: dimension, metric: metric, configuration: configuration)
                } else {
                    index = FlatVectorIndex(field: field.name, dimension: dimension, metric: metric)
                }
                vectors[field.name] = index
                indexes.append(index)
            }
        }
        var text: TextFieldIndex?
        if let fullText = layout.schema.fullText {
            indexes.append(FullTextIndex(fullText))
            text = TextFieldIndex(fullText)
            if let text { indexes.append(text) }
        }
        let btrees = layout.indexDefinitions.indices.map { "\(layout.name)_i\($0)" }
        if !btrees.isEmpty { indexes.append(BTreeIndexes(names: btrees)) }
        let references = layout.schema.referenceFields
        if !references.isEmpty { indexes.append(ReferenceConstraints(fields: references)) }
        var geo: [String: GeoIndex] = [:]
        for field in layout.pointFields {
            let index = GeoIndex(field: field, layout: layout)
            geo[field] = index
            indexes.append(index)
        }
        self.source = DerivedSource(layout: layout)
        self.lock = ReadWriteLock()
        self.layout = layout
        self.indexes = indexes
        self.inMemory = indexes.filter { !$0.columns.isEmpty }
        self.vectors = vectors
        self.geo = geo
        self.text = text
    }

    /// A set of given indexes over a table that follows the document layout's conventions
    /// (`id` integer primary key, trigger-fed `<name>_log`), such as the edge table.
    convenience init(layout: DocumentLayout, indexes: [any DerivedIndex]) {
        self.init(source: DerivedSource(layout: layout), layout: layout, indexes: indexes)
    }

    /// A set of given indexes over any table with a change log (a search collection's).
    /// `prefersWriters` (see ``ReadWriteLock``): a search that must catch up is never starved by
    /// a stream of searches; only for sets whose readers never take the lock twice on one thread
    /// (search collections: each search takes it once, in ``withCurrentIndexes(_:loading:_:)``).
    /// `vectors` and `text` name the indexes of vector fields and of the full-text fields.
    init(source: DerivedSource, layout: DocumentLayout? = nil, indexes: [any DerivedIndex], prefersWriters: Bool = false,
         vectors: [String: any VectorFieldSearching] = [:], text: TextFieldIndex? = nil) {
        self.source = source
        self.lock = ReadWriteLock(prefersWriters: prefersWriters)
        self.layout = layout
        self.indexes = indexes
        self.inMemory = indexes.filter { !$0.columns.isEmpty }
        self.vectors = vectors
        self.geo = [:]
        self.text = text
    }

    /// The indexes kept in memory (SQLite keeps the others).
    private let inMemory: [any DerivedIndex]

    /// Brings in-memory indexes up to the state `connection` sees. Call inside the read
    /// transaction the query will use, so the log and the rows come from one snapshot.
    ///
    /// Indexes load lazily: `loading` names the ones this query needs (nil: all of them); those
    /// not yet built are built from the table (or loaded from what they saved, then brought to the
    /// shared watermark by the log), the ones already built replay the log, and the rest stay
    /// unbuilt (a text query does not load the vectors). All built indexes share one watermark,
    /// so they always reflect the same committed state.
    ///
    /// - Complexity: O(changes since the last catch-up); O(rows) for an index's first load or
    ///   after the log was pruned past the watermark.
    func catchUp(_ connection: Connection, loading needed: [any DerivedIndex]? = nil) throws {
        let (maxSeq, floor) = try source.changeLog.state(connection)
        if lock.read({ isCurrentLocked(maxSeq: maxSeq, floor: floor, needed: needed) }) { return }
        try lock.write { try catchUpLocked(connection, maxSeq: maxSeq, floor: floor, needed: needed) }
    }

    /// After the writer commits: applies the commit now, so readers find the indexes current,
    /// unless a search holds the lock (then the next reader catches up instead; the writer never
    /// waits for readers). Loads nothing new. Errors are left for that reader to meet.
    func catchUpAfterCommit(_ connection: Connection) {
        guard !connection.isInTransaction, lock.read({ inMemory.contains(where: \.isLoaded) }) else { return }
        // One read transaction, begun under the lock: the log and the rows from one snapshot,
        // never older than the indexes.
        _ = try? lock.tryWrite {
            try connection.transaction(.deferred) {
                let (maxSeq, floor) = try source.changeLog.state(connection)
                try catchUpLocked(connection, maxSeq: maxSeq, floor: floor, needed: [], afterCommit: true)
            }
        }
    }

    /// Runs `body` in one read transaction on `connection` with every built index, and those in
    /// `needed`, reflecting that transaction's snapshot: under the shared lock when they already
    /// do (searches of one collection then run at once), otherwise after a catch-up under the
    /// exclusive lock. `body` may meet an index it did not announce (``DerivedIndexScope/require(_:)``):
    /// it is then run again exclusively with that index loaded, so it must only read.
    ///
    /// The snapshot is taken while the lock is held, so the indexes are never ahead of it.
    func withCurrentIndexes<T>(
        _ connection: Connection, loading needed: [any DerivedIndex], _ body: (DerivedIndexScope) throws -> T
    ) throws -> T {
        var needed = needed
        do {
            let shared = try lock.read { () throws -> T? in
                try connection.transaction(.deferred) { () throws -> T? in
                    let (maxSeq, floor) = try source.changeLog.state(connection)
                    guard isCurrentLocked(maxSeq: maxSeq, floor: floor, needed: needed) else { return nil }
                    return try body(DerivedIndexScope(set: self, connection: connection, maxSeq: maxSeq, floor: floor, isExclusive: false))
                }
            }
            if let shared { return shared }
        } catch let missing as DerivedIndexScope.NotLoaded {
            needed += indexes.filter { ObjectIdentifier($0) == missing.index }
        }
        return try withExclusiveIndexes(connection, loading: needed, body)
    }

    /// Runs `body` under the exclusive lock in one read transaction (or savepoint) on `connection`,
    /// after catching up the built indexes and `needed` with it. For saving snapshots, statistics
    /// that must not race a catch-up, and searches whose indexes were behind.
    func withExclusiveIndexes<T>(
        _ connection: Connection, loading needed: [any DerivedIndex]?, _ body: (DerivedIndexScope) throws -> T
    ) throws -> T {
        try lock.write {
            try connection.transaction(.deferred) {
                let (maxSeq, floor) = try source.changeLog.state(connection)
                try catchUpLocked(connection, maxSeq: maxSeq, floor: floor, needed: needed)
                return try body(DerivedIndexScope(set: self, connection: connection, maxSeq: maxSeq, floor: floor, isExclusive: true))
            }
        }
    }

    /// The catch-up counters so far.
    var statistics: DerivedIndexCounters { lock.read { counters } }

    /// The shared watermark (-1 before the first load), taking the lock.
    var currentWatermark: Int64 { lock.read { watermark } }
    /// The same, for a caller that holds the lock.
    var currentWatermarkLocked: Int64 { watermark }

    /// Whether the built indexes and `needed` reflect exactly this log state. Caller holds `lock`.
    private func isCurrentLocked(maxSeq: Int64, floor: Int64, needed: [any DerivedIndex]?) -> Bool {
        let memory = inMemory
        let wanted = needed.map { needed in memory.filter { index in needed.contains { $0 === index } } } ?? memory
        guard wanted.allSatisfy(\.isLoaded) else { return false }
        guard memory.contains(where: \.isLoaded) else { return true }
        // A newer snapshot than ours may already have been applied by another reader where
        // snapshots are taken outside the lock: the index then reflects a later committed state,
        // which is still never a half-applied one.
        let ahead = source.watermarkMayLeadSnapshots ? maxSeq <= watermark : maxSeq == watermark
        return watermark >= 0 && watermark >= floor && ahead
    }

    /// The one catch-up. Caller holds `lock` exclusively, inside the read transaction whose
    /// snapshot `maxSeq` and `floor` describe.
    func catchUpLocked(
        _ connection: Connection, maxSeq: Int64, floor: Int64, needed: [any DerivedIndex]?, afterCommit: Bool = false
    ) throws {
        if isCurrentLocked(maxSeq: maxSeq, floor: floor, needed: needed) { return }
        counters.catchUps += 1
        let memory = inMemory
        let wanted = needed.map { needed in memory.filter { index in needed.contains { $0 === index } } } ?? memory
        let built = memory.filter(\.isLoaded)
        let missing = wanted.filter { !$0.isLoaded }
        let valid = watermark >= 0 && watermark >= floor
        // A log behind the watermark: an older reader's snapshot (a built index cannot be moved
        // back by the log, so it rebuilds them all), or where snapshots are taken under the lock
        // a log that was rolled back or recreated.
        let behind = maxSeq < watermark && (!missing.isEmpty || !source.watermarkMayLeadSnapshots)
        let rebuildAll = !valid || built.isEmpty || behind
        var fromTable: [any DerivedIndex] = []
        var replayed: [any DerivedIndex] = []
        var replayAfter = Int64.max
        for index in rebuildAll ? built + missing : missing {
            if let saved = try index.loadSaved(connection, maxSeq: maxSeq, floor: floor) {
                replayed.append(index)
                replayAfter = min(replayAfter, saved)
            } else {
                fromTable.append(index)
            }
        }
        if !rebuildAll, maxSeq > watermark {
            replayed += built
            replayAfter = min(replayAfter, watermark)
        }
        if !fromTable.isEmpty { try build(fromTable, connection) }
        // One replay for every index that needs one: it applies each changed row's current
        // state, so replaying from the oldest of their watermarks is right for all of them.
        if !replayed.isEmpty, maxSeq > replayAfter { try replay(replayed, after: replayAfter, connection) }
        for index in fromTable { index.finishApplying(.build) }
        for index in replayed { index.finishApplying(afterCommit ? .commit : .replay) }
        watermark = maxSeq
    }

    /// Builds `memory` from the table.
    private func build(_ memory: [any DerivedIndex], _ connection: Connection) throws {
        counters.builds += 1
        let count = try connection.scalar("SELECT count(*) FROM \(source.table)")?.int64Value ?? 0
        for index in memory {
            index.reset()
            index.reserve(rows: Int(count))
        }
        let columns = memory.flatMap(\.columns).joined(separator: ", ")
        // Each index's first column, computed once (`columns` builds its array on every call).
        let first = firstColumns(memory, after: 1)
        let rows = try connection.prepare("SELECT \(source.rid), \(columns) FROM \(source.table)")
        try rows.forEachRow { row in
            for (index, column) in zip(memory, first) {
                index.apply(rid: row.int64(at: 0), statement: row, firstColumn: column)
            }
        }
    }

    /// Applies the current state of every row the log names after `seq` to `memory`.
    private func replay(_ memory: [any DerivedIndex], after seq: Int64, _ connection: Connection) throws {
        counters.replays += 1
        let changed = try connection.cachedStatement(
            """
            SELECT l.\(source.logRid), t.\(source.rid) IS NOT NULL, \(memory.flatMap(\.columns).map { "t.\($0)" }.joined(separator: ", "))
            FROM (SELECT DISTINCT \(source.logRid) FROM \(source.log) WHERE seq > ?) AS l
            LEFT JOIN \(source.table) AS t ON t.\(source.rid) = l.\(source.logRid)
            """)
        let first = firstColumns(memory, after: 2)
        try changed.forEachRow([.integer(seq)]) { row in
            let exists = row.int64(at: 1) != 0
            for (index, column) in zip(memory, first) {
                index.apply(rid: row.int64(at: 0), statement: exists ? row : nil, firstColumn: column)
            }
        }
    }

    /// The result column where each index's ``DerivedIndex/columns`` start, the first at `start`.
    private func firstColumns(_ memory: [any DerivedIndex], after start: Int) -> [Int] {
        var column = start
        return memory.map { index in
            defer { column += index.columns.count }
            return column
        }
    }

    /// Forces a rebuild of the in-memory indexes at the next catch-up.
    func invalidate() { lock.write { watermark = -1 } }

    /// Problems in any index, by name (empty when all agree with the table).
    func verify(_ connection: Connection) throws -> [String] {
        guard let layout else { return [] }
        try catchUp(connection)
        return try lock.read { try indexes.flatMap { try $0.verify(connection, layout: layout) } }
    }

    /// Rebuilds every index from the table.
    func repair(_ connection: Connection) throws {
        if let layout {
            for index in indexes { try index.rebuildInSQLite(connection, layout: layout) }
        }
        invalidate()
    }
}
