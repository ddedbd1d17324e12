import CTroveKernels

/// The query as the walk reads it: float32 always (construction, re-scoring), plus codes in the
/// quantized modes. Pointers are valid for the duration of one search.
struct WalkQuery {
    let floats: UnsafePointer<Float>
    let mode: HNSWQuantization
    var code: UnsafePointer<Int8>? = nil
    var scale: Float = 1
    var squaredNorm: Float = 0
    var bits: UnsafePointer<UInt64>? = nil
}

extension HNSWIndex {
    /// The distance the walk ranks by for `q` against slot `s`.
    @inline(__always)
    func walkDistance(_ q: WalkQuery, _ s: UInt32) -> Float {
        switch q.mode {
        case .none:
            return floatDistance(q.floats, s)
        case .int8:
            let c = codes.unsafelyUnwrapped + Int(s) &* dimension
            let dot =
                q.scale * codeScales.unsafelyUnwrapped[Int(s)]
                * Float(NativeKernels.dotInt8(q.code.unsafelyUnwrapped, c, count: dimension))
            return isL2 ? q.squaredNorm + squaredNorms.unsafelyUnwrapped[Int(s)] - 2 * dot : -dot
        case .binary:
            let b = bits.unsafelyUnwrapped + Int(s) &* words
            return Float(NativeKernels.hamming(q.bits.unsafelyUnwrapped, b, words: words))
        }
    }

    @inline(__always)
    func prefetchWalked(_ q: WalkQuery, _ s: UInt32) {
        switch q.mode {
        case .none: trove_prefetch(vectorPointer(s))
        case .int8: trove_prefetch(codes.unsafelyUnwrapped + Int(s) &* dimension)
        case .binary: trove_prefetch(bits.unsafelyUnwrapped + Int(s) &* words)
        }
    }

    /// Prefetches every cache line of the walked vector of `s`.
    @inline(__always)
    func prefetchWhole(_ q: WalkQuery, _ s: UInt32) {
        switch q.mode {
        // The line holding the first byte was requested in the first pass over the neighbours.
        case .none: trove_prefetch_bytes(vectorPointer(s) + 16, max(0, dimension &* 4 &- 64))
        case .int8:
            trove_prefetch_bytes(
                codes.unsafelyUnwrapped + Int(s) &* dimension + 64, max(0, dimension &- 64))
        case .binary:
            trove_prefetch_bytes(
                bits.unsafelyUnwrapped + Int(s) &* words + 8, max(0, words &* 8 &- 64))
        }
    }

    /// Copies the neighbour list of `s` on `level` into `buffer` (under its stripe lock when
    /// `locked`, i.e. inside a parallel build) and returns the count.
    @inline(__always)
    func readLinks(
        _ s: UInt32, _ level: Int, into buffer: UnsafeMutablePointer<UInt32>, locked: Bool
    ) -> Int {
        let l = links(s, level)
        if locked {
            return stripes.withLock(Int(s)) {
                let n = Int(l[0])
                buffer.update(from: l + 1, count: n)
                return n
            }
        }
        let n = Int(l[0])
        buffer.update(from: l + 1, count: n)
        return n
    }

    /// Greedy descent on one upper layer: moves to the closest neighbour until none is closer.
    func greedyClosest(
        _ q: WalkQuery, from start: UInt32, distance startDistance: Float, level: Int, locked: Bool,
        buffer: UnsafeMutablePointer<UInt32>
    ) -> (UInt32, Float) {
        var current = start
        var best = startDistance
        var changed = true
        while changed {
            changed = false
            let n = readLinks(current, level, into: buffer, locked: locked)
            for j in 0..<n {
                let c = buffer[j]
                let d = walkDistance(q, c)
                if d < best {
                    best = d
                    current = c
                    changed = true
                }
            }
        }
        return (current, best)
    }

    /// Best-first search on one layer (the paper's SEARCH-LAYER, hnswlib's searchBaseLayer):
    /// returns a max-heap of up to `ef` eligible nodes. Ineligible nodes (deleted, filtered out,
    /// `excluded`) are traversed but not returned, so a filter never cuts the graph apart; the
    /// search keeps expanding until `ef` eligible nodes are held or the reachable graph is spent.
    func searchLayer(
        _ q: WalkQuery, entries: [UInt32], ef: Int, level: Int, locked: Bool,
        excluded: UInt32 = HNSWIndex.noNode, filter: ((Int64) -> Bool)? = nil
    ) -> CandidateHeap {
        let visited = visitedPool.take(size: max(slotCount, capacity))
        defer { visitedPool.give(visited) }
        let buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: maxM0 + 1)
        defer { buffer.deallocate() }
        var candidates = CandidateHeap(isMax: false, capacity: ef * 2)
        var results = CandidateHeap(isMax: true, capacity: ef + 1)

        @inline(__always) func eligible(_ s: UInt32) -> Bool {
            s != excluded && states[Int(s)] == Self.stateLive && (filter?(slotIDs[Int(s)]) ?? true)
        }
        var bound = Float.infinity
        for e in entries where !visited.testAndSet(e) {
            let d = walkDistance(q, e)
            candidates.push(packCandidate(d, e))
            if eligible(e) {
                results.push(packCandidate(d, e))
                if results.count > ef { results.pop() }
            }
        }
        if results.count >= ef { bound = unpackDistance(results.top) }
        while !candidates.isEmpty {
            let c = candidates.pop()
            if unpackDistance(c) > bound && results.count >= ef { break }
            // The next candidate is likely the current top: start fetching its neighbour list
            // while this one is expanded (as hnswlib does).
            if !candidates.isEmpty { trove_prefetch(links(unpackSlot(candidates.top), level)) }
            let n = readLinks(unpackSlot(c), level, into: buffer, locked: locked)
            // First pass: keep unvisited neighbours and prefetch their vectors; second: distances.
            var fresh = 0
            for j in 0..<n {
                let s = buffer[j]
                if !visited.testAndSet(s) {
                    buffer[fresh] = s
                    fresh += 1
                    prefetchWalked(q, s)
                }
            }
            // The first line of every fresh vector is on its way; ask for the whole of the next
            // one while scoring this one, so its remaining lines arrive during this distance.
            if fresh > 0 { prefetchWhole(q, buffer[0]) }
            for j in 0..<fresh {
                if j + 1 < fresh { prefetchWhole(q, buffer[j + 1]) }
                let s = buffer[j]
                let d = walkDistance(q, s)
                if results.count < ef || d < bound {
                    candidates.push(packCandidate(d, s))
                    if eligible(s) {
                        results.push(packCandidate(d, s))
                        if results.count > ef { results.pop() }
                        if results.count >= ef { bound = unpackDistance(results.top) }
                    }
                }
            }
        }
        return results
    }

    /// Builds the walk query for `query` (normalised under cosine) and calls `body` with it.
    func withWalkQuery<R>(_ query: [Float], mode: HNSWQuantization, _ body: (WalkQuery) -> R) -> R {
        precondition(
            query.count == dimension, "expected a query of \(dimension) floats, got \(query.count)")
        var q = query
        if metric == .cosine { DistanceKernels.normalize(&q) }
        return q.withUnsafeBufferPointer { qb in
            let qp = qb.baseAddress!
            switch mode {
            case .none:
                return body(WalkQuery(floats: qp, mode: .none))
            case .int8:
                var maxAbs: Float = 0
                var norm: Float = 0
                for x in q {
                    maxAbs = max(maxAbs, abs(x))
                    norm += x * x
                }
                let scale = maxAbs > 0 ? maxAbs / 127 : 1
                let code = q.map { Int8(clamping: Int(($0 / scale).rounded())) }
                return code.withUnsafeBufferPointer { cb in
                    body(
                        WalkQuery(
                            floats: qp, mode: .int8, code: cb.baseAddress!, scale: scale,
                            squaredNorm: norm))
                }
            case .binary:
                var b = [UInt64](repeating: 0, count: words)
                for i in 0..<dimension where q[i] > 0 { b[i >> 6] |= 1 << UInt64(i & 63) }
                return b.withUnsafeBufferPointer { bb in
                    body(WalkQuery(floats: qp, mode: .binary, bits: bb.baseAddress!))
                }
            }
        }
    }

    /// The core of every graph search; the caller holds the read (or write) lock. `source`
    /// supplies float32 vectors for re-scoring in codes-only mode.
    func graphSearch(
        _ query: [Float], k: Int, ef requestedEf: Int, filter: ((Int64) -> Bool)?,
        source: ((Int64) -> [Float]?)? = nil
    ) -> [Neighbor] {
        guard k > 0, liveCount > 0, entryPoint != Self.noNode else { return [] }
        let mode = configuration.quantization
        let ef =
            mode == .none ? max(requestedEf, k) : max(requestedEf, k * configuration.rescoreFactor)
        return withWalkQuery(query, mode: mode) { q in
            let buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: maxM0 + 1)
            defer { buffer.deallocate() }
            var current = entryPoint
            var d = walkDistance(q, current)
            if maxLevel > 0 {
                for level in stride(from: maxLevel, to: 0, by: -1) {
                    (current, d) = greedyClosest(
                        q, from: current, distance: d, level: level, locked: false, buffer: buffer)
                }
            }
            let heap = searchLayer(
                q, entries: [current], ef: ef, level: 0, locked: false, filter: filter)
            var found: [Neighbor]
            if mode == .none {
                found = heap.items.map {
                    Neighbor(id: slotIDs[Int(unpackSlot($0))], distance: unpackDistance($0))
                }
            } else if storesVectors {
                // Re-score the walk's candidates with the float32 vectors.
                found = heap.items.map {
                    let s = unpackSlot($0)
                    return Neighbor(id: slotIDs[Int(s)], distance: floatDistance(q.floats, s))
                }
            } else {
                // Codes-only: re-score with the caller's vectors; a candidate it cannot supply
                // keeps its code distance.
                found = heap.items.map {
                    let id = slotIDs[Int(unpackSlot($0))]
                    if let source, let v = source(id), v.count == dimension {
                        return Neighbor(id: id, distance: externalDistance(q.floats, v))
                    }
                    return Neighbor(id: id, distance: unpackDistance($0))
                }
            }
            found.sort { ($0.distance, $0.id) < ($1.distance, $1.id) }
            if found.count > k { found.removeLast(found.count - k) }
            for i in found.indices { found[i].distance = publicDistance(found[i].distance) }
            return found
        }
    }

    /// The ranking distance between the walk query's floats and a caller-supplied vector (not
    /// normalised: under cosine it is divided by its norm here).
    func externalDistance(_ q: UnsafePointer<Float>, _ v: [Float]) -> Float {
        v.withUnsafeBufferPointer { vb in
            let p = vb.baseAddress!
            switch metric {
            case .l2: return NativeKernels.l2Squared(q, p, count: dimension)
            case .dot: return -NativeKernels.dot(q, p, count: dimension)
            case .cosine:
                let norm = NativeKernels.dot(p, p, count: dimension).squareRoot()
                let dot = NativeKernels.dot(q, p, count: dimension)
                return norm > 0 && norm.isFinite ? -dot / norm : -dot
            }
        }
    }

    /// Exact top-k over the live slots accepted by `filter`: float32 vectors, or in codes-only
    /// mode the int8 codes (then exact over the codes, an approximation of the float ranking).
    func exactSearch(_ query: [Float], k: Int, slots: some Sequence<UInt32>) -> [Neighbor] {
        guard k > 0 else { return [] }
        return withWalkQuery(query, mode: storesVectors ? .none : .int8) { q in
            var top = TopK(k: k)
            for s in slots where states[Int(s)] == Self.stateLive {
                let d = storesVectors ? floatDistance(q.floats, s) : walkDistance(q, s)
                if d <= top.worstDistance { top.insert(id: slotIDs[Int(s)], distance: d) }
            }
            var results = top.sortedResults()
            for i in results.indices { results[i].distance = publicDistance(results[i].distance) }
            if metric == .l2 { results.sort { ($0.distance, $0.id) < ($1.distance, $1.id) } }
            return results
        }
    }

    // MARK: - Public search

    /// The approximately `k` nearest vectors to `query`, nearest first.
    ///
    /// ```swift
    /// let hits = index.search(query, k: 10)               // efSearch from the configuration
    /// let better = index.search(query, k: 10, efSearch: 200)
    /// ```
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results; `k <= 0` returns `[]`.
    ///   - efSearch: the candidate list size (default `self.efSearch`; at least `k` is used).
    /// - Returns: `min(k, count)` results, nearest first, ties by smaller id.
    /// - Complexity: about O(efSearch · M · log n) distance computations.
    public func search(_ query: [Float], k: Int, efSearch: Int? = nil) -> [Neighbor] {
        search(query, k: k, efSearch: efSearch, rescoringWith: nil)
    }

    /// The approximately `k` nearest vectors to `query`, re-scoring the walk's best
    /// `k × rescoreFactor` candidates with float32 vectors from `source` when the index keeps
    /// none itself (`HNSWConfiguration.storesFullPrecision == false`); otherwise as
    /// `search(_:k:efSearch:)`.
    ///
    /// ```swift
    /// let hits = index.search(query, k: 10, efSearch: 32) { id in table.embedding(of: id) }
    /// ```
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results.
    ///   - efSearch: the candidate list size (at least `k × rescoreFactor` is used).
    ///   - source: the float32 vector of an id as the caller stores it (normalised or not), or nil
    ///     when it has none (that candidate keeps its int8 distance). Called up to
    ///     `max(efSearch, k × rescoreFactor)` times, from the calling thread.
    /// - Returns: `min(k, count)` results, nearest first.
    /// - Complexity: about O(efSearch · M · log n) code distances plus the source's calls.
    public func search(
        _ query: [Float], k: Int, efSearch: Int? = nil, rescoringWith source: ((Int64) -> [Float]?)?
    ) -> [Neighbor] {
        lock.read {
            let results = graphSearch(
                query, k: k, ef: efSearch ?? defaultEfSearch, filter: nil, source: source)
            if results.count < min(k, liveCount) {
                // Only possible when deleted nodes cut the walk short: answer exactly instead.
                return exactSearch(query, k: k, slots: 0..<UInt32(slotCount))
            }
            return results
        }
    }

    /// The approximately `k` nearest among the ids `isIncluded` accepts, by a filter-aware walk:
    /// rejected nodes are traversed but never returned, and the walk goes on until it holds
    /// `max(efSearch, k)` accepted nodes. When the walk cannot find `k` accepted nodes the answer
    /// falls back to an exact scan, so exactly `min(k, matching)` results come back.
    ///
    /// Prefer `search(_:k:candidates:)`, which also picks an exact scan when matches are few.
    /// - Parameters:
    ///   - query: `dimension` floats (precondition).
    ///   - k: how many results.
    ///   - efSearch: the candidate list size.
    ///   - isIncluded: called with ids during the walk (possibly concurrently from several
    ///     searches, never from two threads within one search).
    /// - Returns: up to `k` accepted results, nearest first.
    public func search(
        _ query: [Float], k: Int, efSearch: Int? = nil, where isIncluded: (Int64) -> Bool
    ) -> [Neighbor] {
        withoutActuallyEscaping(isIncluded) { filter in
            lock.read {
                let results = graphSearch(
                    query, k: k, ef: efSearch ?? defaultEfSearch, filter: filter)
                if results.count < k {
                    let slots = (0..<UInt32(slotCount)).lazy.filter {
                        filter(self.slotIDs[Int($0)])
                    }
                    return exactSearch(query, k: k, slots: slots)
                }
                return results
            }
        }
    }

    /// The exact `k` nearest among `candidates` (unknown ids ignored, duplicates harmless).
    ///
    /// - Complexity: O(c log c + c · dimension) for c candidates.
    public func search(_ query: [Float], k: Int, among candidates: some Sequence<Int64>)
        -> [Neighbor]
    {
        lock.read {
            var slots = candidates.compactMap { slotsByID[$0] }
            slots.sort()
            var unique: [UInt32] = []
            unique.reserveCapacity(slots.count)
            for s in slots where s != unique.last { unique.append(s) }
            return exactSearch(query, k: k, slots: unique)
        }
    }

    /// A filtered top-k that plans its own strategy (see `HNSWIndex.plan(matching:total:k:efSearch:)`):
    /// an exact scan over the candidates when they are few, a filter-aware walk when they are many.
    ///
    /// ```swift
    /// let allowed: Set<Int64> = idsWithSourceNotes
    /// let (hits, plan) = index.search(query, k: 10, candidates: allowed)
    /// print(plan)   // e.g. exactScan("312 matching rows ...")
    /// ```
    /// - Parameters:
    ///   - query: `dimension` floats.
    ///   - k: how many results.
    ///   - candidates: the ids allowed to compete.
    ///   - efSearch: the walk's candidate list size.
    /// - Returns: exactly `min(k, matching)` results and the plan that ran.
    public func search(
        _ query: [Float], k: Int, candidates: Set<Int64>, efSearch: Int? = nil
    ) -> (results: [Neighbor], plan: HNSWFilterPlan) {
        let total = count
        let ef = efSearch ?? self.efSearch
        let plan = Self.plan(matching: candidates.count, total: total, k: k, efSearch: ef)
        switch plan {
        case .exactScan: return (search(query, k: k, among: candidates), plan)
        case .graphTraversal:
            return (search(query, k: k, efSearch: ef, where: candidates.contains), plan)
        }
    }

    /// Chooses between an exact scan over the matching rows and a filter-aware graph walk.
    ///
    /// The walk visits roughly `efSearch / selectivity` nodes, each costing a handful of
    /// distance computations, while the exact scan costs one distance per matching row. So the
    /// scan wins while `matching² ≤ 16 · efSearch · total`, and always below 2,048 matching
    /// rows. At that boundary both take about the same time; far from it the right choice is
    /// many times faster (see BENCHMARKS.md).
    ///
    /// ```swift
    /// let plan = HNSWIndex.plan(matching: 500, total: 1_000_000, k: 10, efSearch: 64)   // .exactScan
    /// ```
    /// - Parameters:
    ///   - matching: rows that pass the filter (or an estimate).
    ///   - total: rows in the index.
    ///   - k: results wanted.
    ///   - efSearch: the walk's candidate list size.
    /// - Returns: the plan, with a reason a person can read.
    public static func plan(matching: Int, total: Int, k: Int, efSearch: Int) -> HNSWFilterPlan {
        let ef = Double(max(efSearch, k))
        let m = Double(matching)
        let n = Double(max(total, 1))
        if matching <= 2_048 {
            return .exactScan("\(matching) matching rows: an exact scan is cheaper than any walk")
        }
        if m * m <= 16 * ef * n {
            let percent = (100 * m / n * 10).rounded() / 10
            return .exactScan(
                "\(matching) of \(total) rows match (\(percent)%): scanning them beats walking ~\(Int(ef * n / m)) nodes"
            )
        }
        let percent = (100 * m / n * 10).rounded() / 10
        return .graphTraversal(
            "\(matching) of \(total) rows match (\(percent)%): a filtered walk visits ~\(Int(ef * n / m)) nodes instead of scanning \(matching)"
        )
    }
}

/// Which strategy a filtered search used, and why.
///
/// ```swift
/// if case .exactScan(let why) = plan { print("exact:", why) }
/// ```
public enum HNSWFilterPlan: Sendable, Hashable, CustomStringConvertible {
    /// Exact distances to every matching row.
    case exactScan(String)
    /// The HNSW walk, returning only matching rows.
    case graphTraversal(String)

    public var description: String {
        switch self {
        case .exactScan(let why): return "exact scan: \(why)"
        case .graphTraversal(let why): return "graph traversal: \(why)"
        }
    }
}
