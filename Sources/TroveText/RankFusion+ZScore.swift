extension RankFusion {
    /// One retrieval leg's scored results (higher is better) and its weight.
    public struct ScoredList: Sendable, Hashable {
        /// Document ids with their scores (cosine similarities for a vector leg), in any order;
        /// a repeated id counts with its first score.
        public var hits: [(id: Int64, score: Double)]
        /// The leg's weight (≥ 0). 1 = an equal say.
        public var weight: Double

        /// Creates a scored list.
        public init(hits: [(id: Int64, score: Double)], weight: Double = 1) {
            self.hits = hits
            self.weight = weight
        }

        public static func == (a: ScoredList, b: ScoredList) -> Bool {
            a.weight == b.weight && a.hits.count == b.hits.count
                && zip(a.hits, b.hits).allSatisfy { $0.id == $1.id && $0.score == $1.score }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(weight)
            for hit in hits {
                hasher.combine(hit.id)
                hasher.combine(hit.score)
            }
        }
    }

    /// Score fusion of several legs by the sum of per-query z-normalised scores (CombSUM over
    /// z-scores; Fox & Shaw 1994, normalisation as in Montague & Aslam 2001).
    ///
    /// Each leg's scores are standardised over the leg's own results for this query,
    /// z = (s − mean) / standard deviation, and a document's fused score is
    /// Σ_legs weight · z. A document a leg did not return gets that leg's lowest z: it was not
    /// in the leg's top, so at best it scores like the last one returned.
    ///
    /// Why not raw scores or ranks: two embedding models' cosines live on different scales
    /// (multilingual-e5's cluster around 0.8, all-MiniLM-L6-v2's spread over 0 … 0.7), so a raw
    /// sum lets the wider model decide alone; rank fusion (``reciprocalRank(_:k:)``) puts both on
    /// one scale but forgets how far apart the scores are, so a confident first place counts
    /// the same as a near tie. Standardising keeps the gaps and puts the legs on one scale.
    /// A leg whose scores are all equal (or that returned one document) carries no ranking
    /// information and adds 0 for its documents.
    ///
    /// ```swift
    /// let fused = RankFusion.zScoreSum([
    ///     .init(hits: [(1, 0.61), (2, 0.40), (3, 0.35)]),   // all-MiniLM-L6-v2 cosines
    ///     .init(hits: [(2, 0.88), (1, 0.86), (4, 0.80)]),   // multilingual-e5-small cosines
    /// ])
    /// ```
    ///
    /// - Parameter lists: The legs' scored results with their weights.
    /// - Returns: Every document of every list, best first; `ranks` holds each document's
    ///   1-based rank by score in each leg (`nil` where absent). Ties go to the better best
    ///   rank, then the smaller id.
    /// - Complexity: O(n log n) in the total number of hits.
    public static func zScoreSum(_ lists: [ScoredList]) -> [FusedHit] {
        // Per leg: first score of each id, its z-score, its rank, and the floor for absent ids.
        var legs: [(z: [Int64: Double], rank: [Int64: Int], floor: Double)] = []
        for list in lists {
            var seen = Set<Int64>()
            let hits = list.hits.filter { seen.insert($0.id).inserted }
            let n = Double(hits.count)
            let mean = hits.reduce(0) { $0 + $1.score } / max(n, 1)
            let variance = hits.reduce(0) { $0 + ($1.score - mean) * ($1.score - mean) } / max(n, 1)
            let deviation = variance.squareRoot()
            var z: [Int64: Double] = [:]
            for hit in hits { z[hit.id] = deviation > 1e-12 ? (hit.score - mean) / deviation : 0 }
            var rank: [Int64: Int] = [:]
            for (offset, hit) in hits.sorted(by: {
                $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id)
            })
            .enumerated() {
                rank[hit.id] = offset + 1
            }
            legs.append((z, rank, z.values.min() ?? 0))
        }
        var ids = Set<Int64>()
        for leg in legs { ids.formUnion(leg.z.keys) }
        let hits = ids.map { id in
            var score = 0.0
            for (leg, list) in zip(legs, lists) { score += list.weight * (leg.z[id] ?? leg.floor) }
            return FusedHit(id: id, score: score, ranks: legs.map { $0.rank[id] })
        }
        return hits.sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            let bestA = a.ranks.compactMap { $0 }.min() ?? .max
            let bestB = b.ranks.compactMap { $0 }.min() ?? .max
            if bestA != bestB { return bestA < bestB }
            return a.id < b.id
        }
    }
}
