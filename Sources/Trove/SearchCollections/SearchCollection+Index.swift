import Foundation

/// A search collection's vector index is its `embedding` field's: these are
/// ``DocumentCollection``'s index calls for that field.
extension SearchCollection {
    /// Writes the vector index's snapshot (the HNSW graph, or the flat matrix), with the
    /// change-log watermark it reflects, so the next open reads it back in one pass instead of
    /// rebuilding it (also done by ``loadIndex()`` and ``Database/saveIndexes()``, and after API
    /// writes once 5,000 change-log entries are unsaved; flat from 10,000 vectors up).
    ///
    /// ```swift
    /// try await docs.insert(entries)
    /// try await docs.saveIndex()
    /// ```
    @discardableResult
    public func saveIndex() async throws -> IndexStatistics {
        try await documents.saveIndex(field: "embedding")
    }

    /// Loads the vector index now (instead of on the first query) and catches it up with the
    /// table; an index that had to be built is saved at once when the file is writable.
    ///
    /// ```swift
    /// let stats = try await docs.loadIndex()
    /// print(stats.origin, stats.loadSeconds)
    /// ```
    @discardableResult
    public func loadIndex() async throws -> IndexStatistics {
        try await documents.loadIndex(field: "embedding")
    }

    /// Discards the in-memory index and any snapshot, rebuilds it from the table and (writable
    /// file) saves the new snapshot. For repair tools: a snapshot that fails a check is
    /// rebuilt automatically.
    @discardableResult
    public func rebuildIndex() async throws -> IndexStatistics {
        try await documents.rebuildIndex(field: "embedding")
    }

    /// Where the vector index came from, its size and watermarks.
    public func indexStatistics() async throws -> IndexStatistics {
        try await documents.indexStatistics(field: "embedding")
    }
}
