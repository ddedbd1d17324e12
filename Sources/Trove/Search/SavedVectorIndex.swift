import Foundation
import TroveSQLite
import TroveVectors

/// An in-memory vector index that is saved as a snapshot (``IndexSnapshotStore``) with the
/// change-log seq it reflects, and loaded from it on first use instead of being rebuilt row by
/// row: the HNSW graph (``HNSWVectorIndex``) and the flat matrix (``FlatVectorIndex``).
///
/// Its ``DerivedIndexSet`` replays the log after the saved seq. A snapshot is refused, and the
/// index built from the table, when it fails a check (size, parts, checksum, dimension, metric,
/// parameters), or its seq is below the pruned log floor or above the log's newest seq (the log
/// was recreated). Mutable state is read under the owning set's lock (shared) and changed under
/// it (exclusive).
protocol SavedVectorIndex: VectorFieldSearching {
    /// Where this field's snapshot is saved.
    var snapshot: IndexSnapshotStore.Location { get }
    /// The load bookkeeping (origin, saved watermark, timings).
    var load: SnapshotLoadState { get set }
    /// Whether the writer saves this index by itself after commits (``DocumentStore/autosaveSnapshots(on:)``).
    var autosaves: Bool { get }
    /// Forgets the index and has the next load build it from the table, whatever is saved.
    func requestRebuild()
    /// Writes the loaded index as the snapshot at `watermark`; caller holds the set's lock
    /// exclusively inside a write transaction. Nothing when not loaded.
    func save(to store: IndexSnapshotStore, watermark: Int64) throws
}

/// Where a ``SavedVectorIndex`` came from and what its loads cost.
struct SnapshotLoadState {
    /// The watermark of the stored snapshot the index descends from (nil: nothing saved since
    /// the last build from the table).
    var savedWatermark: Int64?
    var origin: IndexStatistics.Origin = .notLoaded
    /// Seconds the last load (snapshot and replay) or build took.
    private(set) var seconds = 0.0
    /// Rows replayed from the change log by queries since the index was loaded.
    private(set) var replayedRows = 0
    /// Why the next build from the table happens (set when a snapshot is refused).
    var rebuildReason = Self.noSnapshot
    private var started: ContinuousClock.Instant?
    /// Set by a requested rebuild: the next load skips the snapshot.
    var ignoresSnapshot = false

    static let noSnapshot = "no snapshot saved"

    /// The index is being built from the table.
    mutating func buildBegins() {
        if started == nil { started = .now }
        origin = .rebuilt(reason: rebuildReason)
        rebuildReason = Self.noSnapshot
        savedWatermark = nil
        replayedRows = 0
    }

    /// The index was forgotten.
    mutating func unloaded() {
        origin = .notLoaded
        savedWatermark = nil
    }

    /// A load starts; false when it must build from the table without looking at the snapshot.
    mutating func loadBegins() -> Bool {
        started = .now
        guard !ignoresSnapshot else {
            ignoresSnapshot = false
            rebuildReason = "rebuild requested"
            return false
        }
        return true
    }

    /// Why a snapshot saved at `saved` cannot be caught up by the log (nil: it can).
    static func watermarkProblem(saved: Int64, maxSeq: Int64, floor: Int64) -> String? {
        if saved < floor {
            return "snapshot watermark \(saved) is below the pruned log floor \(floor)"
        }
        if saved > maxSeq {
            return "snapshot watermark \(saved) is ahead of the change log (newest seq \(maxSeq))"
        }
        return nil
    }

    /// The index was loaded from the snapshot saved at `watermark`.
    mutating func loadedSnapshot(watermark: Int64) {
        origin = .snapshot
        savedWatermark = watermark
        replayedRows = 0
    }

    /// A pass of `rows` rows was applied.
    mutating func finished(_ pass: DerivedIndexPass, rows: Int) {
        if pass == .replay { replayedRows += rows }
        if let started, pass != .commit {
            let d = ContinuousClock.now - started
            seconds = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
            self.started = nil
        }
    }
}

extension SavedVectorIndex {
    /// A repair rebuilds from the table: the stored snapshot goes (the set then rebuilds, finding none).
    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {
        try IndexSnapshotStore(connection: connection, location: snapshot).delete()
    }
}
