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

    /// An index over vectors already prepared for `metric`: `matrix` as another index's
    /// ``matrix`` holds them (under cosine, L2-normalised), such as a saved copy read back.
    public init(prepared matrix: VectorMatrix, metric: DistanceMetric) {
        self.matrix = matrix
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
        vector.withUnsafeBufferPointer { upsert(id: id, floats: $0) }
    }

    /// Inserts or replaces the vector of `id` from `dimension` floats in memory the caller owns
    /// (a statement's blob, say): copied once, straight into the matrix.
    /// - Complexity: amortised O(dimension).
    public mutating func upsert(id: Int64, floats vector: UnsafeBufferPointer<Float>) {
        precondition(vector.count == dimension, "expected \(dimension) floats, got \(vector.count)")
        let slot = matrix.upsert(id: id, floats: vector)
        if metric == .cosine { matrix.withMutableRow(at: slot) { DistanceKernels.normalize($0) } }
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
        let total = count
        return scan(query, k: k) { scorer, top in
            // The matrix is read as `streams` runs side by side (see `streams`); the last
            // `total % streams` rows, and small matrices, are read as one run.
            let streams = total >= Self.streams &* Self.block ? Self.streams : 1
            let stride = total / streams
            var start = 0
            while start < stride {
                let m = Swift.min(Self.block, stride - start)
                if streams == 1 {
                    scorer.scoreRows(from: start, count: m)
                    scorer.offer(count: m, into: &top) { start &+ $0 }
                } else {
                    scorer.scoreRowStreams(from: start, count: m, stride: stride, streams: streams)
                    scorer.offer(count: m &* streams, into: &top) { i in
                        let (run, r) = i.quotientAndRemainder(dividingBy: m)
                        return run &* stride &+ start &+ r
                    }
                }
                start &+= m
            }
            let rest = streams &* stride
            if rest < total {
                scorer.scoreRows(from: rest, count: total - rest)
                scorer.offer(count: total - rest, into: &top) { rest &+ $0 }
            }
        }
    }

    /// The `k` nearest among `candidates` only (unknown ids ignored, duplicates harmless).
    ///
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results; `k <= 0` returns `[]`.
    ///   - candidates: the ids allowed to compete.
    /// - Returns: `min(k, number of known distinct candidates)` results, nearest first.
    /// - Complexity: O(c log c + c × dimension) for c candidates.
    public func search(_ query: [Float], k: Int, among candidates: some Sequence<Int64>)
        -> [Neighbor]
    {
        guard k > 0, count > 0 else { return [] }
        // Visiting slots in ascending order both removes duplicates and reads the matrix forwards.
        var slots: [UInt32] = []
        for id in candidates { if let slot = matrix.slot(of: id) { slots.append(slot) } }
        slots.sort()
        var unique = 0
        for i in slots.indices where unique == 0 || slots[unique - 1] != slots[i] {
            slots[unique] = slots[i]
            unique += 1
        }
        return slots.withUnsafeBufferPointer { list in
            scan(query, k: k) { scorer, top in
                // A dense list (a third of the rows or more) is read as `streams` runs side by
                // side, like the full scan; a sparse one as one run, prefetching ahead.
                let dense = unique &* 3 >= count && unique >= Self.streams &* Self.block
                let streams = dense ? Self.streams : 1
                let stride = unique / streams
                var start = 0
                while start < stride {
                    let m = Swift.min(Self.block, stride - start)
                    let picked = list.baseAddress! + start
                    scorer.scoreSlots(picked, count: m, stride: stride, streams: streams)
                    scorer.offer(count: m &* streams, into: &top) { i in
                        let (run, r) = i.quotientAndRemainder(dividingBy: m)
                        return Int(picked[run &* stride &+ r])
                    }
                    start &+= m
                }
                let rest = streams &* stride
                if rest < unique {
                    let picked = list.baseAddress! + rest
                    scorer.scoreSlots(picked, count: unique - rest)
                    scorer.offer(count: unique - rest, into: &top) { Int(picked[$0]) }
                }
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
        let total = count
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: Self.block) { picked in
            let picked = picked.baseAddress!
            return scan(query, k: k) { scorer, top in
                // The matching slots are gathered a block at a time, then scored in one call.
                var m = 0
                for slot in 0..<total where isIncluded(matrix.slotIDs[slot]) {
                    picked[m] = UInt32(truncatingIfNeeded: slot)
                    m &+= 1
                    if m == Self.block {
                        scorer.scoreSlots(picked, count: m)
                        scorer.offer(count: m, into: &top) { Int(picked[$0]) }
                        m = 0
                    }
                }
                scorer.scoreSlots(picked, count: m)
                scorer.offer(count: m, into: &top) { Int(picked[$0]) }
            }
        }
    }

    // Rows scored per kernel call and run: 256 rows amortise the call and the dispatch; the
    // top-k check then runs over the small score buffer (`streams × block` floats, 4 KB, on the
    // stack).
    private static let block = 256

    // Runs of rows read side by side by the full scan. A single sequential stream leaves one
    // core well short of the machine's memory bandwidth; with four runs far apart, each followed
    // by its own hardware prefetch stream, the full scan was measurably faster (BENCHMARKS.md,
    // "Exact vector search"). Results do not depend on the order rows are visited (ties go by id).
    private static let streams = 4

    /// Scores a block of rows with one kernel call into `scores`, then offers those that can
    /// enter the top-k.
    private struct BlockScorer {
        let query: UnsafePointer<Float>
        let rows: UnsafePointer<Float>
        let dimension: Int
        let metric: DistanceMetric
        let ids: UnsafePointer<Int64>
        // `streams × block` floats owned by the enclosing `scan` call.
        let scores: UnsafeMutablePointer<Float>

        @inline(__always)
        func scoreRows(from start: Int, count m: Int) {
            let first = rows + start &* dimension
            if metric == .l2 {
                NativeKernels.l2SquaredRows(
                    query, first, rowCount: m, count: dimension, into: scores)
            } else {
                NativeKernels.dotRows(query, first, rowCount: m, count: dimension, into: scores)
            }
        }

        /// Fills `scores[j × m + r]` with row `start + j × stride + r`'s score.
        @inline(__always)
        func scoreRowStreams(from start: Int, count m: Int, stride: Int, streams: Int) {
            let first = rows + start &* dimension
            if metric == .l2 {
                NativeKernels.l2SquaredRowStreams(
                    query, first, rowCount: m, stride: stride, streams: streams, count: dimension,
                    into: scores)
            } else {
                NativeKernels.dotRowStreams(
                    query, first, rowCount: m, stride: stride, streams: streams, count: dimension,
                    into: scores)
            }
        }

        /// Fills `scores[j × m + r]` with the score of row `slots[j × stride + r]`.
        @inline(__always)
        func scoreSlots(
            _ slots: UnsafePointer<UInt32>, count m: Int, stride: Int = 0, streams: Int = 1
        ) {
            guard m > 0 else { return }
            if metric == .l2 {
                NativeKernels.l2SquaredGather(
                    query, rows, slots: slots, slotCount: m, stride: stride, streams: streams,
                    count: dimension,
                    into: scores)
            } else {
                NativeKernels.dotGather(
                    query, rows, slots: slots, slotCount: m, stride: stride, streams: streams,
                    count: dimension,
                    into: scores)
            }
        }

        /// Offers the first `m` scores; `slotAt(r)` is the slot score `r` belongs to.
        @inline(__always)
        func offer(count m: Int, into top: inout TopK, slotAt: (Int) -> Int) {
            // Ranking distance = offset + sign × score: cosine 1 - s (rows and query are
            // normalised), dot -s, l2 the squared distance itself.
            let (offset, sign): (Float, Float) =
                switch metric {
                case .cosine: (1, -1)
                case .dot: (0, -1)
                case .l2: (0, 1)
                }
            var worst = top.worstDistance
            for r in 0..<m {
                let d = offset + sign * scores[r]
                if d <= worst {
                    let slot = slotAt(r)
                    top.insert(id: ids[slot], distance: d)
                    worst = top.worstDistance
                }
            }
        }
    }

    /// Prepares the query for the metric (normalised under cosine), runs `visit` with a block
    /// scorer over the matrix, and turns the kept (ranking) distances into the metric's.
    @inline(__always)
    private func scan(_ query: [Float], k: Int, _ visit: (BlockScorer, inout TopK) -> Void)
        -> [Neighbor]
    {
        precondition(
            query.count == dimension, "expected a query of \(dimension) floats, got \(query.count)")
        var q = query
        if metric == .cosine { DistanceKernels.normalize(&q) }
        var top = TopK(k: k)
        withUnsafeTemporaryAllocation(of: Float.self, capacity: Self.streams &* Self.block) {
            scores in
            q.withUnsafeBufferPointer { qb in
                matrix.withUnsafeRows { rows in
                    matrix.slotIDs.withUnsafeBufferPointer { ids in
                        let scorer = BlockScorer(
                            query: qb.baseAddress!, rows: rows.baseAddress!, dimension: dimension,
                            metric: metric,
                            ids: ids.baseAddress!, scores: scores.baseAddress!)
                        visit(scorer, &top)
                    }
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
