/// Exact k-nearest-neighbour search over a `VectorMatrix`: every (matching) row is compared with
/// the query by a SIMD kernel and the best `k` are kept by a bounded heap.
///
/// The scan streams the contiguous matrix once per query, so its cost is bounded by memory
/// bandwidth (see BENCHMARKS.md). For `cosine` the index stores L2-normalised copies and scans
/// with a dot product (a zero vector stays zero; its cosine distance to anything is 1). A value
/// type with copy-on-write storage; `Sendable`, so readers can search a copy while a writer
/// mutates its own.
///
/// ```swift
/// var index = FlatIndex(dimension: 3, metric: .cosine)
/// index.upsert(id: 1, vector: [1, 0, 0])
/// index.upsert(id: 2, vector: [0, 1, 0])
/// let hits = index.search([0.9, 0.1, 0], k: 1)   // [Neighbor(id: 1, …)]
/// let only2 = index.search([0.9, 0.1, 0], k: 1, where: { $0 == 2 })
/// ```
public struct FlatIndex: Sendable {
    /// The vectors as stored (normalised under cosine).
    public private(set) var matrix: VectorMatrix
    /// The metric results are ranked by.
    public let metric: DistanceMetric

    /// Creates an empty index.
    /// - Parameters:
    ///   - dimension: floats per vector, at least 1.
    ///   - metric: how vectors are compared.
    public init(dimension: Int, metric: DistanceMetric) {
        matrix = VectorMatrix(dimension: dimension)
        self.metric = metric
    }

    /// Floats per vector.
    public var dimension: Int { matrix.dimension }

    /// The number of vectors.
    public var count: Int { matrix.count }

    /// Whether a vector with `id` is stored.
    public func contains(id: Int64) -> Bool { matrix.contains(id: id) }

    /// The vector of `id` as stored (under cosine: normalised), or nil.
    public func vector(for id: Int64) -> [Float]? { matrix.row(forID: id) }

    /// Inserts or replaces the vector of `id`.
    ///
    /// - Parameters:
    ///   - id: the external row id.
    ///   - vector: `dimension` floats (precondition; validating values is the caller's job).
    /// - Complexity: amortised O(dimension).
    public mutating func upsert(id: Int64, vector: [Float]) {
        precondition(vector.count == dimension, "expected \(dimension) floats, got \(vector.count)")
        if metric == .cosine {
            var normalized = vector
            DistanceKernels.normalize(&normalized)
            matrix.upsert(id: id, vector: normalized)
        } else {
            matrix.upsert(id: id, vector: vector)
        }
    }

    /// Removes the vector of `id`.
    /// - Returns: whether it was present.
    /// - Complexity: O(dimension) (the last row moves into the freed slot).
    @discardableResult
    public mutating func remove(id: Int64) -> Bool { matrix.remove(id: id) != nil }

    /// Removes every vector.
    public mutating func removeAll() { matrix.removeAll() }

    /// Reserves room for `n` vectors.
    public mutating func reserveCapacity(_ n: Int) { matrix.reserveCapacity(n) }

    /// The `k` nearest vectors to `query`, nearest first; ties broken by the smaller id.
    ///
    /// ```swift
    /// let hits = index.search(query, k: 10)
    /// ```
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results; `k <= 0` returns `[]`, `k > count` returns all.
    /// - Returns: up to `k` results.
    /// - Complexity: O(count × dimension + count × log k).
    public func search(_ query: [Float], k: Int) -> [Neighbor] {
        guard k > 0, count > 0 else { return [] }
        precondition(query.count == dimension, "expected a query of \(dimension) floats, got \(query.count)")
        var q = query
        if metric == .cosine { DistanceKernels.normalize(&q) }
        var top = TopK(k: k)
        let n = dimension, total = count, metric = metric
        // Distances are computed a block of rows at a time (one call into the kernel per block,
        // 1 KB of scratch on the stack), then only the few that can enter the heap are offered.
        let block = 256
        withUnsafeTemporaryAllocation(of: Float.self, capacity: block) { scratch in
            let out = scratch.baseAddress!
            q.withUnsafeBufferPointer { qb in
                matrix.withUnsafeRows { rows in
                    let qp = qb.baseAddress!, base = rows.baseAddress!
                    var start = 0
                    while start < total {
                        let m = min(block, total - start)
                        if metric == .l2 {
                            NativeKernels.l2SquaredRows(qp, base + start &* n, rowCount: m, count: n, into: out)
                        } else {
                            NativeKernels.dotRows(qp, base + start &* n, rowCount: m, count: n, into: out)
                        }
                        for r in 0..<m {
                            let d: Float
                            switch metric {
                            case .cosine: d = 1 - out[r]
                            case .dot: d = -out[r]
                            case .l2: d = out[r]
                            }
                            if d <= top.worstDistance { top.insert(id: matrix.slotIDs[start &+ r], distance: d) }
                        }
                        start &+= m
                    }
                }
            }
        }
        return finish(top)
    }

    /// The `k` nearest among `candidates` only (unknown ids ignored, duplicates harmless).
    ///
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results; `k <= 0` returns `[]`.
    ///   - candidates: the ids allowed to compete.
    /// - Returns: `min(k, number of known distinct candidates)` results, nearest first.
    /// - Complexity: O(c log c + c × dimension) for c candidates.
    public func search(_ query: [Float], k: Int, among candidates: some Sequence<Int64>) -> [Neighbor] {
        guard k > 0, count > 0 else { return [] }
        // Visiting slots in ascending order both removes duplicates and reads the matrix forwards.
        var slots: [UInt32] = []
        for id in candidates { if let slot = matrix.slot(of: id) { slots.append(slot) } }
        slots.sort()
        return scan(query, k: k) { top, distanceAt in
            var previous: UInt32?
            for slot in slots where slot != previous {
                previous = slot
                let d = distanceAt(Int(slot))
                if d <= top.worstDistance { top.insert(id: matrix.slotIDs[Int(slot)], distance: d) }
            }
        }
    }

    /// The `k` nearest among the ids for which `isIncluded` returns true.
    ///
    /// The predicate is evaluated before the distance, so rows it rejects cost no arithmetic.
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results; `k <= 0` returns `[]`.
    ///   - isIncluded: called once per stored id.
    /// - Returns: `min(k, matching count)` results, nearest first.
    /// - Complexity: O(count) predicate calls + O(m × dimension) for m matches.
    public func search(_ query: [Float], k: Int, where isIncluded: (Int64) -> Bool) -> [Neighbor] {
        guard k > 0, count > 0 else { return [] }
        return scan(query, k: k) { top, distanceAt in
            for slot in 0..<count {
                let id = matrix.slotIDs[slot]
                guard isIncluded(id) else { continue }
                let d = distanceAt(slot)
                if d <= top.worstDistance { top.insert(id: id, distance: d) }
            }
        }
    }

    /// Prepares the query for the metric, runs `visit` with a per-slot distance function, and
    /// turns the kept (ranking) distances into the metric's distances.
    @inline(__always)
    private func scan(
        _ query: [Float], k: Int,
        _ visit: (inout TopK, (Int) -> Float) -> Void
    ) -> [Neighbor] {
        precondition(query.count == dimension, "expected a query of \(dimension) floats, got \(query.count)")
        var q = query
        if metric == .cosine { DistanceKernels.normalize(&q) }
        var top = TopK(k: k)
        let n = dimension
        q.withUnsafeBufferPointer { qb in
            matrix.withUnsafeRows { rows in
                let qp = qb.baseAddress!, base = rows.baseAddress!
                switch metric {
                case .cosine:
                    visit(&top) { slot in 1 - NativeKernels.dot(qp, base + slot &* n, count: n) }
                case .dot:
                    visit(&top) { slot in -NativeKernels.dot(qp, base + slot &* n, count: n) }
                case .l2:
                    // Ranks by the squared distance; the square root is taken of the results only.
                    visit(&top) { slot in NativeKernels.l2Squared(qp, base + slot &* n, count: n) }
                }
            }
        }
        return finish(top)
    }

    /// The kept (ranking) distances as the metric's distances, nearest first.
    private func finish(_ top: TopK) -> [Neighbor] {
        var results = top.sortedResults()
        if metric == .l2 {
            for i in results.indices { results[i].distance = results[i].distance.squareRoot() }
            // The square root can merge distinct squared distances into a tie: restore id order.
            results.sort { ($0.distance, $0.id) < ($1.distance, $1.id) }
        }
        return results
    }
}
