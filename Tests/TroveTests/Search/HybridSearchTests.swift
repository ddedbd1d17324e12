import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Hybrid search and fusion")
struct HybridSearchTests {
    /// Rows whose vector rank and text rank are known by construction.
    func makeItems() async throws -> SearchCollection {
        let items = try await makeCollection(dimension: 2, metric: .l2)
        // Vector distance to [0, 0] grows with id; "apple" appears more often in higher ids.
        try await items.insert(
            (1...6).map { i in
                VectorEntry(
                    id: .int(Int64(i)),
                    content: String(repeating: "apple ", count: i) + "filler text here",
                    source: i <= 3 ? "low" : "high", vector: [Float(i), 0])
            })
        return items
    }

    @Test("each hit has the fused RRF score and its rank in each leg")
    func ranksAndScores() async throws {
        let items = try await makeItems()
        let hits = try await items.search(
            Query().nearest(to: [0, 0], in: "embedding").matching("apple").limit(6))
        #expect(hits.count == 6)
        let vectorOrder = try await items.search(vector: [0, 0], limit: 6).map(\.id)
        let textOrder = try await items.search(Query().matching("apple").limit(6)).map(\.id)
        #expect(vectorOrder == [1, 2, 3, 4, 5, 6])
        for hit in hits {
            let v = vectorOrder.firstIndex(of: hit.id)! + 1
            let t = textOrder.firstIndex(of: hit.id)! + 1
            #expect(hit.vectorRank == v)
            #expect(hit.textRank == t)
            #expect(abs(hit.score - (1.0 / (60 + Double(v)) + 1.0 / (60 + Double(t)))) < 1e-12)
            #expect(hit.distance != nil && hit.bm25 != nil)
        }
        #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.score >= $1.score })
    }

    @Test("rows found by only one leg have nil for the other; weights and k change the fusion")
    func oneLegAndWeights() async throws {
        let items = try await makeItems()
        try await items.insert(VectorEntry(id: 7, content: "banana", vector: [0.5, 0]))
        let hits = try await items.search(
            Query().nearest(to: [0, 0], in: "embedding").matching("banana").limit(7).fused(
                .reciprocalRank(k: 10)))
        let banana = hits.first { $0.id == 7 }!
        #expect(banana.vectorRank == 1)
        #expect(banana.textRank == 1)
        #expect(abs(banana.score - 2.0 / 11) < 1e-12)
        let others = hits.filter { $0.id != 7 }
        #expect(others.allSatisfy { $0.textRank == nil && $0.bm25 == nil && $0.vectorRank != nil })
        let textOnly = try await items.search(
            Query().nearest(to: [0, 0], in: "embedding", weight: 0).matching("apple").limit(3))
        #expect(
            textOnly.map(\.id)
                == (try await items.search(Query().matching("apple").limit(3)).map(\.id)))
        let vectorOnly = try await items.search(
            Query().nearest(to: [0, 0], in: "embedding").matching("apple", weight: 0).limit(3))
        #expect(vectorOnly.map(\.id) == [7, 1, 2])
        await #expect(throws: TroveError.self) {
            try await items.search(
                Query().nearest(to: [0, 0], in: "embedding").matching("apple").fused(
                    .reciprocalRank(k: -1)))
        }
    }

    @Test("filters apply to both legs; typed text and snippets")
    func filtersAndTyped() async throws {
        let items = try await makeItems()
        let hits = try await items.search(
            Query(.source("high")).nearest(to: [0, 0], in: "embedding").matching(.typed("apple?"))
                .limit(10).snippets(
                    SnippetStyle()))
        #expect(Set(hits.map(\.id)) == [4, 5, 6])
        #expect(hits.allSatisfy { $0.snippet?.contains("[apple]") == true })
        let empty = try await items.search(
            Query().nearest(to: [0, 0], in: "embedding").matching(.typed("!!")).limit(2))
        #expect(empty.map(\.id) == [1, 2])
        #expect(empty.allSatisfy { $0.textRank == nil })
        await #expect(throws: TroveError.self) {
            try await items.search(Query().nearest(to: [0, 0], in: "embedding").matching("\"open"))
        }
        await #expect(throws: TroveError.dimensionMismatch(expected: 2, actual: 1)) {
            try await items.search(Query().nearest(to: [0], in: "embedding").matching("apple"))
        }
    }
}

@Suite("Fusion")
struct FusionTests {
    @Test("reciprocal rank fusion against hand-computed values")
    func handComputed() async throws {
        // Each leg 4 deep. Vector leg: 10, 20, 30, 40. Text leg: 30, 40.
        // 10: 1/61; 20: 1/62; 30: 1/63 + 1/61; 40: 1/64 + 1/62.
        let items = try await makeCollection(dimension: 1, metric: .l2)
        try await items.insert([
            VectorEntry(id: 10, content: "x", vector: [0]),
            VectorEntry(id: 20, content: "y", vector: [1]),
            VectorEntry(id: 30, content: "zz zz zz", vector: [2]),
            VectorEntry(id: 40, content: "zz filler", vector: [100]),
        ])
        let hits = try await items.search(
            Query().nearest(to: [0], in: "embedding", k: 4).matching("zz", k: 4).limit(4))
        #expect(hits.map(\.id) == [30, 40, 10, 20])
        let expected = [1.0 / 63 + 1.0 / 61, 1.0 / 64 + 1.0 / 62, 1.0 / 61, 1.0 / 62]
        for (hit, score) in zip(hits, expected) { #expect(abs(hit.score - score) < 1e-12) }
        #expect(hits.map(\.vectorRank) == [3, 4, 1, 2])
        #expect(hits.map(\.textRank) == [1, 2, nil, nil])
        // Legs 3 deep. Vector: 10, 20, 30. Text "zz OR filler": 40, 30.
        // 30: 1/63 + 1/62; 10: 1/61; 40: 1/61 (tie with 10: smaller id first); 20: 1/62.
        let shallow = try await items.search(
            Query().nearest(to: [0], in: "embedding", k: 3).matching("zz OR filler", k: 3).limit(3))
        #expect(shallow.map(\.id) == [30, 10, 40])
        #expect(shallow[2].vectorRank == nil)
        #expect(shallow[2].textRank == 1)
        #expect(abs(shallow[2].score - 1.0 / 61) < 1e-12)
    }
}
