extension HNSWIndex {
    /// Removes the vector of `id`.
    ///
    /// The node leaves search results at once; its links are repaired (and its slot freed for
    /// reuse) in a batch once deleted nodes reach `configuration.repairFraction` of the nodes (5%), or by
    /// `repairDeletions()`.
    /// Measured in BENCHMARKS.md: tombstones alone, without repair, cost recall.
    /// - Parameter id: the id to remove.
    /// - Returns: whether it was indexed.
    /// - Complexity: O(1) amortised; a repair batch is O(n · M) plus the re-linking.
    @discardableResult
    public func remove(id: Int64) -> Bool {
        lock.write {
            guard slotsByID[id] != nil else { return false }
            removeLocked(id: id)
            repairIfNeeded()
            return true
        }
    }

    /// Repairs the links around every deleted node now and frees their slots.
    ///
    /// ```swift
    /// for id in stale { index.remove(id: id) }
    /// index.repairDeletions()
    /// ```
    /// - Complexity: O(n · M) to find the links plus the heuristic re-selection of each damaged list.
    public func repairDeletions() {
        lock.write { repairLocked() }
    }

    /// The number of deleted nodes still awaiting repair.
    public var pendingDeletions: Int { lock.read { deletedSlots.count } }

    func removeLocked(id: Int64) {
        guard let s = slotsByID.removeValue(forKey: id) else { return }
        states[Int(s)] = Self.stateDeleted
        deletedSlots.append(s)
        liveCount -= 1
    }

    func repairIfNeeded() {
        let fraction = configuration.repairFraction
        if !deletedSlots.isEmpty && fraction > 0
            && Double(deletedSlots.count) >= fraction * Double(max(slotCount - freeSlots.count, 1))
        {
            repairLocked()
        }
    }

    /// For every live node whose list on some level holds a deleted node, rebuilds that list from
    /// its surviving neighbours plus the deleted nodes' own neighbours (their neighbourhood, so the
    /// region stays connected), with the selection heuristic. Then chooses a new entry point if
    /// needed and frees the deleted slots.
    func repairLocked() {
        guard !deletedSlots.isEmpty else { return }
        @inline(__always) func isDeleted(_ s: UInt32) -> Bool {
            states[Int(s)] == Self.stateDeleted
        }
        for s in 0..<UInt32(slotCount) where states[Int(s)] == Self.stateLive {
            for level in 0...Int(levels[Int(s)]) {
                let list = links(s, level)
                let count = Int(list[0])
                var damaged = false
                for j in 0..<count where isDeleted(list[j + 1]) {
                    damaged = true
                    break
                }
                guard damaged else { continue }
                // Candidates: the surviving neighbours and everything two hops away through any
                // neighbour, deleted or not (as hnswlib's repairConnectionsForUpdate), so the
                // heuristic has a neighbourhood to choose from, not only the leftovers.
                var pool = Set<UInt32>()
                for j in 0..<count {
                    let n = list[j + 1]
                    if !isDeleted(n) { pool.insert(n) }
                    let second = links(n, level)
                    for i in 0..<Int(second[0]) {
                        let m = second[i + 1]
                        if m != s && states[Int(m)] == Self.stateLive { pool.insert(m) }
                    }
                }
                let sorted = pool.map { packCandidate(slotDistance(s, $0), $0) }.sorted()
                let kept = selectNeighbors(
                    sorted, limit: capacity(atLevel: level), keepPruned: true)
                list[0] = UInt32(kept.count)
                for (j, n) in kept.enumerated() { list[j + 1] = n }
            }
        }
        if entryPoint != Self.noNode && isDeleted(entryPoint) {
            var best = Self.noNode
            var bestLevel = -1
            for s in 0..<slotCount where states[s] == Self.stateLive && Int(levels[s]) > bestLevel {
                best = UInt32(s)
                bestLevel = Int(levels[s])
            }
            entryPoint = best
            maxLevel = bestLevel
        }
        for s in deletedSlots {
            states[Int(s)] = Self.stateFree
            level0[Int(s) * (maxM0 + 1)] = 0
            upper[Int(s)]?.deallocate()
            upper[Int(s)] = nil
            levels[Int(s)] = 0
            freeSlots.append(s)
        }
        deletedSlots.removeAll()
        if liveCount == 0 {
            entryPoint = Self.noNode
            maxLevel = -1
        }
    }

    /// Removes every vector, keeping the configuration.
    public func removeAll() {
        lock.write {
            for s in 0..<slotCount {
                upper[s]?.deallocate()
                upper[s] = nil
                states[s] = Self.stateFree
                level0[s * (maxM0 + 1)] = 0
            }
            slotCount = 0
            liveCount = 0
            slotsByID.removeAll()
            freeSlots.removeAll()
            deletedSlots.removeAll()
            entryPoint = Self.noNode
            maxLevel = -1
        }
    }
}
