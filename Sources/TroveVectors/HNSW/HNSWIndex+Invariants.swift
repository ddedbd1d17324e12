extension HNSWIndex {
    /// Checks the graph's structure and returns every violation found (empty when sound):
    /// no self-loops, no duplicate or dangling links (to free slots or out of range), no list
    /// longer than its layer allows, every neighbour present on the layer of the link, the
    /// entry point on the top layer, and the id map a bijection onto the live slots.
    ///
    /// Tests run it after mutations (as hnswlib's `checkIntegrity`).
    /// ```swift
    /// #expect(index.checkInvariants().isEmpty)
    /// ```
    /// - Complexity: O(n · M · L).
    public func checkInvariants() -> [String] {
        lock.read { invariantViolations(limit: 20) }
    }

    func invariantViolations(limit: Int) -> [String] {
        var problems: [String] = []
        func report(_ p: String) { if problems.count < limit { problems.append(p) } }
        var live = 0
        var topLevel = -1
        // Duplicates within a list: the list's number is stamped on each neighbour it names (one
        // array for the whole graph, where a set per list cost more than the rest of a load).
        var stamps = [UInt32](repeating: .max, count: slotCount)
        var list: UInt32 = 0
        for s in 0..<slotCount {
            let state = states[s]
            guard state != Self.state_free else { continue }
            guard state == Self.state_live || state == Self.state_deleted else {
                report("slot \(s): unknown state \(state)")
                continue
            }
            if state == Self.state_live {
                live += 1
                if slotsByID[slotIDs[s]] != UInt32(s) { report("slot \(s): id \(slotIDs[s]) not mapped to it") }
            }
            let level = Int(levels[s])
            topLevel = max(topLevel, level)
            if level > 0 && upper[s] == nil { report("slot \(s): level \(level) without upper links") }
            if level > 0 && upper[s] == nil { continue }
            for l in 0...level {
                let neighbours = links(UInt32(s), l)
                let count = Int(neighbours[0])
                if count > capacity(atLevel: l) {
                    report("slot \(s) level \(l): \(count) links > \(capacity(atLevel: l))")
                    continue
                }
                list &+= 1
                for j in 0..<count {
                    let n = neighbours[j + 1]
                    if n == UInt32(s) { report("slot \(s) level \(l): self-loop") }
                    if Int(n) >= slotCount || states[Int(n)] == Self.state_free {
                        report("slot \(s) level \(l): dangling link to \(n)")
                        continue
                    }
                    if stamps[Int(n)] == list { report("slot \(s) level \(l): duplicate link to \(n)") }
                    stamps[Int(n)] = list
                    if Int(levels[Int(n)]) < l {
                        report("slot \(s) level \(l): link to \(n) which only reaches level \(levels[Int(n)])")
                    }
                }
            }
        }
        if live != liveCount { report("live count \(liveCount) but \(live) live slots") }
        if slotsByID.count != liveCount { report("id map holds \(slotsByID.count) ids for \(liveCount) live nodes") }
        if liveCount + deletedSlots.count > 0 {
            if entryPoint == Self.noNode || Int(entryPoint) >= slotCount || states[Int(entryPoint)] == Self.state_free {
                report("no valid entry point")
            } else if Int(levels[Int(entryPoint)]) != maxLevel || maxLevel != topLevel {
                report("entry point level \(levels[Int(entryPoint)]), max level \(maxLevel), highest node level \(topLevel)")
            }
        }
        return problems
    }
}
