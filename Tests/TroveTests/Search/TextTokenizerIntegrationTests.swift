import Foundation
import Testing
import TroveSQLite
import TroveTestSupport
import TroveText

@testable import Trove

/// The text-search work in the store: Trove's tokenizer inside FTS5, the in-memory BM25 leg that
/// follows the change log, typed queries, phrases, snippets and the gated hybrid.
@Suite("Text search: tokenizers, fast leg, gated fusion")
struct TextTokenizerIntegrationTests {
    static let samples = [
        "The quick brown fox jumps over the lazy dog",
        "Groceries: oat milk, bread, coffee — café crème",
        "Naïve résumé writing for Ångström-level ÉCOLES", "数据库管理系统 and MySQL数据库", "東京で寿司を食べた",
        "カタカナのテスト", "한국어 데이터베이스 관리", "Ein Straßenbahn-Fahrplan für Zürich", "Ελληνικά ΣΟΦΊΑ σοφίας",
        "Русский текст: ёжик в тумане", "hyphen-ated snake_case e-mail 3.14 v2.0",
        "generalizations relational conditional",
        "", "   ", "😀 emoji 🎉 only", "tab\tand\nnewlines",
    ]

    /// Terms per row as FTS5 indexed them (fts5vocab 'instance', in offset order).
    func fts5Terms(_ connection: Connection, tokenize: String, texts: [String]) throws -> [[String]]
    {
        try connection.execute(script: "DROP TABLE IF EXISTS v; DROP TABLE IF EXISTS t;")
        try connection.execute(
            script: "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='\(tokenize)')")
        try connection.execute(script: "CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        for (row, text) in texts.enumerated() {
            try connection.execute(
                "INSERT INTO t(rowid, x) VALUES (?, ?)", [.integer(Int64(row + 1)), .text(text)])
        }
        var terms = [[String]](repeating: [], count: texts.count)
        for row in try connection.query("SELECT doc, term FROM v ORDER BY doc, offset") {
            terms[Int(row.int64(at: 0) ?? 0) - 1].append(row.string(at: 1) ?? "")
        }
        return terms
    }

    @Test(
        "Swift tokenizers equal FTS5's term for term (built-in porter unicode61, and Trove's cjk inside FTS5)"
    )
    func parityWithFTS5() throws {
        let connection = try Connection(.inMemory)
        try connection.registerTroveTokenizer()
        var generator = SeededGenerator(seed: 12)
        let letters = Array("abcdefghijklmnopqrstuvwxyzéèüöñç")
        let randomWords = (0..<300).map { _ in
            String(
                (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                    letters.randomElement(using: &generator)!
                })
        }
        let texts =
            Self.samples
            + stride(from: 0, to: randomWords.count, by: 10).map {
                randomWords[$0..<$0 + 10].joined(separator: " ")
            }
        for configuration in [TokenizerConfiguration.english, .unicode, .cjk] {
            let expected = try fts5Terms(
                connection, tokenize: configuration.fts5TokenizeArgument, texts: texts)
            let tokenizer = Tokenizer(configuration)
            for (text, terms) in zip(texts, expected) {
                #expect(tokenizer.terms(in: text) == terms, "\(configuration): \(text)")
            }
        }
    }

    func cjkCollection() async throws -> (Database, Trove.SearchCollection) {
        let database = try Database()
        let docs = try await SearchCollection(
            "docs", in: database, dimension: 2,
            tokenizer: TokenizerConfiguration.cjk.fts5TokenizeArgument)
        let texts = [
            "数据库管理系统", "東京で寿司を食べた", "한국어 데이터베이스 관리", "京都の寺",
            "The quick brown fox jumps over the lazy dog",
            "over jumps fox the brown quick", "Fresh groceries at the café",
        ]
        try await docs.insert(
            texts.enumerated().map {
                VectorEntry(
                    id: .int(Int64($0.offset + 1)), content: $0.element,
                    vector: [1, Float($0.offset)])
            })
        return (database, docs)
    }

    @Test("CJK collection: 数据库 finds 数据库管理, 東京 finds 東京で寿司, through both text engines")
    func cjkSearch() async throws {
        let (_, docs) = try await cjkCollection()
        for (query, expected) in [
            ("数据库", Int64(1)), ("東京", 2), ("데이터", 3), ("寿司", 2), ("grocery", 7), ("cafe", 7),
        ] {
            // in-memory BM25 leg
            let typed = try await docs.search(Query().matching(.typed(query)))
            #expect(typed.map(\.id.integer) == [expected], "typed \(query)")
            // FTS5 with Trove's tokenizer
            let phrase = try await docs.search(Query().matching(.fts5("\"\(query)\"")))
            #expect(phrase.map(\.id.integer) == [expected], "fts5 phrase \(query)")
            // The same OR-query through FTS5 ranks with the same BM25 score.
            let expression = TypedQuery(query, tokenizer: Tokenizer(.cjk)).fts5Expression ?? ""
            let raw = try await docs.search(Query().matching(.fts5(expression)))
            #expect(raw.map(\.id.integer) == [expected], "fts5 \(expression)")
            #expect(
                abs((typed.first?.bm25 ?? 0) - (raw.first?.bm25 ?? 1)) < 1e-9, "same BM25 \(query)")
        }
        #expect(try await docs.search(Query().matching(.typed("京都"))).map(\.id) == [4])
    }

    @Test("phrases match in order only, in the fast leg and in FTS5")
    func phraseOrder() async throws {
        let (_, docs) = try await cjkCollection()
        #expect(
            try await docs.search(Query().matching(.typed("\"fox jumps over\""))).map(\.id) == [5])
        #expect(
            try await docs.search(Query().matching(.typed("\"over jumps fox\""))).map(\.id) == [6])
        #expect(try await docs.search(Query().matching(.typed("\"dog lazy\""))).isEmpty)
        #expect(
            try await docs.search(Query().matching(.fts5("\"fox jumps over\""))).map(\.id) == [5])
        #expect(
            try await docs.search(Query().matching(.fts5("\"over jumps fox\""))).map(\.id) == [6])
    }

    @Test(
        "snippets highlight the matched words, CJK included (byte offsets from the Swift tokenizer)"
    )
    func snippets() async throws {
        let (_, docs) = try await cjkCollection()
        let fox = try await docs.search(
            Query().matching(.typed("the lazy dog")).snippets(SnippetStyle(words: 20)))
        #expect(fox.first?.snippet == "The quick brown fox jumps over the [lazy] [dog]")
        let cjk = try await docs.search(Query().matching(.typed("寿司")).snippets(SnippetStyle()))
        #expect(cjk.first?.snippet == "東京で[寿司]を食べた")
    }

    @Test("the fast leg follows raw SQL inserts, content updates and deletes on the next query")
    func followsChangeLog() async throws {
        let (database, docs) = try await cjkCollection()
        #expect(try await docs.search(Query().matching(.typed("walrus"))).isEmpty)
        _ = try await database.execute(
            "INSERT INTO docs(id, content) VALUES (100, 'A walrus on the beach')")
        #expect(try await docs.search(Query().matching(.typed("walrus"))).map(\.id) == [100])
        _ = try await database.execute(
            "UPDATE docs SET content = 'A seal on the beach' WHERE id = 100")
        #expect(try await docs.search(Query().matching(.typed("walrus"))).isEmpty)
        #expect(try await docs.search(Query().matching(.typed("seal"))).map(\.id) == [100])
        _ = try await database.execute("DELETE FROM docs WHERE id = 100")
        #expect(try await docs.search(Query().matching(.typed("seal"))).isEmpty)
        #expect(try await docs.search(Query().matching(.typed("beach"))).isEmpty)
    }

    @Test("typed queries never fail, whatever is typed, in both legs and in snippets")
    func hostileTypedQueries() async throws {
        let (_, docs) = try await cjkCollection()
        var generator = SeededGenerator(seed: 3)
        let pieces = [
            "\"", "(", ")", "*", "^", ":", "-", "+", "NEAR", "AND", "OR", "NOT", "content:", "x:",
            " ",
            "\u{0}", "\u{1}", "😀", "数据", "fox", "the", "{", "}", ",", "'", "\\",
        ]
        for _ in 0..<150 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            _ = try await docs.search(Query().matching(.typed(text)).snippets(SnippetStyle()))
            _ = try await docs.search(
                Query().nearest(to: [1, 0], in: "embedding").matching(.typed(text)).limit(3)
                    .snippets(SnippetStyle()))
        }
    }

    @Test("gated hybrid: a text hit matching one of three words does not vote; full matches do")
    func gatedHybrid() async throws {
        let database = try Database()
        let notes = try await SearchCollection(
            "notes", in: database, dimension: 2,
            tokenizer: TokenizerConfiguration.english.fts5TokenizeArgument)
        try await notes.insert([
            VectorEntry(id: 1, content: "The blue car is parked outside", vector: [0, 1]),
            VectorEntry(
                id: 2, content: "Whale migration: the blue whale travels far", vector: [0.6, 0.8]),
            VectorEntry(
                id: 3, content: "Ocean giants and where they travel each season", vector: [1, 0]),
        ])
        let query = TextQuery.typed("blue whale migration")
        let plain = try await notes.search(
            Query().nearest(to: [1, 0], in: "embedding").matching(query, minimumCoverage: 0).limit(
                3))
        let gated = try await notes.search(
            Query().nearest(to: [1, 0], in: "embedding").matching(query).limit(3))
        #expect(plain.first { $0.id == 1 }?.textRank == 2)
        #expect(gated.first { $0.id == 1 }?.textRank == nil)
        #expect(gated.first { $0.id == 2 }?.textRank == 1)
        // The gate changes the fused order: row 1's lone-word vote is gone.
        #expect(gated.map(\.id) == [2, 3, 1])
        #expect(plain.map(\.id) == [2, 1, 3])
        await #expect(throws: TroveError.self) {
            try await notes.search(
                Query().nearest(to: [1, 0], in: "embedding").matching(query, minimumCoverage: 1.5))
        }
    }

    @Test(
        "the no-good-match threshold drops rows far from the query; MMR moves a near-duplicate down"
    )
    func thresholdAndMMR() async throws {
        let database = try Database()
        let notes = try await SearchCollection("notes", in: database, dimension: 2)
        try await notes.insert([
            VectorEntry(id: 1, content: "shopping list one", vector: [1, 0]),
            VectorEntry(id: 2, content: "shopping list one copy", vector: [0.99, 0.141]),
            VectorEntry(id: 3, content: "garden plan", vector: [0.6, 0.8]),
            VectorEntry(id: 4, content: "tax forms", vector: [-1, 0]),
        ])
        let query: [Float] = [1, 0.02]
        let plain = try await notes.search(
            Query().nearest(to: query, in: "embedding").matching(.typed("zzz")).limit(4))
        #expect(plain.map(\.id) == [1, 2, 3, 4])
        let thresholded = try await notes.search(
            Query().nearest(to: query, in: "embedding").matching(.typed("zzz")).limit(4)
                .minimumScore(0.5))
        #expect(thresholded.map(\.id) == [1, 2, 3])
        // Cosines to the query: 0.9998, 0.9926, 0.6159, −0.9998. λ = 0.5: after row 1, row 2
        // (cosine 0.99 to row 1) scores 0.5·0.9926 − 0.5·0.99 ≈ 0.0013, row 3 scores
        // 0.5·0.6159 − 0.5·0.6 ≈ 0.008, row 4 0.5·(−0.9998) + 0.5·1 ≈ 0.0001: row 3 comes second.
        let diverse = try await notes.search(
            Query().nearest(to: query, in: "embedding").matching(.typed("zzz")).limit(3)
                .diversified(lambda: 0.5))
        #expect(diverse.map(\.id) == [1, 3, 2])
        let relevanceOnly = try await notes.search(
            Query().nearest(to: query, in: "embedding").matching(.typed("zzz")).limit(3)
                .diversified(lambda: 1))
        #expect(relevanceOnly.map(\.id) == [1, 2, 3])
        await #expect(throws: TroveError.self) {
            try await notes.search(
                Query().nearest(to: query, in: "embedding").matching(.typed("zzz")).diversified(
                    lambda: 2))
        }
    }
}
