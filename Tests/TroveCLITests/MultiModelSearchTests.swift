import Testing
import TroveText

@testable import TroveCLI

/// The meaning fusion of several vector legs.
@Suite("MultiModelSearch")
struct MultiModelSearchTests {
    let legs: [[(id: Int64, score: Double)]] = [
        [(1, 0.60), (2, 0.40), (3, 0.30)],  // an English-only model
        [(3, 0.88), (2, 0.86), (4, 0.80)],  // a multilingual one
    ]

    @Test("every leg competent: the order of the z-score sum")
    func allCompetent() {
        let fused = MultiModelSearch.competentZScores(legs) { _, _ in true }
        let sum = RankFusion.zScoreSum(legs.map { RankFusion.ScoredList(hits: $0) })
        #expect(fused.map(\.id) == sum.map(\.id))
    }

    @Test("a leg that is not competent for a note has no say about it")
    func incompetentLegSilent() {
        // Note 3 is in a language leg 0 cannot read: only leg 1 speaks for it, and it is leg 1's best.
        let fused = MultiModelSearch.competentZScores(legs) { leg, id in !(leg == 0 && id == 3) }
        #expect(fused.first?.id == 3)
        // With no leg competent, all of them speak.
        let none = MultiModelSearch.competentZScores(legs) { _, _ in false }
        #expect(
            none.map(\.id) == MultiModelSearch.competentZScores(legs) { _, _ in true }.map(\.id))
    }
}
