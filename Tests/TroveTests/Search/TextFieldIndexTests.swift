import Foundation
import Testing
import TroveSQLite
import TroveTestSupport
import TroveText

@testable import Trove

/// The in-memory BM25 leg of document collections against FTS5's own `bm25()` ranking.
@Suite("In-memory text leg of document collections")
struct TextFieldIndexTests {
    static let schema = DocumentSchema(
        fields: [.text("title"), .text("body", optional: true), .integer("year", indexed: true)],
        fullText: FullTextDefinition(fields: ["title", "body"]))

    static let words = [
        "river", "stone", "cloud", "paper", "garden", "window", "engine", "ticket", "lamp", "orbit",
        "rivers", "gardening", "the", "and",
    ]

    static func seeded(_ count: Int, seed: UInt64, at path: String) async throws -> (
        Database, DocumentCollection
    ) {
        let db = try Database(path: path)
        let docs = try await db.documents("docs", schema: schema)
        var rng = SeededGenerator(seed: seed)
        func text(_ n: Int) -> String {
            (0..<n).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
        }
        let documents = (1...Int64(count)).map { id in
            Document(
                id: .int(id),
                [
                    "title": .string(text(Int.random(in: 1...3, using: &rng))),
                    // Some rows have no body, some an empty one: FTS5 counts them all.
                    "body": id % 7 == 0
                        ? .null : .string(text(Int.random(in: 0...12, using: &rng))),
                    "year": .int(Int64.random(in: 2000...2020, using: &rng)),
                ])
        }
        try await docs.insert(documents)
        return (db, docs)
    }

    /// FTS5's ranking of a typed query, straight from SQL: (row id, bm25) for every match.
    static func fts5(_ db: Database, _ text: String, where condition: String? = nil) async throws
        -> [Int64: Double]
    {
        guard
            let expression = TypedQuery(
                text,
                tokenizer: Tokenizer(
                    TokenizerConfiguration(
                        fts5TokenizeArgument: CollectionConfiguration.defaultTokenizer)!)
            ).fts5Expression
        else { return [:] }
        let filter = condition.map { " AND rowid IN (SELECT id FROM docs WHERE \($0))" } ?? ""
        let rows = try await db.query(
            "SELECT rowid, bm25(docs_fts) FROM docs_fts WHERE docs_fts MATCH ?\(filter)",
            bindings: [.text(expression)])
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.int64(at: 0)!, $0.double(at: 1)!) })
    }

    static func hits(_ docs: DocumentCollection, _ query: Query) async throws -> [Int64: Double] {
        let hits = try await docs.search(query)
        return Dictionary(uniqueKeysWithValues: hits.map { (Self.rid($0.record.id), $0.bm25!) })
    }

    static func rid(_ id: DocumentID) -> Int64 {
        if case .int(let v) = id { return v }
        Issue.record("not an integer id: \(id)")
        return -1
    }

    static func expectEqual(_ got: [Int64: Double], _ expected: [Int64: Double], _ comment: Comment)
    {
        #expect(Set(got.keys) == Set(expected.keys), comment)
        for (id, score) in expected {
            if let mine = got[id] {
                #expect(abs(mine - score) <= 1e-9 * max(1, abs(score)), comment)
            }
        }
    }

    @Test("typed queries rank as FTS5's bm25 does, over two fields, with and without a filter")
    func differential() async throws {
        let dir = try TemporaryDirectory()
        let (db, docs) = try await Self.seeded(300, seed: 41, at: dir.path("t.trove"))
        var rng = SeededGenerator(seed: 7)
        var nonEmpty = 0
        for round in 0..<60 {
            let n = Int.random(in: 1...3, using: &rng)
            var text = (0..<n).map { _ in Self.words.randomElement(using: &rng)! }.joined(
                separator: " ")
            if round % 5 == 0 { text = "\"\(text)\"" }  // a phrase
            let expected = try await Self.fts5(db, text)
            let got = try await Self.hits(docs, Query().matching(.typed(text)).limit(1_000))
            Self.expectEqual(got, expected, "query \(text)")
            let year = Int64.random(in: 2000...2020, using: &rng)
            let filtered = try await Self.hits(
                docs, Query(Field("year") >= .int(year)).matching(.typed(text)).limit(1_000))
            Self.expectEqual(
                filtered, try await Self.fts5(db, text, where: "year >= \(year)"),
                "query \(text), year >= \(year)")
            if !expected.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 40)
        // The best k are the best k of the full ranking (ties aside).
        let all = try await docs.search(Query().matching(.typed("river garden")).limit(1_000)).map {
            $0.bm25!
        }
        let top = try await docs.search(Query().matching(.typed("river garden")).limit(5)).map {
            $0.bm25!
        }
        #expect(top == Array(all.prefix(5)))
        #expect(
            try await docs.explain(Query().matching(.typed("river"))).contains {
                $0.contains("in-memory BM25")
            })
    }

    @Test("a phrase never matches across two fields, as in FTS5")
    func phraseStaysInField() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("p.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        try await docs.insert([
            Document(id: .int(1), ["title": "paper lamp", "body": "river stone", "year": 2001]),
            Document(id: .int(2), ["title": "stone", "body": "lamp river", "year": 2002]),
        ])
        let across = try await Self.hits(docs, Query().matching(.typed("\"lamp river\"")).limit(10))
        #expect(Set(across.keys) == [2])
        Self.expectEqual(across, try await Self.fts5(db, "\"lamp river\""), "phrase")
    }

    @Test(
        "raw SQL edits, deletes, other connections and rolled-back transactions reach the leg correctly"
    )
    func followsTheTable() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("f.trove")
        let (db, docs) = try await Self.seeded(50, seed: 3, at: path)
        // builds the leg
        #expect(try await Self.hits(docs, Query().matching(.typed("quokka"))).isEmpty)
        _ = try await db.execute("UPDATE docs SET body = 'a quokka by the river' WHERE id = 9")
        #expect(Set(try await Self.hits(docs, Query().matching(.typed("quokka"))).keys) == [9])
        // Another connection writes.
        let other = try Connection(path: path)
        try other.registerTroveTokenizer()  // the default text index uses Trove's FTS5 tokenizer
        try other.execute("UPDATE docs SET title = 'quokka quokka' WHERE id = 10")
        try other.execute("DELETE FROM docs WHERE id = 9")
        let afterOther = try await Self.hits(docs, Query().matching(.typed("quokka")).limit(10))
        Self.expectEqual(afterOther, try await Self.fts5(db, "quokka"), "after another connection")
        #expect(Set(afterOther.keys) == [10])
        // A transaction that throws changes nothing, in memory either.
        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await db.write { tx in
                let d = try tx.documents("docs")
                try d.insert(Document(id: .int(500), ["title": "quokka", "year": 2010]))
                #expect(
                    Set(
                        try d.search(Query().matching(.typed("quokka")).limit(10)).map {
                            Self.rid($0.record.id)
                        })
                        == [10, 500])
                throw Abort()
            }
        }
        #expect(
            Set(try await Self.hits(docs, Query().matching(.typed("quokka")).limit(10)).keys) == [
                10
            ])
        #expect(try await db.verify().isHealthy)
    }

    @Test("weighted fields, field subsets and raw FTS5 syntax go to FTS5")
    func fts5Fallbacks() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("w.trove"))
        let weighted = try await db.documents(
            "weighted",
            schema: DocumentSchema(
                fields: [.text("title"), .text("body")],
                fullText: FullTextDefinition(["title": 2, "body": 1])))
        try await weighted.insert([Document(id: .int(1), ["title": "river", "body": "stone"])])
        #expect(
            try await weighted.explain(Query().matching(.typed("river"))).contains {
                $0.contains("FTS5 MATCH")
            })
        #expect(
            try await weighted.search(Query().matching(.typed("river"))).map(\.record.id) == [
                .int(1)
            ])
        let (_, docs) = try await Self.seeded(40, seed: 9, at: dir.path("s.trove"))
        #expect(
            try await docs.explain(Query().matching(.typed("river"), in: ["title"])).contains {
                $0.contains("FTS5 MATCH")
            })
        #expect(
            try await docs.explain(Query().matching(.fts5("river NOT stone"))).contains {
                $0.contains("FTS5 MATCH")
            })
        #expect(
            try await docs.explain(Query().matching(.typed("river"), in: ["body", "title"]))
                .contains {
                    $0.contains("in-memory BM25")
                })
    }

    @Test(
        "indexes built at different moments stay in step: text first, writes, then vectors, then text again"
    )
    func lazyLoadingKeepsOneState() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("l.trove"))
        let docs = try await db.documents(
            "docs",
            schema: DocumentSchema(
                fields: [.text("title"), .vector("v", dimension: 2, metric: .l2)],
                fullText: FullTextDefinition(fields: ["title"])))
        try await docs.insert(
            (1...20).map {
                Document(
                    id: .int(Int64($0)),
                    ["title": .string("lamp \($0)"), "v": .vector([Float($0), 0])])
            })
        // text leg only
        #expect(try await docs.search(Query().matching(.typed("lamp")).limit(50)).count == 20)
        // v = (100, 100)
        _ = try await db.execute(
            "UPDATE docs SET title = 'orbit', v = x'0000c8420000c842' WHERE id = 3")
        _ = try await db.execute("DELETE FROM docs WHERE id = 4")
        // The vector index is built now, from the newer snapshot; the text leg replays the log.
        let near = try await docs.search(Query().nearest(to: [100, 100], in: "v").limit(1))
        #expect(near.map(\.record.id) == [.int(3)])
        let lamps = try await docs.search(Query().matching(.typed("lamp")).limit(50)).map {
            Self.rid($0.record.id)
        }
        #expect(Set(lamps) == Set((1...20).filter { $0 != 3 && $0 != 4 }.map(Int64.init)))
        _ = try await db.execute("UPDATE docs SET title = 'lamp again' WHERE id = 3")
        let hybrid = try await docs.search(
            Query().nearest(to: [100, 100], in: "v").matching(.typed("again")).limit(1))
        #expect(hybrid.first?.record.id == .int(3))
        #expect(hybrid.first?.textRank == 1)
        #expect(try await db.verify().isHealthy)
    }
}
