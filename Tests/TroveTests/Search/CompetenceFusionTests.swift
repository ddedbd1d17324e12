import Foundation
import Testing
import Trove
import TroveTestSupport

/// ``CompetenceFusion``: the mean z-score of the vector legs competent for each hit, then RRF with
/// the text leg. The differential test against the CLI's former fusion, on seeded notes in a
/// collection with a vector field per model, is TroveCLITests' `MultiModelSearchTests`.
@Suite("CompetenceFusion")
struct CompetenceFusionTests {
    /// Two legs' similarities by record: an English-only model and a multilingual one.
    static let legs: [[(id: Int, similarity: Double)]] = [
        [(1, 0.60), (2, 0.40), (3, 0.30)],
        [(3, 0.88), (2, 0.86), (4, 0.80)],
    ]

    /// The hits a query with these legs returns (in no particular order), with text ranks.
    static func hits(textRanks: [Int: Int] = [:]) -> [Hit<Int>] {
        (1...5).compactMap { id -> Hit<Int>? in
            var ranks: [Int?] = []
            var distances: [Double?] = []
            for leg in legs {
                let rank = leg.firstIndex { $0.id == id }
                ranks.append(rank.map { $0 + 1 })
                distances.append(rank.map { 1 - leg[$0].similarity })
            }
            guard ranks.contains(where: { $0 != nil }) || textRanks[id] != nil else { return nil }
            return Hit(
                record: id, score: 0, vectorRanks: ranks, distances: distances,
                textRank: textRanks[id])
        }.reversed()
    }

    static let query = Query().nearest(to: [1, 0], in: "a").nearest(to: [1, 0], in: "b")

    /// The mean z of the competent legs, computed here from the definition.
    static func expected(competent: (Int, Int) -> Bool) -> [Int] {
        var z: [[Int: Double]] = []
        for leg in legs {
            let values = leg.map(\.similarity)
            let mean = values.reduce(0, +) / Double(values.count)
            let deviation =
                (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count))
                .squareRoot()
            z.append(
                Dictionary(
                    uniqueKeysWithValues: leg.map { ($0.id, ($0.similarity - mean) / deviation) }))
        }
        let ids = Set(legs.flatMap { $0.map(\.id) })
        let scores = ids.map { id -> (Int, Double) in
            var voters = legs.indices.filter { competent($0, id) }
            if voters.isEmpty { voters = Array(legs.indices) }
            let total = voters.map { z[$0][id] ?? z[$0].values.min()! }.reduce(0, +)
            return (id, total / Double(voters.count))
        }
        return scores.sorted { $0.1 > $1.1 }.map(\.0)
    }

    @Test("every leg competent: the order of the mean (and sum) of z-scores")
    func allCompetent() {
        let fusion = CompetenceFusion(limit: 10)
        let ranked = fusion.rerank(Self.hits(), of: Self.query) { _, _ in true }
        #expect(ranked.map(\.record) == Self.expected { _, _ in true })
        #expect(ranked.map(\.record) == [2, 1, 3, 4])
        // The hits keep how each leg saw them.
        #expect(ranked[0].vectorRanks == [2, 2] && ranked[3].vectorRanks == [nil, 3])
    }

    @Test("a leg that is not competent for a record has no say about it; none competent, all speak")
    func incompetentLegSilent() {
        let fusion = CompetenceFusion()
        let rule: (Int, Int) -> Bool = { leg, id in !(leg == 0 && id == 3) }
        let ranked = fusion.rerank(Self.hits(), of: Self.query, competent: rule)
        #expect(ranked.map(\.record) == Self.expected(competent: rule))
        #expect(ranked.first?.record == 3)
        let none = fusion.rerank(Self.hits(), of: Self.query) { _, _ in false }
        #expect(none.map(\.record) == [2, 1, 3, 4])
        // A leg kept out for the whole query: the other decides alone.
        let deaf = fusion.rerank(Self.hits(), of: Self.query) { leg, _ in leg == 1 }
        #expect(deaf.map(\.record) == [3, 2, 4, 1])
    }

    @Test("weights: the mean is weighted by the legs' weights; a weight of 0 silences a leg")
    func weights() {
        let fusion = CompetenceFusion()
        let heavy = Query().nearest(to: [1, 0], in: "a", weight: 3).nearest(to: [1, 0], in: "b")
        #expect(fusion.rerank(Self.hits(), of: heavy) { _, _ in true }.first?.record == 1)
        let silent = Query().nearest(to: [1, 0], in: "a", weight: 0).nearest(to: [1, 0], in: "b")
        #expect(
            fusion.rerank(Self.hits(), of: silent) { _, _ in true }.map(\.record) == [3, 2, 4, 1])
    }

    @Test("with a text leg: RRF of the meaning ranking and the text ranks, k and weight")
    func withTextLeg() {
        let fusion = CompetenceFusion(limit: 3, k: 10)
        let query = Self.query.matching(.typed("words"), weight: 2)
        // 5 only in the text leg; 4 first there.
        let ranked = fusion.rerank(Self.hits(textRanks: [4: 1, 5: 2]), of: query) { _, _ in true }
        // Meaning: 2, 1, 3, 4 (ranks 1...4); text: 4, 5.
        let scores: [Int: Double] = [
            2: 1.0 / 11, 1: 1.0 / 12, 3: 1.0 / 13, 4: 1.0 / 14 + 2.0 / 11, 5: 2.0 / 12,
        ]
        let order = scores.sorted { $0.value > $1.value }.map(\.key)
        #expect(ranked.map(\.record) == Array(order.prefix(3)))
        for hit in ranked { #expect(abs(hit.score - scores[hit.record]!) < 1e-15) }
    }

    @Test(
        "query(_:) sends every leg depth deep and returns all their hits; refuses what has no meaning here"
    )
    func preparedQuery() throws {
        let fusion = CompetenceFusion(limit: 20)
        #expect(fusion.depth == 80)
        #expect(CompetenceFusion(limit: 3).depth == 50)
        let query = try fusion.query(Self.query.matching(.typed("words")))
        #expect(query.vectorLegs.map(\.k) == [80, 80] && query.textLeg?.k == 80)
        #expect(query.limit == 240)
        #expect(throws: TroveError.self) { try fusion.query(Query().matching(.typed("words"))) }
        #expect(throws: TroveError.self) { try fusion.query(Self.query.offset(5)) }
        #expect(throws: TroveError.self) { try fusion.query(Self.query.diversified(lambda: 0.5)) }
        #expect(throws: TroveError.self) { try CompetenceFusion(limit: 0).query(Self.query) }
        #expect(throws: TroveError.self) { try CompetenceFusion(k: 0).query(Self.query) }
    }

    @Test("one collection, a vector field per model: a search re-ranked end to end")
    func endToEnd() async throws {
        let database = try Database()
        let notes = try await database.documents(
            "notes",
            schema: DocumentSchema(
                fields: [
                    .text("body"), .text("language"), .vector("english", dimension: 2),
                    .vector("multilingual", dimension: 2),
                ],
                fullText: FullTextDefinition(fields: ["body"])))
        try await notes.insert([
            Document(
                id: 1,
                [
                    "body": "dentist on tuesday", "language": "en", "english": .vector([1, 0]),
                    "multilingual": .vector([0.9, 0.1]),
                ]),
            Document(
                id: 2,
                [
                    "body": "dentista el martes", "language": "es", "english": .vector([1, 0.01]),
                    "multilingual": .vector([0.1, 0.9]),
                ]),
            Document(
                id: 3,
                [
                    "body": "buy milk", "language": "en", "english": .vector([0.5, 0.5]),
                    "multilingual": .vector([0.7, 0.3]),
                ]),
        ])
        let fusion = CompetenceFusion(limit: 2)
        let query = try fusion.query(
            Query().nearest(to: [1, 0], in: "english").nearest(to: [1, 0], in: "multilingual")
                .matching(.typed("dentist")))
        let hits = try await notes.search(query)
        // The English-only model's near match for the Spanish note is not trusted.
        let ranked = fusion.rerank(hits, of: query) { leg, document in
            leg == 1 || document["language"] == "en"
        }
        #expect(ranked.map(\.record.id) == [1, 3])
        let trusting = fusion.rerank(hits, of: query) { _, _ in true }
        #expect(trusting.map(\.record.id) == [1, 2])
        #expect(ranked[0].textRank == 1 && ranked[0].vectorRanks == [1, 1])
    }
}
