import Foundation
import TroveSQLite

extension Database {
    /// Saves the snapshot of every loaded vector index (HNSW graph or flat matrix) holding
    /// unsaved changes, search collections' and document collections' alike, so the next open
    /// reads them back in one pass (call it when the app goes to the background or before it
    /// exits). Then copies the write-ahead log back into the main file as far as readers allow
    /// (a passive checkpoint): the next open reads the snapshots through its memory map, where
    /// read from the log they load at a fraction of the speed.
    ///
    /// ```swift
    /// try await database.saveIndexes()
    /// ```
    /// - Returns: the names of the collections saved, sorted.
    @discardableResult
    public func saveIndexes() throws -> [String] {
        var saved: [String] = []
        for store in documentStores.all where store.hasUnsavedSnapshots {
            if try store.saveSnapshots(on: connection) { saved.append(store.name) }
        }
        if !saved.isEmpty {
            // A background checkpoint in flight holds the checkpoint lock: wait for it first.
            checkpointer?.flush()
            _ = try connection.query("PRAGMA wal_checkpoint(PASSIVE)")
        }
        return saved.sorted()
    }

    /// Runs `body` with the writer connection, outside any transaction of its own (index
    /// administration opens the transactions it needs).
    func withWriter<T: Sendable>(_ body: @Sendable (Connection) throws -> T) throws -> T {
        try body(connection)
    }
}
