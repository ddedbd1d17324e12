import Foundation
import TroveSQLite
import TroveVectors

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
                    index = HNSWVectorIndex(
                        field: field.name, dimension: dimension, metric: metric,
                        configuration: configuration,
                        snapshot: layout.snapshotLocation(for: field.name))
                } else {
                    index = FlatVectorIndex(
                        field: field.name, dimension: dimension, metric: metric,
                        snapshot: layout.snapshotLocation(for: field.name, flat: true))
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
    /// `prefersWriters` (see TroveVectors' `ReadWriteLock`): a search that must catch up is never starved by
    /// a stream of searches; only for sets whose readers never take the lock twice on one thread
    /// (search collections: each search takes it once, in ``withCurrentIndexes(_:loading:_:)``).
    /// `vectors` and `text` name the indexes of vector fields and of the full-text fields.
    init(
        source: DerivedSource, layout: DocumentLayout? = nil, indexes: [any DerivedIndex],
        prefersWriters: Bool = false,
        vectors: [String: any VectorFieldSearching] = [:], text: TextFieldIndex? = nil
    ) {
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
        try lock.write {
            try catchUpLocked(connection, maxSeq: maxSeq, floor: floor, needed: needed)
        }
    }

    /// After the writer commits: applies the commit now, so readers find the indexes current,
    /// unless a search holds the lock (then the next reader catches up instead; the writer never
    /// waits for readers). Loads nothing new. Errors are left for that reader to meet.
    func catchUpAfterCommit(_ connection: Connection) {
        guard !connection.isInTransaction, lock.read({ inMemory.contains(where: \.isLoaded) })
        else { return }
        // One read transaction, begun under the lock: the log and the rows from one snapshot,
        // never older than the indexes.
        _ = try? lock.tryWrite {
            try connection.transaction(.deferred) {
                let (maxSeq, floor) = try source.changeLog.state(connection)
                try catchUpLocked(
                    connection, maxSeq: maxSeq, floor: floor, needed: [], afterCommit: true)
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
        _ connection: Connection, loading needed: [any DerivedIndex],
        _ body: (DerivedIndexScope) throws -> T
    ) throws -> T {
        var needed = needed
        do {
            let shared = try lock.read { () throws -> T? in
                try connection.transaction(.deferred) { () throws -> T? in
                    let (maxSeq, floor) = try source.changeLog.state(connection)
                    guard isCurrentLocked(maxSeq: maxSeq, floor: floor, needed: needed) else {
                        return nil
                    }
                    return try body(
                        DerivedIndexScope(
                            set: self, connection: connection, maxSeq: maxSeq, floor: floor,
                            isExclusive: false))
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
        _ connection: Connection, loading needed: [any DerivedIndex]?,
        _ body: (DerivedIndexScope) throws -> T
    ) throws -> T {
        try lock.write {
            try connection.transaction(.deferred) {
                let (maxSeq, floor) = try source.changeLog.state(connection)
                try catchUpLocked(connection, maxSeq: maxSeq, floor: floor, needed: needed)
                return try body(
                    DerivedIndexScope(
                        set: self, connection: connection, maxSeq: maxSeq, floor: floor,
                        isExclusive: true))
            }
        }
    }

    /// Tests only: called by every search leg while it holds the shared lock, so a test can see
    /// two searches inside at once (PresetConcurrencyTests).
    var searchHook: (@Sendable () -> Void)? {
        get { hookLock.withLock { hook } }
        set { hookLock.withLock { hook = newValue } }
    }
    private let hookLock = NSLock()
    private var hook: (@Sendable () -> Void)?

    /// The catch-up counters so far.
    var statistics: DerivedIndexCounters { lock.read { counters } }

    /// The shared watermark (-1 before the first load), taking the lock.
    var currentWatermark: Int64 { lock.read { watermark } }
    /// The same, for a caller that holds the lock.
    var currentWatermarkLocked: Int64 { watermark }

    /// Whether the built indexes and `needed` reflect exactly this log state. Caller holds `lock`.
    private func isCurrentLocked(maxSeq: Int64, floor: Int64, needed: [any DerivedIndex]?) -> Bool {
        let memory = inMemory
        let wanted =
            needed.map { needed in memory.filter { index in needed.contains { $0 === index } } }
            ?? memory
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
        _ connection: Connection, maxSeq: Int64, floor: Int64, needed: [any DerivedIndex]?,
        afterCommit: Bool = false
    ) throws {
        if isCurrentLocked(maxSeq: maxSeq, floor: floor, needed: needed) { return }
        counters.catchUps += 1
        let memory = inMemory
        let wanted =
            needed.map { needed in memory.filter { index in needed.contains { $0 === index } } }
            ?? memory
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
        if !replayed.isEmpty, maxSeq > replayAfter {
            try replay(replayed, after: replayAfter, connection)
        }
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
    private func replay(_ memory: [any DerivedIndex], after seq: Int64, _ connection: Connection)
        throws
    {
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
                index.apply(
                    rid: row.int64(at: 0), statement: exists ? row : nil, firstColumn: column)
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
