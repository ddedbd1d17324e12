import TroveText
import TroveVectors

extension CollectionEngine {
    /// The last steps of a hybrid query after fusion: the "no good match" threshold, then MMR,
    /// then the first `topK` (Documentation/PARAMETERS.md, "Fusion").
    ///
    /// - Complexity: O(n · dimension) for the threshold over n fused rows; MMR over a pool of
    ///   p = max(2 · topK, 20) rows costs O(topK · p · dimension).
    func rerank(_ fused: [Fusion.Fused], query: [Float], fusion: Fusion, topK: Int) throws -> [Fusion.Fused] {
        guard fusion.minimumVectorScore != nil || fusion.mmrLambda != nil else { return Array(fused.prefix(topK)) }
        let index = try catchUp()
        let metric = configuration.metric
        func vectorScore(_ id: Int64) -> Double? {
            index.vector(for: id).map { Double(metric.score(distance: metric.distance(query, $0))) }
        }
        var candidates = fused
        if let minimum = fusion.minimumVectorScore {
            candidates = candidates.filter { (vectorScore($0.id) ?? -.infinity) >= minimum }
        }
        guard let lambda = fusion.mmrLambda else { return Array(candidates.prefix(topK)) }
        let pool = Array(candidates.prefix(max(2 * topK, 20)))
        let byID = Dictionary(uniqueKeysWithValues: pool.map { ($0.id, $0) })
        var vectors: [Int64: [Float]] = [:]
        for hit in pool { vectors[hit.id] = index.vector(for: hit.id) }
        let order = RankFusion.maximalMarginalRelevance(
            pool.map { (id: $0.id, relevance: vectorScore($0.id) ?? -1) }, count: topK, lambda: lambda
        ) { a, b in
            guard let u = vectors[a], let v = vectors[b] else { return 0 }
            return Double(metric.score(distance: metric.distance(u, v)))
        }
        return order.compactMap { byID[$0] }
    }
}
