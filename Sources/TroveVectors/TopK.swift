/// Bounded selection of the `k` nearest results: a max-heap on (distance, id) holding at most
/// `k` entries, so a scan over `n` candidates costs O(n log k) and O(k) memory.
///
/// Ties are broken by the smaller id, so results are deterministic whatever the scan order.
/// `worstDistance` lets a scan skip the heap for the (vast) majority of candidates that cannot
/// enter it.
///
/// ```swift
/// var top = TopK(k: 2)
/// top.insert(id: 7, distance: 0.5)
/// top.insert(id: 3, distance: 0.1)
/// top.insert(id: 9, distance: 0.9)     // not kept
/// top.sortedResults()                  // [(3, 0.1), (7, 0.5)]
/// ```
public struct TopK: Sendable {
    /// How many results are kept.
    public let k: Int
    // Max-heap by (distance, id): the root is the worst kept result. O(k) entries.
    @usableFromInline var heap: [Neighbor]

    /// Creates an empty selection keeping at most `k` results (`k <= 0` keeps nothing).
    /// - Parameter k: the number of results to keep.
    public init(k: Int) {
        self.k = max(0, k)
        heap = []
        heap.reserveCapacity(min(self.k, 1 << 16))
    }

    /// The number of results held.
    @inlinable public var count: Int { heap.count }

    /// Whether `k` results are held already.
    @inlinable public var isFull: Bool { heap.count >= k }

    /// The distance a candidate must beat (or tie, with a smaller id) to be kept; `+infinity`
    /// while fewer than `k` results are held.
    @inlinable public var worstDistance: Float {
        heap.count >= k ? (heap.first?.distance ?? -Float.infinity) : Float.infinity
    }

    @inlinable @inline(__always)
    static func isWorse(_ a: Neighbor, than b: Neighbor) -> Bool {
        a.distance > b.distance || (a.distance == b.distance && a.id > b.id)
    }

    /// Offers a candidate; it is kept when fewer than `k` are held or it beats the worst one.
    ///
    /// - Parameters:
    ///   - id: the candidate's id (offer each id at most once).
    ///   - distance: its distance.
    /// - Returns: whether it was kept.
    /// - Complexity: O(log k).
    @inlinable @discardableResult
    public mutating func insert(id: Int64, distance: Float) -> Bool {
        let candidate = Neighbor(id: id, distance: distance)
        if heap.count < k {
            heap.append(candidate)
            siftUp(heap.count - 1)
            return true
        }
        guard k > 0, Self.isWorse(heap[0], than: candidate) else { return false }
        heap[0] = candidate
        siftDown(0)
        return true
    }

    @inlinable
    mutating func siftUp(_ start: Int) {
        var child = start
        let item = heap[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.isWorse(item, than: heap[parent]) else { break }
            heap[child] = heap[parent]
            child = parent
        }
        heap[child] = item
    }

    @inlinable
    mutating func siftDown(_ start: Int) {
        var parent = start
        let item = heap[parent]
        let n = heap.count
        while true {
            var worst = 2 * parent + 1
            if worst >= n { break }
            let right = worst + 1
            if right < n && Self.isWorse(heap[right], than: heap[worst]) { worst = right }
            guard Self.isWorse(heap[worst], than: item) else { break }
            heap[parent] = heap[worst]
            parent = worst
        }
        heap[parent] = item
    }

    /// The kept results, nearest first, ties by smaller id.
    /// - Complexity: O(k log k).
    public func sortedResults() -> [Neighbor] {
        heap.sorted { Self.isWorse($1, than: $0) }
    }
}
