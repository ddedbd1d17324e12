import Foundation

/// A document found by ``BM25Index``.
public struct BM25Hit: Sendable, Hashable {
    /// The document's id.
    public var id: Int64
    /// Its BM25 score (higher is better; FTS5's `bm25()` is this value negated).
    public var score: Double
    /// How many of the query's clauses (words or phrases) the document matches.
    public var matchedClauses: Int
    /// How many clauses the query has.
    public var clauseCount: Int

    /// The fraction of the query's clauses the document matches, 0 ... 1: how much of what the
    /// person typed this document explains (the lexical leg's confidence in fusion).
    public var coverage: Double {
        clauseCount == 0 ? 0 : Double(matchedClauses) / Double(clauseCount)
    }

    /// Creates a hit.
    public init(id: Int64, score: Double, matchedClauses: Int, clauseCount: Int) {
        self.id = id
        self.score = score
        self.matchedClauses = matchedClauses
        self.clauseCount = clauseCount
    }
}

extension BM25Index {
    /// The best `topK` documents for a typed query.
    ///
    /// - Parameters:
    ///   - query: The parsed query (built with this index's ``tokenizer``).
    ///   - topK: How many hits at most.
    ///   - allowedIDs: When given, only these documents compete (a filter applied before
    ///     ranking: `topK` allowed documents come back whenever that many match).
    /// - Returns: Hits, best first; ties by smaller id first.
    /// - Complexity: O(Σ postings of the query's rarer terms + k log k) in the usual case; the
    ///   common terms' lists are probed by binary search only for competitive documents.
    public func search(_ query: TypedQuery, topK: Int, allowedIDs: Set<Int64>? = nil) -> [BM25Hit] {
        search(clauses: query.clauses.map(\.terms), topK: topK, allowedIDs: allowedIDs)
    }

    /// The best `topK` documents for clauses of already-tokenized terms.
    ///
    /// - Parameters:
    ///   - clauses: Each clause a term (one element) or a phrase (several, in order).
    ///   - topK: How many hits at most.
    ///   - allowedIDs: When given, only these documents compete.
    /// - Returns: Hits, best first; ties by smaller id first.
    public func search(clauses: [[String]], topK: Int, allowedIDs: Set<Int64>? = nil) -> [BM25Hit] {
        guard topK > 0, count > 0, !clauses.isEmpty else { return [] }
        let lists = scoringLists(for: clauses)
        if let allowedIDs {
            // A selective filter: score the allowed documents directly from their terms.
            let postingTotal = lists.reduce(0) { $0 + $1.slots.count }
            if allowedIDs.count * 8 < postingTotal {
                let slots = allowedIDs.compactMap { slotOfID[$0] }
                return scoreSlots(slots, lists: lists, clauseCount: clauses.count, topK: topK)
            }
        }
        return maxScore(
            lists: lists, clauseCount: clauses.count, topK: topK,
            allowed: allowedIDs.map { ids in { ids.contains($0) } })
    }

    /// The exhaustive top k: every matching document scored, then sorted — the reference that
    /// ``search(clauses:topK:allowedIDs:)`` equals, kept public for verification and benchmarks.
    ///
    /// - Parameters:
    ///   - clauses: Each clause a term (one element) or a phrase (several, in order).
    ///   - topK: How many hits at most.
    /// - Returns: Hits, best first; ties by smaller id first.
    /// - Complexity: O(Σ postings of all clauses · log).
    public func exhaustiveSearch(clauses: [[String]], topK: Int) -> [BM25Hit] {
        guard topK > 0, count > 0, !clauses.isEmpty else { return [] }
        let lists = scoringLists(for: clauses)
        let average = averageDocumentLength
        // Term-at-a-time accumulators, one per slot (8 + 2 bytes per slot, per query). Lists come
        // in clause order, so each sum is formed in the same order as MaxScore's canonical sum.
        var scores = [Double](repeating: 0, count: slotIDs.count)
        var matched = [UInt16](repeating: 0, count: slotIDs.count)
        var touched: [UInt32] = []
        for list in lists {
            for (position, slot) in list.slots.enumerated() {
                if matched[Int(slot)] == 0 { touched.append(slot) }
                scores[Int(slot)] += contribution(
                    idf: list.idf, tf: list.frequencies[position],
                    length: slotLengths[Int(slot)], average: average)
                matched[Int(slot)] += 1
            }
        }
        var heap = TopHits(capacity: topK)
        for slot in touched {
            heap.offer(
                BM25Hit(
                    id: slotIDs[Int(slot)], score: scores[Int(slot)],
                    matchedClauses: Int(matched[Int(slot)]),
                    clauseCount: clauses.count))
        }
        return heap.sorted()
    }

    // MARK: - Scoring lists

    /// One clause's documents, frequencies and idf, ready to score.
    struct ScoringList {
        var clause: Int
        var slots: [UInt32]
        var frequencies: [UInt32]
        var idf: Double
        var upperBound: Double
    }

    func scoringLists(for clauses: [[String]]) -> [ScoringList] {
        let n = Double(count)
        let average = averageDocumentLength
        var lists: [ScoringList] = []
        for (clause, terms) in clauses.enumerated() {
            let ids = terms.map { termIDs[$0] }
            guard !ids.isEmpty, ids.allSatisfy({ $0 != nil }) else { continue }
            var slots: [UInt32]
            var frequencies: [UInt32]
            var maximumFrequency: UInt32
            var minimumLength: UInt32
            if ids.count == 1, let id = ids[0] {
                let postings = postings[Int(id)]
                guard !postings.slots.isEmpty else { continue }
                slots = postings.slots
                frequencies = postings.frequencies
                maximumFrequency = postings.maximumFrequency
                minimumLength = postings.minimumDocumentLength
            } else {
                (slots, frequencies) = phrasePostings(ids.map { $0! })
                guard !slots.isEmpty else { continue }
                maximumFrequency = frequencies.max() ?? 0
                minimumLength = slots.map { slotLengths[Int($0)] }.min() ?? 0
            }
            let df = Double(slots.count)
            var idf = ((n - df + 0.5) / (df + 0.5)).logOfSelf
            if idf <= 0 { idf = 1e-6 }
            let bound = contribution(
                idf: idf, tf: maximumFrequency, length: minimumLength, average: average)
            lists.append(
                ScoringList(
                    clause: clause, slots: slots, frequencies: frequencies, idf: idf,
                    upperBound: bound))
        }
        return lists
    }

    /// Documents containing the terms in order, adjacent, and how many times.
    func phrasePostings(_ terms: [UInt32]) -> ([UInt32], [UInt32]) {
        // Candidates: the intersection, walked from the rarest term's list.
        let rarest = terms.min { postings[Int($0)].slots.count < postings[Int($1)].slots.count }!
        var slots: [UInt32] = []
        var frequencies: [UInt32] = []
        let others = terms.filter { $0 != rarest }
        candidates: for slot in postings[Int(rarest)].slots {
            for term in others {
                let list = postings[Int(term)].slots
                let index = list.partitioningIndex { $0 >= slot }
                if index == list.count || list[index] != slot { continue candidates }
            }
            let sequence = slotTerms[Int(slot)]
            var occurrences: UInt32 = 0
            if sequence.count >= terms.count {
                for start in 0...(sequence.count - terms.count) where sequence[start] == terms[0] {
                    var matches = true
                    for offset in 1..<terms.count where sequence[start + offset] != terms[offset] {
                        matches = false
                        break
                    }
                    if matches { occurrences += 1 }
                }
            }
            if occurrences > 0 {
                slots.append(slot)
                frequencies.append(occurrences)
            }
        }
        return (slots, frequencies)
    }

    @inline(__always)
    func contribution(idf: Double, tf: UInt32, length: UInt32, average: Double) -> Double {
        let tf = Double(tf)
        let k1 = parameters.k1
        let norm =
            average > 0 ? k1 * (1 - parameters.b + parameters.b * Double(length) / average) : k1
        return idf * (tf * (k1 + 1)) / (tf + norm)
    }

    // MARK: - Exhaustive scoring of given documents

    func scoreSlots(_ slots: [UInt32], lists: [ScoringList], clauseCount: Int, topK: Int)
        -> [BM25Hit]
    {
        let average = averageDocumentLength
        var heap = TopHits(capacity: topK)
        var contributions = [Double](repeating: 0, count: clauseCount)
        for slot in slots {
            var matched = 0
            for index in contributions.indices { contributions[index] = 0 }
            for list in lists {
                let position = list.slots.partitioningIndex { $0 >= slot }
                guard position < list.slots.count, list.slots[position] == slot else { continue }
                contributions[list.clause] = contribution(
                    idf: list.idf, tf: list.frequencies[position],
                    length: slotLengths[Int(slot)], average: average)
                matched += 1
            }
            guard matched > 0 else { continue }
            heap.offer(
                BM25Hit(
                    id: slotIDs[Int(slot)], score: contributions.reduce(0, +),
                    matchedClauses: matched, clauseCount: clauseCount))
        }
        return heap.sorted()
    }

    // MARK: - MaxScore

    func maxScore(
        lists unsorted: [ScoringList], clauseCount: Int, topK: Int,
        allowed: ((Int64) -> Bool)?
    ) -> [BM25Hit] {
        // Clauses by upper bound, smallest first; prefixBound[i] = Σ bounds of lists 0...i.
        let lists = unsorted.sorted { $0.upperBound < $1.upperBound }
        let m = lists.count
        guard m > 0 else { return [] }
        // Bounds are inflated by a relative 1e-9 so floating-point rounding in the sums can
        // never prune a document whose exact score would tie or beat the threshold.
        let slack = 1 + 1e-9
        var prefixBound = [Double](repeating: 0, count: m)
        var running = 0.0
        for i in 0..<m {
            running += lists[i].upperBound
            prefixBound[i] = running * slack
        }
        let average = averageDocumentLength
        var cursor = [Int](repeating: 0, count: m)
        var heap = TopHits(capacity: topK)
        var firstEssential = 0
        var contributions = [Double](repeating: 0, count: clauseCount)

        while true {
            // The next document: the smallest current slot among the essential lists.
            var slot = UInt32.max
            for i in firstEssential..<m where cursor[i] < lists[i].slots.count {
                slot = min(slot, lists[i].slots[cursor[i]])
            }
            if slot == .max { break }
            let length = slotLengths[Int(slot)]
            var score = 0.0
            var matched = 0
            for i in contributions.indices { contributions[i] = 0 }
            for i in firstEssential..<m
            where cursor[i] < lists[i].slots.count && lists[i].slots[cursor[i]] == slot {
                let c = contribution(
                    idf: lists[i].idf, tf: lists[i].frequencies[cursor[i]], length: length,
                    average: average)
                contributions[lists[i].clause] = c
                score += c
                matched += 1
                cursor[i] += 1
            }
            if let allowed, !allowed(slotIDs[Int(slot)]) { continue }
            // Non-essential lists, largest bound first, while the document can still compete.
            var competitive = true
            var i = firstEssential - 1
            while i >= 0 {
                if heap.isFull, score + prefixBound[i] < heap.threshold {
                    competitive = false
                    break
                }
                let list = lists[i].slots
                let position = list.partitioningIndex(from: cursor[i]) { $0 >= slot }
                cursor[i] = position
                if position < list.count, list[position] == slot {
                    let c = contribution(
                        idf: lists[i].idf, tf: lists[i].frequencies[position], length: length,
                        average: average)
                    contributions[lists[i].clause] = c
                    score += c
                    matched += 1
                }
                i -= 1
            }
            guard competitive else { continue }
            // The canonical sum (clause order) so scores equal the exhaustive ones bit for bit.
            let hit = BM25Hit(
                id: slotIDs[Int(slot)], score: contributions.reduce(0, +), matchedClauses: matched,
                clauseCount: clauseCount)
            if heap.offer(hit), heap.isFull {
                while firstEssential < m, prefixBound[firstEssential] < heap.threshold {
                    firstEssential += 1
                }
            }
        }
        return heap.sorted()
    }
}

/// The k best hits seen so far: a binary min-heap whose root is the worst kept hit.
struct TopHits {
    let capacity: Int
    private var heap: [BM25Hit] = []

    init(capacity: Int) {
        self.capacity = capacity
        heap.reserveCapacity(min(capacity, 1024))
    }

    var isFull: Bool { heap.count >= capacity }
    /// The score a document must reach to enter (meaningful when full).
    var threshold: Double { heap.first?.score ?? -.infinity }

    /// Whether `a` ranks above `b`: higher score, then smaller id.
    @inline(__always)
    static func ranksAbove(_ a: BM25Hit, _ b: BM25Hit) -> Bool {
        a.score > b.score || (a.score == b.score && a.id < b.id)
    }

    /// Keeps `hit` if it is among the k best so far. Returns whether it was kept.
    @discardableResult
    mutating func offer(_ hit: BM25Hit) -> Bool {
        if heap.count < capacity {
            heap.append(hit)
            siftUp(heap.count - 1)
            return true
        }
        guard Self.ranksAbove(hit, heap[0]) else { return false }
        heap[0] = hit
        siftDown(0)
        return true
    }

    func sorted() -> [BM25Hit] {
        heap.sorted(by: Self.ranksAbove)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            // The root is the worst: a parent must rank below (or equal to) its children.
            guard Self.ranksAbove(heap[parent], heap[child]) else { return }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var worst = parent
            if left < heap.count, Self.ranksAbove(heap[worst], heap[left]) { worst = left }
            if right < heap.count, Self.ranksAbove(heap[worst], heap[right]) { worst = right }
            if worst == parent { return }
            heap.swapAt(parent, worst)
            parent = worst
        }
    }
}

extension Double {
    @inline(__always)
    var logOfSelf: Double { Foundation.log(self) }
}
