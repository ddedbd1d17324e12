import Foundation
import TroveSQLite

extension Database {
    /// Saves the snapshot of every loaded vector index (HNSW graph or flat matrix) holding
    /// unsaved changes, search collections' and document collections' alike, so the next open
    /// reads them back in one pass (call it when the app goes to the background or before it
    /// exits).
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
        return saved.sorted()
    }

    /// Runs `body` with the writer connection, outside any transaction of its own (index
    /// administration opens the transactions it needs).
    func withWriter<T: Sendable>(_ body: @Sendable (Connection) throws -> T) throws -> T {
        try body(connection)
    }
}
