import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("Text search")
struct TextSearchTests {
    static let texts = [
        "The quick brown fox jumps over the lazy dog",
        "A café on the corner sells croissants",
        "Dentist appointment on Tuesday at ten",
        "Groceries: oat milk, bread, coffee",
        "The lazy afternoon by the river",
        "Fox sightings near the river bank",
    ]

    func makeItems() async throws -> SearchCollection {
        let items = try await makeCollection(dimension: 2)
        var rng = SeededGenerator(seed: 31)
        try await items.insert(
            Self.texts.enumerated().map { i, text in
                VectorEntry(
                    id: .int(Int64(i + 1)), content: text, source: i % 2 == 0 ? "even" : "odd",
                    metadata: "{\"i\":\(i)}", vector: rng.unitVector(dimension: 2))
            })
        return items
    }

    @Test("FTS5 syntax: terms, phrases, AND/OR/NOT, prefix, ranked by BM25")
    func fts5Syntax() async throws {
        let items = try await makeItems()
        #expect(Set(try await items.search(Query().matching("fox")).map(\.id)) == [1, 6])
        #expect(try await items.search(Query().matching("\"lazy dog\"")).map(\.id) == [1])
        #expect(try await items.search(Query().matching("\"dog lazy\"")).isEmpty)
        #expect(try await items.search(Query().matching("lazy AND river")).map(\.id) == [5])
        #expect(try await items.search(Query().matching("lazy NOT river")).map(\.id) == [1])
        #expect(
            Set(try await items.search(Query().matching("dentist OR groceries")).map(\.id)) == [
                3, 4,
            ])
        #expect(try await items.search(Query().matching("crois*")).map(\.id) == [2])
        let hits = try await items.search(Query().matching("river OR fox"))
        // Row 6 has both words, so BM25 puts it first.
        #expect(hits.first?.id == 6)
        #expect(hits.map(\.textRank) == Array(1...hits.count).map { Optional($0) })
        #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.score >= $1.score })
        #expect(hits.allSatisfy { $0.bm25! < 0 && $0.score == -$0.bm25! && $0.distance == nil })
    }

    @Test("diacritics are folded on both sides by the default tokenizer")
    func diacritics() async throws {
        let items = try await makeItems()
        #expect(try await items.search(Query().matching("cafe")).map(\.id) == [2])
        #expect(try await items.search(Query().matching(.typed("CAFÉ"))).map(\.id) == [2])
    }

    @Test(
        "malformed FTS5 syntax throws invalidTextQuery with a reason",
        arguments: ["\"unbalanced", "fox AND", "(fox", "nocolumn:fox", "fox NOT", "*"])
    func malformed(_ query: String) async throws {
        let items = try await makeItems()
        let error = await #expect(throws: TroveError.self) {
            try await items.search(Query().matching(.fts5(query)))
        }
        guard case .invalidTextQuery(let q, let reason)? = error else {
            Issue.record("expected invalidTextQuery for \(query), got \(String(describing: error))")
            return
        }
        #expect(q == query)
        #expect(!reason.isEmpty)
    }

    @Test("typed text never fails on syntax, over hostile and random strings")
    func typedNeverFails() async throws {
        let items = try await makeItems()
        var hostile = [
            "\"", "(", ")", "AND", "OR NOT", "NEAR(fox river, 2)", "fox*", "^fox", "content:fox",
            "nocolumn:fox",
            "{content}: fox", "'; DROP TABLE items; --", "", "   ", "\u{0}", "🦊 fox", "fox\"river",
            "a\"\"b", "-fox",
            "+", "*fox*",
        ]
        var rng = SeededGenerator(seed: 32)
        let alphabet = Array("ab fox\"()*:^-+{}[]NEARORAND'\\;é数据库 \t\n")
        for _ in 0..<200 {
            hostile.append(
                String(
                    (0..<Int.random(in: 0...20, using: &rng)).map { _ in
                        alphabet.randomElement(using: &rng)!
                    }))
        }
        for text in hostile {
            _ = try await items.search(Query().matching(.typed(text)))
        }
        #expect(
            Set(try await items.search(Query().matching(.typed("fox (river)?"))).map(\.id)) == [
                1, 5, 6,
            ])
        #expect(try await items.search(Query().matching(.typed("?!"))).isEmpty)
    }

    @Test("filters apply before ranking: source and SQL fragment")
    func filters() async throws {
        let items = try await makeItems()
        #expect(
            try await items.search(Query(.source("odd")).matching(.fts5("river OR fox"))).map(\.id)
                == [6])
        #expect(
            try await items.search(
                Query(.sql("json_extract(metadata, '$.i') < ?", [3])).matching(
                    .fts5("river OR fox"))
            ).map(\.id) == [1])
        #expect(
            try await items.search(
                Query(.sql("content LIKE ?", ["%river%"])).matching(.fts5("the")).limit(1)
            ).map(\.id)
                == [5])
        let error = await #expect(throws: TroveError.self) {
            try await items.search(Query(.sql("nope = 1", [])).matching(.fts5("fox")))
        }
        if case .invalidFilter? = error {
        } else {
            Issue.record("expected invalidFilter, got \(String(describing: error))")
        }
    }

    @Test("snippets mark the matched words")
    func snippets() async throws {
        let items = try await makeItems()
        let hit = try await items.search(
            Query().matching(.typed("dentist")).snippets(SnippetStyle(open: "<b>", close: "</b>")))[
                0]
        #expect(hit.snippet?.contains("<b>Dentist</b>") == true)
        #expect(try await items.search(Query().matching("dentist"))[0].snippet == nil)
    }

    @Test("lexical search off: text and hybrid throw lexicalSearchDisabled, vectors still work")
    func disabled() async throws {
        let items = try await makeCollection(dimension: 2, lexicalSearch: false)
        try await items.insert(VectorEntry(id: 1, content: "fox", vector: [1, 0]))
        await #expect(throws: TroveError.lexicalSearchDisabled(collection: "items")) {
            try await items.search(Query().matching("fox"))
        }
        await #expect(throws: TroveError.lexicalSearchDisabled(collection: "items")) {
            try await items.search(Query().nearest(to: [1, 0], in: "embedding").matching("fox"))
        }
        #expect(try await items.search(vector: [1, 0]).count == 1)
    }
}
