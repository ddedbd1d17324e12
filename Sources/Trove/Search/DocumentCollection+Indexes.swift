import Foundation

/// The in-memory index of one vector field: save it, load or rebuild it now, see where it came
/// from. Vector indexes load on the first query that needs them: from their saved snapshot (an
/// HNSW graph, a flat index's matrix) caught up from the change log, or built from the table
/// when there is no usable snapshot.
extension DocumentCollection {
    /// Writes the index of `field` (an HNSW graph, a flat index's matrix), with the change-log
    /// watermark it reflects, to the collection's `<name>_index` table, so the next open reads
    /// it back in one pass instead of rebuilding it row by row.
    ///
    /// Snapshots are also written by ``loadIndex(field:)`` and ``Database/saveIndexes()``, and
    /// after API writes once 5,000 change-log entries are unsaved (flat fields from 10,000
    /// vectors up: smaller ones are read from the table in a few milliseconds).
    ///
    /// ```swift
    /// try await items.insert(documents)
    /// try await items.saveIndex(field: "embedding")
    /// ```
    /// - Returns: the index statistics after saving.
    /// - Throws: ``TroveError/unknownField(field:known:)`` when `field` is no vector field;
    ///   `SQLiteError` (for example on a read-only database).
    /// - Complexity: O(n · dimension) bytes written (plus the links of a graph).
    @discardableResult
    public func saveIndex(field: String) async throws -> IndexStatistics {
        let store = self.store
        return try await database.withWriter { connection in
            let index = try store.vectorIndex(field)
            if let saved = index as? any SavedVectorIndex {
                try store.saveSnapshot(of: saved, on: connection)
            } else {
                try store.indexes.withExclusiveIndexes(connection, loading: [index]) { _ in }
            }
            return try store.indexStatistics(field: field)
        }
    }

    /// Loads the index of `field` now (instead of on the first query) and catches it up with
    /// the table. An index that had to be built from the table is saved right away when the
    /// database is writable, so the next open can load it.
    ///
    /// ```swift
    /// let stats = try await items.loadIndex(field: "embedding")
    /// print(stats.origin, stats.loadSeconds)
    /// ```
    @discardableResult
    public func loadIndex(field: String) async throws -> IndexStatistics {
        let store = self.store
        return try await database.withWriter { try store.loadIndex(field: field, on: $0) }
    }

    /// Discards the in-memory index of `field` and any saved snapshot of it, builds it from the
    /// table and (on a writable database) saves the new snapshot. For repair tools: a snapshot
    /// that fails a check is rebuilt automatically.
    ///
    /// ```swift
    /// let stats = try await items.rebuildIndex(field: "embedding")   // .rebuilt(reason: "rebuild requested")
    /// ```
    /// - Complexity: O(n) for flat; O(n · efConstruction · m · log n) / cores for HNSW.
    @discardableResult
    public func rebuildIndex(field: String) async throws -> IndexStatistics {
        let store = self.store
        return try await database.withWriter { try store.rebuildIndex(field: field, on: $0) }
    }

    /// Where the index of `field` came from, its size and watermarks.
    public func indexStatistics(field: String) async throws -> IndexStatistics {
        let store = self.store
        return try await database.withWriter { _ in try store.indexStatistics(field: field) }
    }
}
