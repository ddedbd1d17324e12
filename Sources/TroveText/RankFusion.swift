/// Rank fusion and reranking for hybrid search: pure functions over ranked id lists.
///
/// - ``reciprocalRank(_:k:)``: weighted reciprocal rank fusion (Cormack, Clarke & Büttcher 2009).
/// - ``confidentLexicalHits(_:minimumCoverage:)``: the gate that lets a keyword hit vote only
///   when it explains most of the query.
/// - ``maximalMarginalRelevance(_:count:lambda:similarity:)``: MMR reranking (Carbonell &
///   Goldstein 1998) for diverse results.
///
/// ```swift
/// let lexical = RankFusion.confidentLexicalHits(bm25Hits)            // coverage >= 2/3
/// let fused = RankFusion.reciprocalRank([
///     .init(ids: vectorIDs),
///     .init(ids: lexical.map(\.id)),
/// ])
/// ```
public enum RankFusion {
    /// The default RRF constant k = 60, the value Cormack et al. found robust across collections.
    public static let defaultK: Double = 60
    /// The default gate: a lexical hit votes when it matches at least 2/3 of the query's clauses.
    public static let defaultMinimumCoverage: Double = 2.0 / 3.0

    /// One retrieval leg's ranking and its weight in the fusion.
    public struct RankedList: Sendable, Hashable {
        /// Document ids, best first (a repeated id counts at its first rank).
        public var ids: [Int64]
        /// The leg's weight: its votes are multiplied by it. 1 = an equal say.
        public var weight: Double

        /// Creates a ranked list.
        ///
        /// - Parameters:
        ///   - ids: Document ids, best first.
        ///   - weight: The leg's weight (≥ 0). Default 1.
        public init(ids: [Int64], weight: Double = 1) {
            self.ids = ids
            self.weight = weight
        }
    }

    /// A document after fusion.
    public struct FusedHit: Sendable, Hashable {
        /// The document's id.
        public var id: Int64
        /// Its fused score, Σ weight / (k + rank) over the lists that rank it.
        public var score: Double
        /// Its 1-based rank in each input list, in input order; `nil` where a list lacks it.
        public var ranks: [Int?]

        /// Creates a fused hit.
        public init(id: Int64, score: Double, ranks: [Int?]) {
            self.id = id
            self.score = score
            self.ranks = ranks
        }
    }

    /// Weighted reciprocal rank fusion.
    ///
    /// score(d) = Σ_legs weight_leg / (k + rank_leg(d)), ranks from 1. A larger k flattens the
    /// difference between the top ranks; k = 60 is the paper's choice. Ties go to the document
    /// with the better best rank, then the smaller id, so the result is deterministic.
    ///
    /// ```swift
    /// let fused = RankFusion.reciprocalRank([.init(ids: [3, 1, 2]), .init(ids: [1, 4], weight: 0.5)])
    /// // 1: 1/62 + 0.5/61, 3: 1/61, 2: 1/63, 4: 0.5/62
    /// ```
    ///
    /// - Parameters:
    ///   - lists: The legs' rankings with their weights.
    ///   - k: The RRF constant (> 0). Default 60.
    /// - Returns: Every document of every list, best first.
    /// - Complexity: O(n log n) in the total number of ranked ids.
    public static func reciprocalRank(_ lists: [RankedList], k: Double = defaultK) -> [FusedHit] {
        precondition(k > 0, "RRF's k must be positive")
        var hits: [Int64: FusedHit] = [:]
        for (leg, list) in lists.enumerated() {
            for (offset, id) in list.ids.enumerated() {
                let rank = offset + 1
                var hit =
                    hits[id]
                    ?? FusedHit(id: id, score: 0, ranks: Array(repeating: nil, count: lists.count))
                guard hit.ranks[leg] == nil else { continue }  // first occurrence only
                hit.ranks[leg] = rank
                hit.score += list.weight / (k + Double(rank))
                hits[id] = hit
            }
        }
        return hits.values.sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            let bestA = a.ranks.compactMap { $0 }.min() ?? .max
            let bestB = b.ranks.compactMap { $0 }.min() ?? .max
            if bestA != bestB { return bestA < bestB }
            return a.id < b.id
        }
    }

    /// The lexical hits confident enough to vote in fusion, in their order.
    ///
    /// A keyword hit is evidence of relevance only when it explains most of what the person
    /// typed: a note sharing one common word with a seven-word paraphrase is noise, and plain
    /// RRF would still give it a vote as large as the vector leg's best match. "Most" is taken
    /// literally as at least two thirds of the query's clauses; single-word and two-word queries
    /// therefore need every word (1/1, 2/2), three-word queries two of three.
    ///
    /// - Parameters:
    ///   - hits: The lexical leg's hits, best first.
    ///   - minimumCoverage: The fraction of clauses a hit must match (0 ... 1). Default 2/3.
    /// - Returns: The hits that vote, best first; their ranks in fusion are their positions here.
    public static func confidentLexicalHits(
        _ hits: [BM25Hit], minimumCoverage: Double = defaultMinimumCoverage
    )
        -> [BM25Hit]
    {
        // A relative epsilon so 2 of 3 clauses (0.666…) passes a 2/3 gate despite rounding.
        hits.filter { $0.coverage + 1e-9 >= minimumCoverage }
    }

    /// Maximal marginal relevance: reorders candidates so each next pick is relevant to the
    /// query and unlike the picks before it.
    ///
    /// Each step picks argmax over the remaining d of
    /// λ · relevance(d) − (1 − λ) · max over picked s of similarity(d, s).
    /// λ = 1 keeps the relevance order; λ = 0 maximises diversity. Relevance and similarity
    /// should be on the same scale (for example, cosine similarity of the query and of the
    /// documents' embeddings). Ties go to the earlier candidate.
    ///
    /// ```swift
    /// let order = RankFusion.maximalMarginalRelevance(
    ///     [(id: 1, relevance: 0.9), (id: 2, relevance: 0.85), (id: 3, relevance: 0.5)],
    ///     count: 2, lambda: 0.5) { a, b in cosine(vectors[a]!, vectors[b]!) }
    /// ```
    ///
    /// - Parameters:
    ///   - candidates: Ids with their relevance to the query.
    ///   - count: How many to pick.
    ///   - lambda: The relevance/diversity trade-off, 0 ... 1.
    ///   - similarity: Similarity of two candidates (symmetric).
    /// - Returns: The picked ids in pick order.
    /// - Complexity: O(count · n) calls of `similarity`, n = candidates.
    public static func maximalMarginalRelevance(
        _ candidates: [(id: Int64, relevance: Double)], count: Int, lambda: Double,
        similarity: (Int64, Int64) -> Double
    ) -> [Int64] {
        precondition((0...1).contains(lambda), "MMR's λ must be in 0...1")
        var remaining = candidates
        // The largest similarity of each remaining candidate to anything picked so far.
        var closest = [Double](repeating: -.infinity, count: candidates.count)
        var picked: [Int64] = []
        while picked.count < count, !remaining.isEmpty {
            var best = 0
            var bestValue = -Double.infinity
            for (index, candidate) in remaining.enumerated() {
                let penalty = picked.isEmpty ? 0 : closest[index]
                let value = lambda * candidate.relevance - (1 - lambda) * penalty
                if value > bestValue {
                    bestValue = value
                    best = index
                }
            }
            let choice = remaining.remove(at: best)
            closest.remove(at: best)
            picked.append(choice.id)
            for (index, candidate) in remaining.enumerated() {
                closest[index] = max(closest[index], similarity(candidate.id, choice.id))
            }
        }
        return picked
    }
}
