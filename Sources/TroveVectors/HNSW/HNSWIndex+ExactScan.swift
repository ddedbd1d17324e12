import Foundation

extension HNSWIndex {
    /// The exact `k` nearest live vectors to `query`, by scanning every stored float32 vector
    /// (no graph walk): lets a store answer `exact: true` without keeping a second copy of the
    /// vectors in a `FlatIndex`.
    ///
    /// ```swift
    /// let truth = index.exactSearch(query, k: 10)
    /// ```
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results; `k <= 0` returns `[]`.
    /// - Returns: `min(k, count)` results, nearest first.
    /// - Complexity: O(n · dimension).
    public func exactSearch(_ query: [Float], k: Int) -> [Neighbor] {
        precondition(query.count == dimension, "expected \(dimension) floats, got \(query.count)")
        return lock.read { exactSearch(query, k: k, slots: 0..<UInt32(slotCount)) }
    }
}
