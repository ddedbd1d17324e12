import Testing

@testable import TroveText

@Suite("RankFusion")
struct FusionTests {
    @Test("weighted RRF against a hand-computed example")
    func weightedRRF() {
        let fused = RankFusion.reciprocalRank(
            [.init(ids: [3, 1, 2]), .init(ids: [1, 4], weight: 0.5)], k: 60)
        // 1: 1/62 + 0.5/61; 3: 1/61; 2: 1/63; 4: 0.5/62
        #expect(fused.map(\.id) == [1, 3, 2, 4])
        #expect(abs(fused[0].score - (1.0 / 62 + 0.5 / 61)) < 1e-15)
        #expect(abs(fused[1].score - 1.0 / 61) < 1e-15)
        #expect(abs(fused[2].score - 1.0 / 63) < 1e-15)
        #expect(abs(fused[3].score - 0.5 / 62) < 1e-15)
        #expect(fused.map(\.ranks) == [[2, 1], [1, nil], [3, nil], [nil, 2]])
    }

    @Test("k flattens the top: with k = 1 rank 1 is worth twice rank 2's share")
    func smallK() {
        let fused = RankFusion.reciprocalRank([.init(ids: [1, 2]), .init(ids: [3])], k: 1)
        // 1: 1/2, 3: 1/2, 2: 1/3 — 1 and 3 tie on score and best rank, smaller id first.
        #expect(fused.map(\.id) == [1, 3, 2])
        #expect(fused[0].score == 0.5 && fused[1].score == 0.5)
    }

    @Test("ties break by best rank, then id; repeated ids count once; zero weight mutes a leg")
    func ties() {
        let symmetric = RankFusion.reciprocalRank([.init(ids: [2, 1]), .init(ids: [1, 2])])
        #expect(symmetric.map(\.id) == [1, 2])
        let repeated = RankFusion.reciprocalRank([.init(ids: [5, 5, 6])])
        #expect(repeated.map(\.id) == [5, 6])
        #expect(repeated[1].ranks == [3])
        let muted = RankFusion.reciprocalRank([.init(ids: [1, 2]), .init(ids: [2, 1], weight: 0)])
        #expect(muted.map(\.id) == [1, 2])
        #expect(muted[0].score == 1.0 / 61)
    }

    @Test("the lexical gate keeps hits covering at least 2/3 of the clauses")
    func gate() {
        let hits = [
            BM25Hit(id: 1, score: 9, matchedClauses: 1, clauseCount: 3),
            BM25Hit(id: 2, score: 8, matchedClauses: 2, clauseCount: 3),
            BM25Hit(id: 3, score: 7, matchedClauses: 3, clauseCount: 3),
            BM25Hit(id: 4, score: 6, matchedClauses: 1, clauseCount: 2),
            BM25Hit(id: 5, score: 5, matchedClauses: 1, clauseCount: 1),
        ]
        #expect(RankFusion.confidentLexicalHits(hits).map(\.id) == [2, 3, 5])
        #expect(RankFusion.confidentLexicalHits(hits, minimumCoverage: 1).map(\.id) == [3, 5])
        #expect(
            RankFusion.confidentLexicalHits(hits, minimumCoverage: 0).map(\.id) == [1, 2, 3, 4, 5])
    }

    @Test("gated fusion: a one-word lexical match of a long query does not outvote the vector leg")
    func gatedFusion() {
        // Vector leg: 7 then 8. Lexical leg: 9 shares one of three words (rank 1), 8 covers all.
        let lexical = [
            BM25Hit(id: 9, score: 5, matchedClauses: 1, clauseCount: 3),
            BM25Hit(id: 8, score: 4, matchedClauses: 3, clauseCount: 3),
        ]
        let plain = RankFusion.reciprocalRank([.init(ids: [7, 8]), .init(ids: lexical.map(\.id))])
        #expect(plain.map(\.id) == [8, 7, 9])
        let gated = RankFusion.reciprocalRank([
            .init(ids: [7, 8]), .init(ids: RankFusion.confidentLexicalHits(lexical).map(\.id)),
        ])
        // 8: 1/62 + 1/61 (it is the gated leg's first), 7: 1/61; 9 gets no vote.
        #expect(gated.map(\.id) == [8, 7])
        #expect(gated[0].ranks == [2, 1])
    }

    // Relevance 0.9, 0.85, 0.5; similarity(1,2) = 0.95, (1,3) = 0.1, (2,3) = 0.2.
    // λ = 0.5: pick 1 (0.45); then 2: 0.425 − 0.475 = −0.05, 3: 0.25 − 0.05 = 0.2 → 3; then 2.
    // λ = 0.8: then 2: 0.68 − 0.19 = 0.49, 3: 0.4 − 0.02 = 0.38 → 2; then 3.
    @Test(
        "MMR against a hand-computed example",
        arguments: [
            (0.5, [Int64(1), 3, 2]), (0.8, [1, 2, 3]), (1.0, [1, 2, 3]), (0.0, [1, 3, 2]),
        ])
    func mmr(example: (Double, [Int64])) {
        let candidates: [(id: Int64, relevance: Double)] = [(1, 0.9), (2, 0.85), (3, 0.5)]
        let similarities: [Set<Int64>: Double] = [[1, 2]: 0.95, [1, 3]: 0.1, [2, 3]: 0.2]
        let order = RankFusion.maximalMarginalRelevance(candidates, count: 3, lambda: example.0) {
            a, b in
            similarities[[a, b]] ?? 1
        }
        #expect(order == example.1)
        let firstTwo = RankFusion.maximalMarginalRelevance(candidates, count: 2, lambda: example.0)
        { a, b in
            similarities[[a, b]] ?? 1
        }
        #expect(firstTwo == Array(example.1.prefix(2)))
    }
}
