import Foundation
import Testing
import Trove
import TroveTestSupport
import TroveVectors

/// The ranked query's options that every collection has (issue 24, "one pipeline"): the
/// exact/approximate switch with efSearch, each leg's depth, snippets, text coverage and the
/// minimum score, on document collections.
@Suite("Query options")
struct QueryOptionsTests {
    static let words = [
        "river", "stone", "cloud", "paper", "garden", "window", "engine", "ticket", "lamp", "orbit",
    ]

    /// `count` documents with an HNSW field (deliberately weak: m 4, efSearch 4, so approximate
    /// and exact answers differ) and a flat one over the same vectors.
    static func seeded(_ count: Int, seed: UInt64) async throws -> (DocumentCollection, [Document])
    {
        let db = try Database()
        let schema = DocumentSchema(
            fields: [
                .text("body"), .vector("graph", dimension: 16), .vector("scan", dimension: 16),
            ],
            fullText: FullTextDefinition(["body": 1]),
            vectorIndexes: ["graph": .hnsw(m: 4, efConstruction: 8, efSearch: 4)])
        let docs = try await db.documents("docs", schema: schema)
        var rng = SeededGenerator(seed: seed)
        let documents = (1...Int64(count)).map { id -> Document in
            let v = rng.unitVector(dimension: 16)
            return Document(
                id: .int(id),
                [
                    "body": .string(
                        (0..<6).map { _ in words.randomElement(using: &rng)! }.joined(
                            separator: " ")),
                    "graph": .vector(v), "scan": .vector(v),
                ])
        }
        try await docs.insert(documents)
        return (docs, documents)
    }

    @Test("exact() on an HNSW field returns the flat field's answer; efSearch reaches it too")
    func exactSwitch() async throws {
        let (docs, _) = try await Self.seeded(2_000, seed: 1)
        var rng = SeededGenerator(seed: 2)
        var approximateMisses = 0
        for _ in 0..<20 {
            let q = rng.unitVector(dimension: 16)
            let truth = try await docs.search(Query().nearest(to: q, in: "scan").limit(10)).map(
                \.record.id)
            let exact = try await docs.search(Query().nearest(to: q, in: "graph").exact().limit(10))
                .map(\.record.id)
            #expect(exact == truth)
            let approximate = try await docs.search(Query().nearest(to: q, in: "graph").limit(10))
                .map(\.record.id)
            approximateMisses += 10 - Set(approximate).intersection(truth).count
            let wide = try await docs.search(
                Query().nearest(to: q, in: "graph").efSearch(2_000).limit(10)
            ).map(
                \.record.id)
            #expect(Set(wide).intersection(truth).count >= 9)
        }
        // The weak graph does miss neighbours, so the two switches above were really tested.
        #expect(approximateMisses > 0)
        await #expect(throws: TroveError.self) {
            _ = try await docs.search(
                Query().nearest(to: [Float](repeating: 0.1, count: 16), in: "graph").efSearch(0))
        }
    }

    @Test("a leg's k sets its depth: a shallow text leg cannot lift documents beyond it")
    func legDepth() async throws {
        let (docs, _) = try await Self.seeded(300, seed: 3)
        let q = [Float](repeating: 0.25, count: 16)
        let shallow = try await docs.search(
            Query().nearest(to: q, in: "scan", k: 5).matching(.typed("river stone"), k: 3).limit(20)
        )
        // At most 5 vector and 3 text hits can take part.
        #expect(shallow.count <= 8)
        #expect(shallow.allSatisfy { ($0.vectorRanks[0] ?? 0) <= 5 && ($0.textRank ?? 0) <= 3 })
        let deep = try await docs.search(
            Query().nearest(to: q, in: "scan").matching(.typed("river stone")).limit(20))
        #expect(deep.count == 20)
        await #expect(throws: TroveError.self) {
            _ = try await docs.search(Query().nearest(to: q, in: "scan", k: 0))
        }
    }

    @Test("snippets mark the text leg's words; a query without a text leg cannot ask for them")
    func snippets() async throws {
        let (docs, _) = try await Self.seeded(200, seed: 4)
        let hits = try await docs.search(
            Query().matching(.typed("garden")).snippets(SnippetStyle(open: "<", close: ">")).limit(
                5))
        #expect(!hits.isEmpty)
        for hit in hits { #expect(hit.snippet?.contains("<garden>") == true) }
        let plain = try await docs.search(Query().matching(.typed("garden")).limit(5))
        #expect(plain.allSatisfy { $0.snippet == nil })
        await #expect(throws: TroveError.self) {
            _ = try await docs.search(
                Query().nearest(to: [Float](repeating: 0.25, count: 16), in: "scan").snippets())
        }
    }

    @Test(
        "in fused queries a typed text hit votes only when it covers 2/3 of the words; 0 is plain fusion"
    )
    func coverage() async throws {
        let db = try Database()
        let docs = try await db.documents(
            "c",
            schema: DocumentSchema(
                fields: [.text("body"), .vector("v", dimension: 2)],
                fullText: FullTextDefinition(["body": 1])))
        try await docs.insert([
            Document(id: .int(1), ["body": "alpha beta gamma", "v": .vector([1, 0])]),
            Document(id: .int(2), ["body": "alpha only here", "v": .vector([0, 1])]),
            Document(id: .int(3), ["body": "nothing relevant", "v": .vector([0.9, 0.1])]),
        ])
        let gated = try await docs.search(
            Query().nearest(to: [1, 0], in: "v").matching(.typed("alpha beta gamma")).limit(3))
        #expect(gated.first { $0.record.id == .int(2) }?.textRank == nil)
        #expect(gated.first { $0.record.id == .int(1) }?.textRank == 1)
        let plain = try await docs.search(
            Query().nearest(to: [1, 0], in: "v").matching(
                .typed("alpha beta gamma"), minimumCoverage: 0
            ).limit(3))
        #expect(plain.first { $0.record.id == .int(2) }?.textRank != nil)
        // A text leg alone is not gated: every match ranks.
        let alone = try await docs.search(Query().matching(.typed("alpha beta gamma")).limit(3))
        #expect(Set(alone.map(\.record.id)) == [.int(1), .int(2)])
    }

    @Test("minimumScore drops hits less similar than the threshold, in any leg combination")
    func minimumScore() async throws {
        let (docs, documents) = try await Self.seeded(300, seed: 5)
        var rng = SeededGenerator(seed: 6)
        let q = rng.unitVector(dimension: 16)
        let similarity: [DocumentID: Double] = Dictionary(
            uniqueKeysWithValues: documents.map { d in
                (
                    d.id,
                    Double(
                        DistanceMetric.cosine.score(
                            distance: DistanceMetric.cosine.distance(q, d["scan"]!.vectorValue!)))
                )
            })
        let threshold = 0.3
        let hybrid = try await docs.search(
            Query().nearest(to: q, in: "scan").matching(.typed("river lamp")).minimumScore(
                threshold
            ).limit(50))
        #expect(!hybrid.isEmpty)
        #expect(hybrid.allSatisfy { similarity[$0.record.id]! >= threshold })
        let expected = documents.filter { similarity[$0.id]! >= threshold }.count
        let vectorOnly = try await docs.search(
            Query().nearest(to: q, in: "scan").minimumScore(threshold).limit(300))
        #expect(vectorOnly.count == expected)
        await #expect(throws: TroveError.self) {
            _ = try await docs.search(Query().matching(.typed("river")).minimumScore(0.5))
        }
    }
}
