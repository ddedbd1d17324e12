import Foundation
import TroveSQLite

/// Saving, loading and rebuilding the in-memory index of one vector field, and what is known
/// about it (``IndexStatistics``): the administration behind `DocumentCollection.saveIndex(field:)`
/// and its siblings, and the automatic saves after writes. Run on the writer connection.
extension DocumentStore {
    /// An API write that leaves a saved vector index this many change-log entries past its
    /// snapshot saves a new one: half the entries a log prune keeps (``ChangeLog/keep``), so the
    /// saved watermark stays above the pruned floor while this connection does the writing.
    static let snapshotAutosaveChanges: Int64 = 5_000

    /// The vector fields' indexes, by field name.
    var savedIndexes: [any SavedVectorIndex] {
        indexes.vectors.values.compactMap { $0 as? any SavedVectorIndex }.sorted {
            $0.field < $1.field
        }
    }

    /// The in-memory index of the vector field `field`.
    ///
    /// - Throws: ``TroveError/unknownField(field:known:)`` naming the vector fields.
    func vectorIndex(_ field: String) throws -> any VectorFieldSearching {
        guard let index = indexes.vectors[field] else {
            throw TroveError.unknownField(field: field, known: indexes.vectors.keys.sorted())
        }
        return index
    }

    /// Writes `index` (its graph or matrix) with the change-log seq it reflects, in one write
    /// transaction (nobody can write between the catch-up and the save). Loads the index first
    /// if needed.
    ///
    /// - Returns: the saved watermark.
    /// - Complexity: O(n · dimension) bytes written (plus the links of a graph).
    @discardableResult
    func saveSnapshot(of index: any SavedVectorIndex, on connection: Connection) throws -> Int64 {
        try connection.transaction(.immediate) {
            try indexes.withExclusiveIndexes(connection, loading: [index]) { scope in
                guard index.isLoaded else { return scope.maxSeq }
                try index.save(
                    to: IndexSnapshotStore(connection: connection, location: index.snapshot),
                    watermark: scope.maxSeq)
                index.load.savedWatermark = scope.maxSeq
                return scope.maxSeq
            }
        }
    }

    /// Whether some loaded vector index holds changes its stored snapshot lacks.
    var hasUnsavedSnapshots: Bool {
        indexes.lock.read {
            savedIndexes.contains {
                $0.isLoaded && $0.load.savedWatermark != indexes.currentWatermarkLocked
            }
        }
    }

    /// Saves every loaded vector index with unsaved changes. - Returns: whether any was saved.
    @discardableResult
    func saveSnapshots(on connection: Connection) throws -> Bool {
        var saved = false
        for index in savedIndexes
        where indexes.lock.read({
            index.isLoaded && index.load.savedWatermark != indexes.currentWatermarkLocked
        }) {
            try saveSnapshot(of: index, on: connection)
            saved = true
        }
        return saved
    }

    /// After a write committed on the writer: saves the snapshot of every loaded vector index
    /// that saves itself (``SavedVectorIndex/autosaves``) at least ``snapshotAutosaveChanges``
    /// entries past its saved one (or never saved). Best effort: the rows are committed; a
    /// failed save only means a slower next open.
    func autosaveSnapshots(on connection: Connection) {
        guard !connection.isReadOnly, !connection.isInTransaction else { return }
        for index in savedIndexes {
            let due = indexes.lock.read {
                index.isLoaded && index.autosaves
                    && indexes.currentWatermarkLocked - (index.load.savedWatermark ?? Int64.min / 2)
                        >= Self.snapshotAutosaveChanges
            }
            if due { _ = try? saveSnapshot(of: index, on: connection) }
        }
    }

    /// Loads the index of `field` now and catches it up; an index that had to be built from the
    /// table is saved at once when the connection can write.
    func loadIndex(field: String, on connection: Connection) throws -> IndexStatistics {
        let index = try vectorIndex(field)
        try indexes.withExclusiveIndexes(connection, loading: [index]) { _ in }
        if let saved = index as? any SavedVectorIndex,
            indexes.lock.read({ saved.load.savedWatermark == nil }),
            !connection.isReadOnly, !connection.isInTransaction
        {
            try saveSnapshot(of: saved, on: connection)
        }
        return try indexStatistics(field: field)
    }

    /// Builds the index of `field` from the table (the other indexes stay as they are): the
    /// stored snapshot is discarded and, when the connection can write, a new one saved.
    func rebuildIndex(field: String, on connection: Connection) throws -> IndexStatistics {
        let index = try vectorIndex(field)
        let saved = index as? any SavedVectorIndex
        let writable = !connection.isReadOnly && !connection.isInTransaction
        if let saved, writable {
            try connection.transaction(.immediate) {
                try IndexSnapshotStore(connection: connection, location: saved.snapshot).delete()
            }
        }
        indexes.lock.write {
            if let saved { saved.requestRebuild() } else { index.unload() }
        }
        try indexes.withExclusiveIndexes(connection, loading: [index]) { _ in }
        if let saved, writable { try saveSnapshot(of: saved, on: connection) }
        return try indexStatistics(field: field)
    }

    /// Where the index of `field` came from, its size and watermarks.
    func indexStatistics(field: String) throws -> IndexStatistics {
        let index = try vectorIndex(field)
        let kind = schema.vectorIndexes[field] ?? .flat
        return indexes.lock.read {
            let watermark = index.isLoaded ? max(indexes.currentWatermarkLocked, 0) : 0
            guard let saved = index as? any SavedVectorIndex, saved.isLoaded else {
                return IndexStatistics(
                    kind: kind, origin: .notLoaded, vectorCount: index.count,
                    watermark: watermark, snapshotWatermark: nil, loadSeconds: 0, replayedRows: 0)
            }
            return IndexStatistics(
                kind: kind, origin: saved.load.origin, vectorCount: saved.count,
                watermark: watermark,
                snapshotWatermark: saved.load.savedWatermark, loadSeconds: saved.load.seconds,
                replayedRows: saved.load.replayedRows)
        }
    }
}
