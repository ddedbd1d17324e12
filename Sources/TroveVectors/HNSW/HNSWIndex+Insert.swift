import Foundation

extension HNSWIndex {
    /// Inserts the vector of `id`, replacing it when `id` is already indexed (delete + insert).
    ///
    /// ```swift
    /// index.insert(id: 7, vector: embedding)
    /// ```
    /// - Parameters:
    ///   - id: the external row id.
    ///   - vector: `dimension` floats (precondition; validating values is the caller's job).
    /// - Complexity: about O(efConstruction · M · log n) distance computations.
    public func insert(id: Int64, vector: [Float]) {
        precondition(vector.count == dimension, "expected \(dimension) floats, got \(vector.count)")
        lock.write {
            if slotsByID[id] != nil { removeLocked(id: id) }
            let s = allocateSlot(id: id, vector: vector)
            link(s, locked: false)
            repairIfNeeded()
        }
    }

    /// Inserts many vectors, linking them with `threads` threads (a parallel build).
    ///
    /// Searches wait for the whole batch (it holds the write lock). Ids already indexed are
    /// replaced. With one thread the graph depends only on the seed and the order of `items`;
    /// with more it also depends on scheduling (as in hnswlib), with the same quality.
    /// - Parameters:
    ///   - items: `(id, vector)` pairs; ids should be distinct (the last one wins).
    ///   - threads: worker threads, at least 1 (default: the active processor count).
    /// - Complexity: about O(n · efConstruction · M · log n) / threads.
    public func insert(contentsOf items: [(id: Int64, vector: [Float])], threads: Int? = nil) {
        let threadCount = max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount)
        lock.write {
            var slots: [UInt32] = []
            slots.reserveCapacity(items.count)
            reserve(slotCount + items.count)
            for item in items {
                precondition(
                    item.vector.count == dimension,
                    "expected \(dimension) floats, got \(item.vector.count)")
                if slotsByID[item.id] != nil { removeLocked(id: item.id) }
                slots.append(allocateSlot(id: item.id, vector: item.vector))
            }
            // Later duplicates replaced earlier ones: skip slots that are no longer live.
            slots.removeAll { states[Int($0)] != Self.stateLive }
            var start = 0
            if entryPoint == Self.noNode, let first = slots.first {
                link(first, locked: false)
                start = 1
            }
            let pending = Array(slots[start...])
            if threadCount == 1 || pending.count < 64 {
                for s in pending { link(s, locked: false) }
            } else {
                let counter = WorkCounter()
                // Each worker claims chunks of 16 nodes; neighbour lists are locked per stripe.
                DispatchQueue.concurrentPerform(iterations: threadCount) { _ in
                    while true {
                        let begin = counter.claim(16)
                        if begin >= pending.count { break }
                        for i in begin..<min(begin + 16, pending.count) {
                            link(pending[i], locked: true)
                        }
                    }
                }
            }
            repairIfNeeded()
        }
    }

    /// Connects slot `q` into the graph (the paper's INSERT). `locked`: other threads link at the
    /// same time, so neighbour lists are read and written under their stripe locks and the entry
    /// point under `global`.
    func link(_ q: UInt32, locked: Bool) {
        let level = Int(levels[Int(q)])
        var holdsGlobal = false
        var entry: UInt32
        var top: Int
        if locked {
            global.lock()
            entry = entryPoint
            top = maxLevel
            // A node that raises the top level keeps `global` until it is linked (as hnswlib),
            // so no other node uses the new entry point before it has links.
            if level > top { holdsGlobal = true } else { global.unlock() }
        } else {
            entry = entryPoint
            top = maxLevel
        }
        defer { if holdsGlobal { global.unlock() } }
        if entry == Self.noNode {
            entryPoint = q
            maxLevel = level
            return
        }
        let buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: maxM0 + 1)
        defer { buffer.deallocate() }
        let walk = constructionQuery(q)
        var current = entry
        var d = walkDistance(walk, current)
        if top > level {
            for l in stride(from: top, to: level, by: -1) {
                (current, d) = greedyClosest(
                    walk, from: current, distance: d, level: l, locked: locked, buffer: buffer)
            }
        }
        // q's own lists are all written before any node links back to q, so q becomes reachable
        // only once it is fully linked. Otherwise, in a parallel build, another thread could reach
        // q through a back link on layer l, descend from q to layer l-1 where q's list is still
        // empty, and link its own node to q alone on every lower layer: on 2 idle cores that
        // capped recall@10 at 0.984 instead of 0.997 (hnswlib avoids it by holding the new node's
        // lock for its whole insertion). With one thread the graph is the same either way: q's
        // searches on lower layers never read the upper-layer back links.
        var chosen: [(level: Int, nodes: [UInt32])] = []
        for l in stride(from: min(level, top), through: 0, by: -1) {
            let found = searchLayer(
                walk, entries: [current], ef: configuration.efConstruction, level: l,
                locked: locked, excluded: q)
            let sorted = found.items.sorted()
            if let nearest = sorted.first { current = unpackSlot(nearest) }
            let selected = selectNeighbors(sorted, limit: maxM)
            let own = links(q, l)
            withStripe(q, locked) {
                own[0] = UInt32(selected.count)
                for (j, s) in selected.enumerated() { own[j + 1] = s }
            }
            chosen.append((l, selected))
        }
        for (l, selected) in chosen {
            for n in selected { addLink(from: n, to: q, level: l, locked: locked) }
        }
        if level > top {
            entryPoint = q
            maxLevel = level
        }
    }

    @inline(__always)
    func withStripe<R>(_ s: UInt32, _ locked: Bool, _ body: () -> R) -> R {
        locked ? stripes.withLock(Int(s), body) : body()
    }

    /// Adds `q` to the list of `n`; when full, keeps the heuristic's choice among old and new.
    func addLink(from n: UInt32, to q: UInt32, level: Int, locked: Bool) {
        withStripe(n, locked) {
            let list = links(n, level)
            let count = Int(list[0])
            for j in 0..<count where list[j + 1] == q { return }
            let limit = capacity(atLevel: level)
            if count < limit {
                list[count + 1] = q
                list[0] = UInt32(count + 1)
                return
            }
            var candidates = [packCandidate(slotDistance(n, q), q)]
            for j in 0..<count {
                candidates.append(packCandidate(slotDistance(n, list[j + 1]), list[j + 1]))
            }
            candidates.sort()
            let kept = selectNeighbors(candidates, limit: limit)
            list[0] = UInt32(kept.count)
            for (j, s) in kept.enumerated() { list[j + 1] = s }
        }
    }

    /// The walk query of stored slot `q` while linking it: its float32 vector, or in codes-only
    /// mode its int8 code (`floats` then points at no vector and is never read).
    func constructionQuery(_ q: UInt32) -> WalkQuery {
        guard !storesVectors else { return WalkQuery(floats: vectorPointer(q), mode: .none) }
        return WalkQuery(
            floats: vectors, mode: .int8, code: codes.unsafelyUnwrapped + Int(q) &* dimension,
            scale: codeScales.unsafelyUnwrapped[Int(q)],
            squaredNorm: squaredNorms.unsafelyUnwrapped[Int(q)])
    }

    /// The neighbour-selection heuristic (Malkov & Yashunin, algorithm 4, as hnswlib's
    /// getNeighborsByHeuristic2): walk the candidates nearest first and keep one only if it is
    /// closer to the base than to every neighbour kept so far, which spreads links over
    /// directions and keeps the graph navigable.
    /// - Parameter sorted: packed (distance to base, slot), ascending.
    /// - Parameter keepPruned: fill the remaining room with the nearest rejected candidates (the
    ///   paper's keepPrunedConnections); used by deletion repair, whose candidate pools are small.
    func selectNeighbors(_ sorted: [UInt64], limit: Int, keepPruned: Bool = false) -> [UInt32] {
        if sorted.count <= limit { return sorted.map(unpackSlot) }
        var kept: [UInt32] = []
        var pruned: [UInt32] = []
        kept.reserveCapacity(limit)
        for c in sorted {
            if kept.count >= limit { break }
            let s = unpackSlot(c)
            let d = unpackDistance(c)
            var good = true
            for t in kept where slotDistance(s, t) < d {
                good = false
                break
            }
            if good { kept.append(s) } else if keepPruned { pruned.append(s) }
        }
        if keepPruned {
            for s in pruned where kept.count < limit { kept.append(s) }
        }
        return kept
    }
}

extension MutexStripes {
    func lock() { withLockUnbalanced(0, lock: true) }
    func unlock() { withLockUnbalanced(0, lock: false) }
}

/// A shared counter for handing out work to threads.
// @unchecked Sendable: `next` is only touched under the mutex.
final class WorkCounter: @unchecked Sendable {
    private var next = 0
    private let mutex = MutexStripes(count: 1)

    func claim(_ n: Int) -> Int {
        mutex.withLock(0) {
            let start = next
            next += n
            return start
        }
    }
}
