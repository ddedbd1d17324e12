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
        let metric = configuration.metric
        // A codes-only HNSW collection keeps no float32 vectors in memory: read the few needed
        // from the table rather than loading a full flat copy.
        let vectorOf: (Int64) throws -> [Float]?
        if configuration.index.readsVectorsFromTable {
            vectorOf = { try self.tableVector(id: $0) }
        } else {
            let index = try catchUp()
            vectorOf = { index.vector(for: $0) }
        }
        var cache: [Int64: [Float]] = [:]
        func vector(_ id: Int64) throws -> [Float]? {
            if let known = cache[id] { return known }
            let found = try vectorOf(id)
            cache[id] = found
            return found
        }
        func vectorScore(_ id: Int64) throws -> Double? {
            try vector(id).map { Double(metric.score(distance: metric.distance(query, $0))) }
        }
        var candidates = fused
        if let minimum = fusion.minimumVectorScore {
            candidates = try candidates.filter { (try vectorScore($0.id) ?? -.infinity) >= minimum }
        }
        guard let lambda = fusion.mmrLambda else { return Array(candidates.prefix(topK)) }
        let pool = Array(candidates.prefix(max(2 * topK, 20)))
        let byID = Dictionary(uniqueKeysWithValues: pool.map { ($0.id, $0) })
        var vectors: [Int64: [Float]] = [:]
        for hit in pool { vectors[hit.id] = try vector(hit.id) }
        let relevance = try pool.map { (id: $0.id, relevance: try vectorScore($0.id) ?? -1) }
        let order = RankFusion.maximalMarginalRelevance(
            relevance, count: topK, lambda: lambda
        ) { a, b in
            guard let u = vectors[a], let v = vectors[b] else { return 0 }
            return Double(metric.score(distance: metric.distance(u, v)))
        }
        return order.compactMap { byID[$0] }
    }
}
