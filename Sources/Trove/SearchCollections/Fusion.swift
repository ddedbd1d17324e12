/// Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).
///
/// A row's fused score is the sum over legs of `weight / (k + rank)`, with 1-based ranks; rows
/// missing from a leg get nothing from it. `k = 60` is the paper's value: it damps the difference
/// between the first few ranks so that one leg's top hit cannot outvote agreement between legs.
///
/// ```swift
/// let fusion = Fusion(k: 60, vectorWeight: 1, textWeight: 0.5)
/// try await notes.searchHybrid(text: "dentist", vector: q, fusion: fusion)
/// ```
public struct Fusion: Hashable, Sendable {
    /// RRF's `k` (must be >= 0).
    public var k: Double
    /// Weight of the vector leg (>= 0).
    public var vectorWeight: Double
    /// Weight of the text leg (>= 0).
    public var textWeight: Double
    /// How many hits each leg contributes, as a multiple of topK (at least 1; default 4),
    /// and never fewer than ``minimumDepth``.
    public var depthMultiplier: Int
    /// The least number of hits each leg contributes (default 50).
    public var minimumDepth: Int
    /// For typed text: a text hit votes only when it matches at least this fraction of the
    /// query's words (after stop words), 0 ... 1. Default 2/3 (Documentation/PARAMETERS.md,
    /// "Fusion"); 0 gives plain RRF. Raw FTS5 queries always vote.
    public var minimumTextCoverage: Double
    /// Maximal marginal relevance (Carbonell & Goldstein 1998) over the fused top candidates:
    /// λ in 0 ... 1 trades relevance (cosine to the query) against similarity to the results
    /// already picked (cosine between rows). `nil` (default) keeps the fused order.
    public var mmrLambda: Double?
    /// "No good match": drop fused results whose vector score (cosine similarity for `.cosine`,
    /// −distance otherwise) to the query is below this value. `nil` (default) keeps everything.
    public var minimumVectorScore: Double?

    /// Fusion settings; the defaults are the paper's k = 60 with equal weights.
    public init(
        k: Double = 60, vectorWeight: Double = 1, textWeight: Double = 1, depthMultiplier: Int = 4,
        minimumDepth: Int = 50, minimumTextCoverage: Double = 2.0 / 3.0, mmrLambda: Double? = nil,
        minimumVectorScore: Double? = nil
    ) {
        self.mmrLambda = mmrLambda
        self.minimumVectorScore = minimumVectorScore
        self.minimumTextCoverage = minimumTextCoverage
        self.k = k
        self.vectorWeight = vectorWeight
        self.textWeight = textWeight
        self.depthMultiplier = depthMultiplier
        self.minimumDepth = minimumDepth
    }

    func validate() throws {
        guard k >= 0, k.isFinite else { throw TroveError.invalidConfiguration("RRF k must be >= 0, got \(k)") }
        guard vectorWeight >= 0, textWeight >= 0, vectorWeight.isFinite, textWeight.isFinite else {
            throw TroveError.invalidConfiguration("fusion weights must be finite and >= 0")
        }
        guard (0...1).contains(minimumTextCoverage) else {
            throw TroveError.invalidConfiguration("fusion minimumTextCoverage must be in 0...1, got \(minimumTextCoverage)")
        }
        if let mmrLambda, !(0...1).contains(mmrLambda) {
            throw TroveError.invalidConfiguration("fusion mmrLambda must be in 0...1, got \(mmrLambda)")
        }
        if let minimumVectorScore, !minimumVectorScore.isFinite {
            throw TroveError.invalidConfiguration("fusion minimumVectorScore must be finite")
        }
        guard depthMultiplier >= 1, minimumDepth >= 1 else {
            throw TroveError.invalidConfiguration("fusion depthMultiplier and minimumDepth must be >= 1")
        }
    }

    /// Depth of each leg for a final topK.
    func depth(topK: Int, maximum: Int) -> Int {
        min(maximum, max(minimumDepth, topK.multipliedReportingOverflow(by: depthMultiplier).partialValue))
    }

    /// One fused row: id, fused score, and its 1-based rank in each leg.
    struct Fused: Hashable {
        var id: Int64
        var score: Double
        var vectorRank: Int?
        var textRank: Int?
    }

    /// Fuses two ranked id lists (best first). Ties break by smaller id so results are stable.
    ///
    /// - Complexity: O((v + t) log(v + t)).
    func fuse(vector: [Int64], text: [Int64]) -> [Fused] {
        var byID: [Int64: Fused] = [:]
        byID.reserveCapacity(vector.count + text.count)
        for (offset, id) in vector.enumerated() where byID[id]?.vectorRank == nil {
            let rank = offset + 1
            byID[id, default: Fused(id: id, score: 0)].vectorRank = rank
            byID[id]!.score += vectorWeight / (k + Double(rank))
        }
        for (offset, id) in text.enumerated() where byID[id]?.textRank == nil {
            let rank = offset + 1
            byID[id, default: Fused(id: id, score: 0)].textRank = rank
            byID[id]!.score += textWeight / (k + Double(rank))
        }
        return byID.values.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
    }
}
