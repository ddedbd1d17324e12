import TroveText

/// Fusion of several embedding models' vector legs in which each model speaks only for the
/// documents it understands: a re-ranking step over the hits of one ``Query`` with a vector leg
/// per model (and optionally a text leg).
///
/// Two models rarely share a scale (one model's cosines cluster near 0.8, another's spread over
/// 0 … 0.7) or a competence (an English-only model says nothing useful about a Spanish note).
/// Reciprocal rank fusion puts them on one scale but keeps only the order; this fusion keeps the
/// gaps and lets the app say, per leg and document, whether the leg may speak
/// (Documentation/PARAMETERS.md, "Two models"):
///
/// 1. Each vector leg's similarities (1 − distance) are z-normalised over that leg's own hits
///    (mean 0, deviation 1); a document the leg did not return gets the leg's lowest z.
/// 2. A document's meaning score is the weighted mean z (the legs' ``VectorLeg/weight``) of the
///    legs competent for it, or of every leg when none is. With every leg competent and equal
///    weights this orders documents as the sum of z-scores (``FusionMethod/normalizedScores``).
/// 3. With a text leg, the meaning ranking's first ``depth`` documents meet the text leg's
///    hits by reciprocal rank fusion with ``k`` (the meaning ranking with weight 1, the text
///    leg with its own weight; a typed text hit votes only when it covers two thirds of the
///    query's words, as in every fused query). Without one, the meaning ranking is the result
///    and a hit's score its mean z.
///
/// The re-ranking needs every hit of every leg, so run the query ``query(_:)`` returns (each leg
/// ``depth`` deep, a limit that holds all their hits), then ``rerank(_:of:competent:)`` its hits.
/// The hits keep each leg's rank and distance; their score is the fusion's.
///
/// ```swift
/// let fusion = CompetenceFusion(limit: 10)
/// let query = try fusion.query(
///     Query().nearest(to: english, in: "minilm").nearest(to: multilingual, in: "e5")
///         .matching(.typed(text)))
/// let hits = fusion.rerank(try await notes.search(query), of: query) { leg, document in
///     leg == 1 || document["language"] == "en"  // leg 0 is the English-only model
/// }
/// ```
public struct CompetenceFusion: Hashable, Sendable {
    /// The most hits ``rerank(_:of:competent:)`` returns.
    public var limit: Int
    /// The reciprocal rank fusion constant for the meaning ranking and the text leg.
    public var k: Double

    /// A fusion returning at most `limit` hits.
    ///
    /// - Parameters:
    ///   - limit: the most hits returned (1...``Query/maximumLimit``).
    ///   - k: RRF's k for the meaning ranking and the text leg (> 0; 60, as fused queries).
    public init(limit: Int = 10, k: Double = 60) {
        self.limit = limit
        self.k = k
    }

    /// How deep each leg goes: as a fused query's legs, max(50, 4 × limit), at most
    /// ``Query/maximumLimit``.
    public var depth: Int { min(Query.maximumLimit, max(50, 4 * limit)) }

    /// The query to run for ``rerank(_:of:competent:)``: `query` with each leg ``depth`` deep and
    /// a limit that returns every hit of every leg.
    ///
    /// - Throws: ``TroveError/invalidQuery(_:)`` for a query without vector legs, with a geo
    ///   leg, MMR, a minimum score or an offset (none of them has a meaning here), or a limit or
    ///   `k` out of range.
    public func query(_ query: Query) throws -> Query {
        guard (1...Query.maximumLimit).contains(limit) else {
            throw TroveError.invalidLimit(limit, maximum: Query.maximumLimit)
        }
        guard k > 0, k.isFinite else {
            throw TroveError.invalidQuery("RRF k must be > 0, got \(k)")
        }
        guard !query.vectorLegs.isEmpty else {
            throw TroveError.invalidQuery("competence fusion needs at least one vector leg")
        }
        guard query.geoLeg == nil, query.mmrLambda == nil, query.minimumScore == nil,
            query.offset == 0
        else {
            throw TroveError.invalidQuery(
                "competence fusion takes vector legs and a text leg only, without MMR, a minimum score or an offset"
            )
        }
        var prepared = query
        for leg in prepared.vectorLegs.indices { prepared.vectorLegs[leg].k = depth }
        prepared.textLeg?.k = depth
        let legs = prepared.vectorLegs.count + (prepared.textLeg == nil ? 0 : 1)
        // Every leg's hits, whatever order the query's own fusion puts them in.
        prepared.limit = min(Query.maximumLimit, legs * depth)
        return prepared
    }

    /// The hits of `query` (from ``query(_:)``) in the fusion's order, at most ``limit``.
    ///
    /// - Parameters:
    ///   - hits: what the collection's `search` returned for `query`.
    ///   - query: the query they answer (its legs' weights and whether it has a text leg).
    ///   - competent: whether vector leg `leg` (its index in `query.vectorLegs`) may speak for a
    ///     hit's record; a leg can also be kept out for the whole query (a model that cannot read
    ///     the query's language) by answering false for every record.
    /// - Returns: the hits, best first, each with the fused score; equal meaning scores keep the order of `hits`.
    /// - Complexity: O(n log n + n · legs) in the number of hits, plus `competent` per leg and hit.
    public func rerank<Record>(
        _ hits: [Hit<Record>], of query: Query,
        competent: (_ leg: Int, _ record: Record) throws -> Bool
    ) rethrows -> [Hit<Record>] {
        let legs = query.vectorLegs.count
        var z: [[Int: Double]] = []
        var floors: [Double] = []
        for leg in 0..<legs {
            let found = hits.indices.compactMap {
                index -> (index: Int, rank: Int, score: Double)? in
                let hit = hits[index]
                guard leg < hit.vectorRanks.count, let rank = hit.vectorRanks[leg],
                    leg < hit.distances.count, let distance = hit.distances[leg]
                else { return nil }
                // 1 − distance: "higher is better" on a linear scale is all the z-score needs,
                // for every metric.
                return (index, rank, 1 - distance)
            }.sorted { $0.rank < $1.rank }
            let n = Double(found.count)
            let mean = found.reduce(0) { $0 + $1.score } / max(n, 1)
            let deviation =
                (found.reduce(0) { $0 + ($1.score - mean) * ($1.score - mean) } / max(n, 1))
                .squareRoot()
            var scores: [Int: Double] = [:]
            for hit in found {
                scores[hit.index] = deviation > 1e-12 ? (hit.score - mean) / deviation : 0
            }
            z.append(scores)
            floors.append(scores.values.min() ?? 0)
        }
        let speaking = (0..<legs).filter { query.vectorLegs[$0].weight > 0 }
        var meaning: [(index: Int, score: Double)] = []
        for index in hits.indices where z.contains(where: { $0[index] != nil }) {
            var voters = try speaking.filter { try competent($0, hits[index].record) }
            if voters.isEmpty { voters = speaking }
            var total = 0.0
            var weights = 0.0
            for leg in voters {
                total += query.vectorLegs[leg].weight * (z[leg][index] ?? floors[leg])
                weights += query.vectorLegs[leg].weight
            }
            meaning.append((index, weights > 0 ? total / weights : 0))
        }
        meaning.sort { $0.score > $1.score || ($0.score == $1.score && $0.index < $1.index) }

        guard let textLeg = query.textLeg else {
            return meaning.prefix(limit).map { fused in
                var hit = hits[fused.index]
                hit.score = fused.score
                return hit
            }
        }
        let text = hits.indices.filter { hits[$0].textRank != nil }
            .sorted { hits[$0].textRank! < hits[$1].textRank! }
        // RankFusion ranks integer keys, and breaks exact ties by the smaller: each hit's key is
        // its place in the meaning ranking, then in the text leg's.
        var keys: [Int: Int64] = [:]
        var order: [Int] = []
        func key(_ index: Int) -> Int64 {
            if let key = keys[index] { return key }
            keys[index] = Int64(order.count)
            order.append(index)
            return Int64(order.count - 1)
        }
        let meaningKeys = meaning.prefix(depth).map { key($0.index) }
        let textKeys = text.map(key)
        let fused = RankFusion.reciprocalRank(
            [.init(ids: meaningKeys), .init(ids: textKeys, weight: textLeg.weight)], k: k)
        return fused.prefix(limit).map { fused in
            var hit = hits[order[Int(fused.id)]]
            hit.score = fused.score
            return hit
        }
    }
}
