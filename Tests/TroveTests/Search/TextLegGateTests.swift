import Foundation
import Testing
import TroveTestSupport
import TroveText

@testable import Trove

/// One text leg, one semantics (issue 42): in a fused query a typed text hit votes only when it
/// holds 2/3 of the query's words, whether the in-memory BM25 leg answers or FTS5 does
/// (weighted fields, a subset of the fields, reads inside a write transaction).
@Suite("Text leg coverage gate on every path")
struct TextLegGateTests {
    static let words = [
        "river", "stone", "cloud", "paper", "garden", "window", "engine", "ticket", "lamp", "orbit",
    ]

    static func schema(_ fullText: FullTextDefinition) -> DocumentSchema {
        DocumentSchema(
            fields: [.text("title"), .text("body"), .vector("v", dimension: 2)], fullText: fullText)
    }

    /// The same seeded rows in three collections: plain full text over title and body
    /// (answered in memory), weighted (FTS5 only), and over the title alone (in memory).
    static func seeded(at path: String) async throws -> Database {
        let db = try Database(path: path)
        let plain = try await db.documents(
            "plain", schema: schema(FullTextDefinition(fields: ["title", "body"])))
        let weighted = try await db.documents(
            "weighted", schema: schema(FullTextDefinition(["title": 2, "body": 1])))
        let titles = try await db.documents(
            "titles", schema: schema(FullTextDefinition(fields: ["title"])))
        var rng = SeededGenerator(seed: 42)
        func text(_ n: Int) -> String {
            (0..<n).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
        }
        let documents = (1...Int64(240)).map { id in
            let angle = Float.random(in: 0..<(2 * .pi), using: &rng)
            return Document(
                id: .int(id),
                [
                    "title": .string(text(Int.random(in: 1...3, using: &rng))),
                    "body": .string(text(Int.random(in: 0...6, using: &rng))),
                    "v": .vector([cos(angle), sin(angle)]),
                ])
        }
        for collection in [plain, weighted, titles] { try await collection.insert(documents) }
        return db
    }

    /// Seeded fused queries of two or three words: a vector and typed text, every text match in
    /// reach (k 1,000) so the hits differ only by the gate.
    static func queries(_ count: Int) -> [(text: String, vector: [Float])] {
        var rng = SeededGenerator(seed: 7)
        return (0..<count).map { _ in
            let n = Int.random(in: 2...3, using: &rng)
            let angle = Float.random(in: 0..<(2 * .pi), using: &rng)
            return (
                (0..<n).map { _ in words.randomElement(using: &rng)! }.joined(separator: " "),
                [cos(angle), sin(angle)]
            )
        }
    }

    static func fused(_ query: (text: String, vector: [Float]), in fields: [String]? = nil) -> Query
    {
        Query().nearest(to: query.vector, in: "v", k: 1_000).matching(
            .typed(query.text), in: fields, k: 1_000
        ).limit(
            1_000)
    }

    /// (id, text rank) of each hit, in order.
    static func summary(_ hits: [Hit<Document>]) -> [String] {
        hits.map { "\($0.record.id):\($0.textRank.map(String.init) ?? "-")" }
    }

    /// The ids whose text hit voted.
    static func voters(_ hits: [Hit<Document>]) -> Set<DocumentID> {
        Set(hits.filter { $0.textRank != nil }.map(\.record.id))
    }

    @Test("in memory and FTS5 (inside a write transaction) give the same hits in the same order")
    func inMemoryAgainstTransaction() async throws {
        let dir = try TemporaryDirectory()
        let db = try await Self.seeded(at: dir.path("g.trove"))
        let plain = try await db.documents(
            "plain", schema: Self.schema(FullTextDefinition(fields: ["title", "body"])))
        #expect(
            try await plain.explain(Self.fused(Self.queries(1)[0])).contains {
                $0.contains("in-memory BM25")
            })
        var gated = 0
        for query in Self.queries(40) {
            let memory = try await plain.search(Self.fused(query))
            let inTransaction = try await db.write { tx in
                try tx.documents("plain").search(Self.fused(query))
            }
            #expect(Self.summary(inTransaction) == Self.summary(memory), "query '\(query.text)'")
            // The gate did something: some row holding a word of the query did not vote.
            let ungated = try await plain.search(Query().matching(.typed(query.text)).limit(1_000))
            if ungated.count > Self.voters(memory).count { gated += 1 }
        }
        #expect(gated > 20)
    }

    @Test(
        "weighted fields: the same rows vote as with plain fields, inside and outside a transaction"
    )
    func weightedVotersAgree() async throws {
        let dir = try TemporaryDirectory()
        let db = try await Self.seeded(at: dir.path("w.trove"))
        let plain = try await db.documents(
            "plain", schema: Self.schema(FullTextDefinition(fields: ["title", "body"])))
        let weighted = try await db.documents(
            "weighted", schema: Self.schema(FullTextDefinition(["title": 2, "body": 1])))
        #expect(
            try await weighted.explain(Self.fused(Self.queries(1)[0])).contains {
                $0.contains("FTS5 MATCH")
            })
        for query in Self.queries(40) {
            let expected = Self.voters(try await plain.search(Self.fused(query)))
            let outside = try await weighted.search(Self.fused(query))
            #expect(Self.voters(outside) == expected, "query '\(query.text)'")
            let inside = try await db.write { tx in
                try tx.documents("weighted").search(Self.fused(query))
            }
            #expect(Self.summary(inside) == Self.summary(outside), "query '\(query.text)'")
        }
    }

    @Test("a leg over a subset of the fields votes as a collection indexing only those fields")
    func fieldSubsetVotersAgree() async throws {
        let dir = try TemporaryDirectory()
        let db = try await Self.seeded(at: dir.path("s.trove"))
        let plain = try await db.documents(
            "plain", schema: Self.schema(FullTextDefinition(fields: ["title", "body"])))
        let titles = try await db.documents(
            "titles", schema: Self.schema(FullTextDefinition(fields: ["title"])))
        #expect(
            try await plain.explain(Self.fused(Self.queries(1)[0], in: ["title"])).contains {
                $0.contains("FTS5 MATCH")
            })
        for query in Self.queries(40) {
            let expected = Self.voters(try await titles.search(Self.fused(query)))
            #expect(
                Self.voters(try await plain.search(Self.fused(query, in: ["title"]))) == expected,
                "query '\(query.text)'")
        }
    }

    @Test(
        "a weighted collection no longer lets a row holding one of two words outrank rows holding both"
    )
    func weightedExample() async throws {
        let db = try Database()
        let notes = try await db.documents(
            "notes", schema: Self.schema(FullTextDefinition(["title": 2, "body": 1])))
        try await notes.insert([
            Document(
                id: .int(1), ["title": "river river river", "body": "", "v": .vector([0, 1])]),
            Document(
                id: .int(2), ["title": "notes", "body": "river stone", "v": .vector([1, 0])]),
        ])
        let hits = try await notes.search(
            Query().nearest(to: [0.7, 0.7], in: "v").matching(.typed("river stone")))
        #expect(hits.first?.record.id == .int(2))
        #expect(hits.first { $0.record.id == .int(1) }?.textRank == nil)
    }
}
