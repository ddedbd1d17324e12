import Foundation
import TroveSQLite

/// What a ``DerivedIndexSet`` derives its indexes from: a table, the column that names its rows,
/// and the trigger-fed change log (`seq`, row column, `op`) that records every change to it.
/// Document collections and the link table describe theirs with their ``DocumentLayout``, search
/// collections (their preset layout) the same way.
struct DerivedSource {
    /// The quoted table.
    let table: String
    /// The table's row-id column (quoted), the key the in-memory indexes use.
    let rid: String
    /// The quoted change-log table.
    let log: String
    /// The log's column naming the changed row.
    let logRid: String
    let changeLog: ChangeLog
    /// Whether a catch-up may meet indexes that already reflect a newer snapshot than its own
    /// (readers that take their snapshot before the set's lock: document collections). Where
    /// every snapshot is taken while holding the lock (search collections), a log behind the
    /// watermark can only have been rolled back or recreated, and the indexes are rebuilt.
    let watermarkMayLeadSnapshots: Bool
}

extension DerivedSource {
    /// A document collection's table (or the link table) and its `<name>_log(seq, rid, op)`.
    init(layout: DocumentLayout) {
        self.init(
            table: layout.table, rid: layout.rid, log: layout.log, logRid: layout.logRid,
            changeLog: layout.changeLog,
            watermarkMayLeadSnapshots: true)
    }
}

/// How often a ``DerivedIndexSet`` did real work: catch-ups that changed something, table scans
/// that built indexes, and log replays. A query should cost at most one catch-up and one replay,
/// whatever the number of indexes it uses.
struct DerivedIndexCounters: Sendable, Equatable {
    var catchUps = 0
    var builds = 0
    var replays = 0
}

/// The indexes of one query, caught up with the query's snapshot (``DerivedIndexSet/withCurrentIndexes(_:loading:_:)``).
/// Valid only inside that call, on the thread that runs it.
struct DerivedIndexScope {
    let set: DerivedIndexSet
    let connection: Connection
    /// The snapshot's change-log state, read once.
    let maxSeq: Int64
    let floor: Int64
    /// Whether the set's lock is held exclusively (else shared).
    let isExclusive: Bool

    /// Thrown by ``require(_:)`` under the shared lock for an index that is not built yet;
    /// ``DerivedIndexSet/withCurrentIndexes(_:loading:_:)`` catches it and runs the query
    /// again exclusively with the index loaded.
    struct NotLoaded: Error {
        let index: ObjectIdentifier
    }

    /// Makes sure `index` is built and current before the query uses it: it always is when the
    /// query announced it; otherwise it is loaded now (exclusive) or the query starts over.
    func require(_ index: any DerivedIndex) throws {
        if index.isLoaded { return }
        guard isExclusive else { throw NotLoaded(index: ObjectIdentifier(index)) }
        try set.catchUpLocked(connection, maxSeq: maxSeq, floor: floor, needed: [index])
    }
}
