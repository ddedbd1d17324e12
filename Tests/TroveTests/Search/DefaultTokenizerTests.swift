import Foundation
import Testing
import TroveTestSupport
import TroveText

@testable import Trove

/// New text indexes find CJK words by default, English ranks as before, and files created with an
/// earlier default keep their tokenizer.
@Suite("Default tokenizer of new text indexes")
struct DefaultTokenizerTests {
    /// The default of full-text indexes before bigrams (written out: it is what older files hold).
    static let previousDefault = "unicode61 remove_diacritics 2"
    static let cjkTexts = ["城市规划与交通", "数据库管理系统", "東京で寿司を食べた", "The city of Tokyo", "ไปกินข้าวกัน"]
    static let cjkQueries: [(String, Int64)] = [
        ("城市", 1), ("数据库", 2), ("東京", 3), ("寿司", 3), ("tokyo", 4), ("กินข้าว", 5),
    ]

    @Test(
        "a document collection's default full-text index finds 城市, 数据库 and 東京 (typed and FTS5 queries)"
    )
    func documentsFindCJK() async throws {
        let database = try Database()
        let notes = try await database.documents(
            "notes",
            schema: DocumentSchema(
                fields: [.text("body")], fullText: FullTextDefinition(fields: ["body"])))
        #expect(notes.schema.fullText?.tokenizer == FullTextDefinition.defaultTokenizer)
        try await notes.insert(
            Self.cjkTexts.enumerated().map {
                Document(id: .int(Int64($0.offset + 1)), ["body": .string($0.element)])
            })
        for (word, id) in Self.cjkQueries {
            let typed = try await notes.search(Query().matching(.typed(word)))
            #expect(typed.map(\.record.id) == [.int(id)], "typed \(word)")
            let phrase = try await notes.search(Query().matching(.fts5("\"\(word)\"")))
            #expect(phrase.map(\.record.id) == [.int(id)], "fts5 \(word)")
        }
    }

    @Test(
        "a search collection finds CJK words with the tokenizer for them; its default stays SQLite's unicode61"
    )
    func searchCollectionsFindCJK() async throws {
        let database = try Database()
        #expect(
            try await SearchCollection("plain", in: database, dimension: 2).configuration.tokenizer
                == "unicode61 remove_diacritics 2")
        let cjk = try await SearchCollection(
            "cjk", in: database, dimension: 2, tokenizer: FullTextDefinition.defaultTokenizer)
        try await cjk.insert(
            Self.cjkTexts.enumerated().map {
                VectorEntry(
                    id: .int(Int64($0.offset + 1)), content: $0.element,
                    vector: [1, Float($0.offset)])
            })
        for (word, id) in Self.cjkQueries {
            #expect(
                try await cjk.search(Query().matching(.typed(word))).map(\.id) == [.int(id)],
                "typed \(word)")
            #expect(
                try await cjk.search(Query().matching(.fts5("\"\(word)\""))).map(\.id) == [
                    .int(id)
                ], "fts5 \(word)")
        }
    }

    // MARK: English costs nothing

    /// A seeded English corpus: stems, accents, hyphens, numbers, repeated words (so BM25 varies).
    static func englishCorpus(count: Int) -> [String] {
        let words = [
            "router", "routers", "reset", "resetting", "button", "café", "naïve", "groceries",
            "grocery",
            "milk", "oat", "coffee", "e-mail", "v2.0", "3.14", "the", "a", "of", "light", "blinks",
            "warranty", "years", "update", "updating", "updated", "Résumé", "ÉCOLE", "snake_case",
            "don't", "it's", "running", "runs", "ran", "generalization", "relational", "København",
        ]
        var generator = SeededGenerator(seed: 2024)
        return (0..<count).map { _ in
            (0..<Int.random(in: 3...18, using: &generator)).map { _ in
                words.randomElement(using: &generator)!
            }
            .joined(separator: Bool.random(using: &generator) ? " " : ", ")
        }
    }

    static let englishQueries: [TextQuery] = [
        .typed("router reset"), .typed("groceries"), .typed("grocery milk"), .typed("cafe"),
        .typed("Café naive"),
        .typed("running updated"), .typed("resume ecole"), .typed("e-mail v2.0"), .typed("don't"),
        .typed("københavn"),
        .fts5("router*"), .fts5("\"oat milk\""), .fts5("reset NOT button"),
        .fts5("light OR warranty"),
        .fts5("NEAR(router reset, 3)"), .fts5("upd*"), .fts5("cafe AND years"), .fts5("\"3 14\""),
    ]

    @Test(
        "English: the new defaults give the same hits in the same order with the same BM25 as the ones they replace",
        arguments: [
            (DefaultTokenizerTests.previousDefault, FullTextDefinition.defaultTokenizer),
            (
                TokenizerConfiguration.english.fts5TokenizeArgument,
                TokenizerConfiguration.multilingual.fts5TokenizeArgument
            ),
        ])
    func englishUnchanged(previous: String, current: String) async throws {
        let database = try Database()
        let corpus = Self.englishCorpus(count: 400)
        var results: [[[Hit<Document>]]] = []
        for (name, tokenizer) in [("before", previous), ("after", current)] {
            let docs = try await database.documents(
                name,
                schema: DocumentSchema(
                    fields: [.text("body")],
                    fullText: FullTextDefinition(fields: ["body"], tokenizer: tokenizer)))
            try await docs.insert(
                corpus.enumerated().map {
                    Document(id: .int(Int64($0.offset + 1)), ["body": .string($0.element)])
                })
            results.append(
                try await Self.englishQueries.asyncMap {
                    try await docs.search(Query().matching($0).limit(50))
                })
        }
        for (query, (before, after)) in zip(Self.englishQueries, zip(results[0], results[1])) {
            #expect(!before.isEmpty, "\(query) finds something")
            #expect(before.map(\.record.id) == after.map(\.record.id), "\(query)")
            for (a, b) in zip(before, after) {
                #expect(
                    abs((a.bm25 ?? 0) - (b.bm25 ?? 0)) < 1e-9, "\(query): BM25 of \(a.record.id)")
            }
        }
    }

    // MARK: Files created with an earlier default

    @Test(
        "a document collection created with the previous default reopens with it (default requested, nothing rebuilt)"
    )
    func oldDocumentCollectionKeepsTokenizer() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("old.trove")
        do {
            let database = try Database(path: path)
            let notes = try await database.documents(
                "notes",
                schema: DocumentSchema(
                    fields: [.text("body")],
                    fullText: FullTextDefinition(fields: ["body"], tokenizer: Self.previousDefault))
            )
            try await notes.insert([
                Document(id: 1, ["body": "router reset"]), Document(id: 2, ["body": "東京で寿司"]),
            ])
        }
        let database = try Database(path: path)
        let notes = try await database.documents(
            "notes",
            schema: DocumentSchema(
                fields: [.text("body")], fullText: FullTextDefinition(fields: ["body"])))
        #expect(notes.schema.fullText?.tokenizer == Self.previousDefault)
        let sql = try await database.query(
            "SELECT sql FROM sqlite_master WHERE name = 'notes_fts'", bindings: [])
        #expect(sql.first?.string(at: 0)?.contains(Self.previousDefault) == true)
        #expect(
            try await notes.search(Query().matching(.typed("reset"))).map(\.record.id) == [
                .int(1)
            ])
        // unicode61 keeps the CJK run whole: 東京 alone is not one of its terms.
        #expect(try await notes.search(Query().matching(.typed("東京"))).isEmpty)
        // Another tokenizer is still refused.
        await #expect(throws: TroveError.self) {
            _ = try await database.documents(
                "notes",
                schema: DocumentSchema(
                    fields: [.text("body")],
                    fullText: FullTextDefinition(fields: ["body"], tokenizer: "porter unicode61")))
        }
    }

    @Test("a search collection created with the previous default reopens with it")
    func oldSearchCollectionKeepsTokenizer() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("old.trove")
        do {
            let database = try Database(path: path)
            let notes = try await SearchCollection(
                "notes", in: database, dimension: 2, tokenizer: Self.previousDefault)
            try await notes.insert([VectorEntry(id: 1, content: "router reset", vector: [1, 0])])
        }
        let database = try Database(path: path)
        let notes = try await SearchCollection("notes", in: database, dimension: 2)
        #expect(notes.configuration.tokenizer == Self.previousDefault)
        #expect(try await notes.search(Query().matching(.typed("reset"))).map(\.id) == [1])
        // The open collection answers the same way.
        #expect(
            try await SearchCollection("notes", in: database, dimension: 2).configuration.tokenizer
                == Self.previousDefault)
    }

    @Test(
        "the format-2 fixture opens with its stored tokenizer when the default is requested, and searches as before"
    )
    func fixtureKeepsTokenizer() async throws {
        let dir = try TemporaryDirectory()
        let copy = dir.path("format2.trove")
        try FileManager.default.copyItem(
            atPath: TestPaths.fixtures.appendingPathComponent("format2.trove").path, toPath: copy)
        let database = try Database(path: copy)
        let notes = try await SearchCollection("notes", in: database, dimension: 4)
        #expect(notes.configuration.tokenizer == Self.previousDefault)
        #expect(try await notes.search(Query().matching(.typed("plumber"))).map(\.id) == [1])
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
