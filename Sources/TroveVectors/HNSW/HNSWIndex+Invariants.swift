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

    /// - Parameter idMapFromSlots: the id map was just built from the live slots' ids, refusing
    ///   duplicates (a snapshot load): it maps each of them to its slot by construction, so the
    ///   lookup per slot is skipped (its size is still checked).
    func invariantViolations(limit: Int, idMapFromSlots: Bool = false) -> [String] {
        var problems: [String] = []
        func report(_ p: String) { if problems.count < limit { problems.append(p) } }
        var live = 0
        var topLevel = -1
        // Locals: reads of the stored pointers inside the loops would each be checked for
        // exclusive access.
        let states = states
        let levels = levels
        let slotIDs = slotIDs
        let slotCount = slotCount
        // One word per slot, read once per link: the highest layer a link may name the slot on
        // plus one in the high half (0: free), and in the low half the number of the last list
        // that named it, for duplicates within a list (one array for the whole graph, where a
        // set per list cost more than the rest of a load).
        var marks = [UInt64](repeating: UInt64(UInt32.max), count: slotCount)
        for s in 0..<slotCount where states[s] != Self.stateFree {
            marks[s] |= (UInt64(levels[s]) + 1) << 32
        }
        var list: UInt32 = 0
        for s in 0..<slotCount {
            let state = states[s]
            guard state != Self.stateFree else { continue }
            guard state == Self.stateLive || state == Self.stateDeleted else {
                report("slot \(s): unknown state \(state)")
                continue
            }
            if state == Self.stateLive {
                live += 1
                if !idMapFromSlots, slotsByID[slotIDs[s]] != UInt32(s) {
                    report("slot \(s): id \(slotIDs[s]) not mapped to it")
                }
            }
            let level = Int(levels[s])
            topLevel = max(topLevel, level)
            if level > 0 && upper[s] == nil {
                report("slot \(s): level \(level) without upper links")
            }
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
                    guard Int(n) < slotCount else {
                        report("slot \(s) level \(l): dangling link to \(n)")
                        continue
                    }
                    let mark = marks[Int(n)]
                    let reach = Int(mark >> 32)
                    if reach <= l {
                        guard reach > 0 else {
                            report("slot \(s) level \(l): dangling link to \(n)")
                            continue
                        }
                        report(
                            "slot \(s) level \(l): link to \(n) which only reaches level \(reach - 1)"
                        )
                    }
                    if UInt32(truncatingIfNeeded: mark) == list {
                        report("slot \(s) level \(l): duplicate link to \(n)")
                    }
                    marks[Int(n)] = mark & 0xFFFF_FFFF_0000_0000 | UInt64(list)
                }
            }
        }
        if live != liveCount { report("live count \(liveCount) but \(live) live slots") }
        if slotsByID.count != liveCount {
            report("id map holds \(slotsByID.count) ids for \(liveCount) live nodes")
        }
        if liveCount + deletedSlots.count > 0 {
            if entryPoint == Self.noNode || Int(entryPoint) >= slotCount
                || states[Int(entryPoint)] == Self.stateFree
            {
                report("no valid entry point")
            } else if Int(levels[Int(entryPoint)]) != maxLevel || maxLevel != topLevel {
                report(
                    "entry point level \(levels[Int(entryPoint)]), max level \(maxLevel), highest node level \(topLevel)"
                )
            }
        }
        return problems
    }
}
