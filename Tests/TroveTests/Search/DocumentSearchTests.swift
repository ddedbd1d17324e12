import Foundation
import Testing
import TroveSQLite
import TroveTestSupport
import TroveVectors

@testable import Trove

@Suite("Document search and derived indexes")
struct DocumentSearchTests {
    static let schema = DocumentSchema(
        fields: [
            .text("title"), .text("body"), .integer("year", indexed: true),
            .vector("embedding", dimension: 8),
            .vector("other", dimension: 4, metric: .l2, optional: true),
        ],
        fullText: FullTextDefinition(["title": 3, "body": 1]))

    static let words = [
        "river", "stone", "cloud", "paper", "garden", "window", "engine", "ticket", "lamp", "orbit",
    ]

    static func seeded(_ count: Int, seed: UInt64, at path: String) async throws -> (
        Database, DocumentCollection, [Document]
    ) {
        let db = try Database(path: path)
        let docs = try await db.documents("docs", schema: schema)
        var rng = SeededGenerator(seed: seed)
        let documents = (1...Int64(count)).map { id in
            Document(
                id: .int(id),
                [
                    "title": .string(
                        (0..<2).map { _ in words.randomElement(using: &rng)! }.joined(
                            separator: " ")),
                    "body": .string(
                        (0..<8).map { _ in words.randomElement(using: &rng)! }.joined(
                            separator: " ")),
                    "year": .int(Int64.random(in: 2000...2020, using: &rng)),
                    "embedding": .vector(rng.unitVector(dimension: 8)),
                    "other": id % 3 == 0 ? .null : .vector(rng.vector(dimension: 4)),
                ])
        }
        try await docs.insert(documents)
        return (db, docs, documents)
    }

    static func exact(
        _ query: [Float], field: String, metric: DistanceMetric, k: Int, among documents: [Document]
    )
        -> [DocumentID]
    {
        documents.compactMap { d -> (DocumentID, Float)? in
            guard let v = d[field]?.vectorValue else { return nil }
            return (d.id, metric.distance(query, v))
        }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }.prefix(k).map(\.0)
    }

    @Test("filtered vector search on any vector field equals the exact scan over the matching rows")
    func filteredVector() async throws {
        let dir = try TemporaryDirectory()
        let (_, docs, documents) = try await Self.seeded(300, seed: 3, at: dir.path("s.trove"))
        var rng = SeededGenerator(seed: 9)
        for _ in 0..<10 {
            let q = rng.unitVector(dimension: 8)
            let filter = Field("year") >= 2015
            let hits = try await docs.search(
                Query(filter).nearest(to: q, in: "embedding").limit(12))
            let kept = documents.filter { ($0["year"]?.intValue ?? 0) >= 2015 }
            #expect(
                hits.map(\.record.id)
                    == Self.exact(q, field: "embedding", metric: .cosine, k: 12, among: kept))
            let q2 = rng.vector(dimension: 4)
            let hits2 = try await docs.search(Query().nearest(to: q2, in: "other").limit(5))
            #expect(
                hits2.map(\.record.id)
                    == Self.exact(q2, field: "other", metric: .l2, k: 5, among: documents))
        }
    }

    @Test("text leg with field weights, hybrid fusion and typed errors for bad legs")
    func textAndHybrid() async throws {
        let dir = try TemporaryDirectory()
        let (_, docs, documents) = try await Self.seeded(200, seed: 4, at: dir.path("s.trove"))
        let hits = try await docs.search(
            Query(Field("year") < 2010).matching(.typed("river stone")).limit(5))
        #expect(!hits.isEmpty)
        for hit in hits {
            let d = documents.first { $0.id == hit.record.id }!
            #expect((d["year"]?.intValue ?? 0) < 2010)
            let text = (d["title"]!.stringValue! + " " + d["body"]!.stringValue!)
            #expect(text.contains("river") || text.contains("stone"))
        }
        let titleOnly = try await docs.search(
            Query().matching(.typed("lamp"), in: ["title"]).limit(50))
        #expect(titleOnly.allSatisfy { $0.record["title"]!.stringValue!.contains("lamp") })
        let q = documents[7]["embedding"]!.vectorValue!
        for fusion in [FusionMethod.reciprocalRank(k: 60), .normalizedScores] {
            let both = try await docs.search(
                Query().nearest(to: q, in: "embedding").matching(.typed("orbit")).fused(fusion)
                    .limit(10))
            #expect(both.count == 10)
            #expect(both.contains { $0.vectorRanks.first! != nil })
            #expect(both.contains { $0.textRank != nil })
        }
        let diverse = try await docs.search(
            Query().nearest(to: q, in: "embedding").diversified(lambda: 0.5).limit(5))
        #expect(diverse.first?.record.id == documents[7].id)
        await #expect(throws: TroveError.notVectorField(field: "title", type: "text")) {
            try await docs.search(Query().nearest(to: q, in: "title"))
        }
        await #expect(throws: TroveError.dimensionMismatch(expected: 8, actual: 3)) {
            try await docs.search(Query().nearest(to: [1, 2, 3], in: "embedding"))
        }
        await #expect(
            throws: TroveError.notTextField(field: "year", fullTextFields: ["title", "body"])
        ) {
            try await docs.search(Query().matching(.typed("x"), in: ["year"]))
        }
        await #expect(throws: TroveError.self) {
            try await docs.search(Query().matching(.fts5("\"unclosed")))
        }
        let plan = try await docs.explain(
            Query(Field("year") == 2001).nearest(to: q, in: "embedding").matching(.typed("orbit")))
        #expect(
            plan.contains { $0.contains("vector leg embedding") }
                && plan.contains { $0.contains("fusion") })
        #expect(plan.contains { $0.contains("docs_i0") })
    }

    @Test(
        "raw SQL and another connection's writes reach the vector, text and B-tree indexes on the next query"
    )
    func rawWritesReachIndexes() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.trove")
        let (db, docs, documents) = try await Self.seeded(50, seed: 5, at: path)
        let q = documents[0]["embedding"]!.vectorValue!
        #expect(
            try await docs.search(Query().nearest(to: q, in: "embedding").limit(1)).first?.record
                .id == 1)
        // Another connection (as another process would) moves document 2's vector onto q,
        // retitles it, and deletes document 1.
        let other = try Connection(path: path)
        try other.registerTroveTokenizer()  // the default text index uses Trove's FTS5 tokenizer
        let blob = q.withUnsafeBytes { Array($0) }
        try other.execute(
            "UPDATE docs SET embedding = ?, title = 'zebra crossing', year = 1999 WHERE id = 2",
            [.blob(blob)])
        try other.execute("DELETE FROM docs WHERE id = 1")
        other.close()
        #expect(
            try await docs.search(Query().nearest(to: q, in: "embedding").limit(1)).first?.record
                .id == 2)
        #expect(try await docs.search(Query().matching(.typed("zebra"))).map(\.record.id) == [2])
        #expect(try await docs.fetch(Query(Field("year") == 1999)).map(\.id) == [2])
        // And raw SQL on the database's own connection.
        try await db.execute("UPDATE docs SET body = 'quokka' WHERE id = 3")
        #expect(try await docs.search(Query().matching(.typed("quokka"))).map(\.record.id) == [3])
        #expect(try await docs.verify().isEmpty)
    }

    @Test("a transaction that throws leaves the file and every index exactly as before")
    func rollbackLeavesIndexes() async throws {
        let dir = try TemporaryDirectory()
        let (db, docs, documents) = try await Self.seeded(40, seed: 6, at: dir.path("s.trove"))
        try await db.execute("CREATE TABLE audit(note TEXT)")
        let q = documents[5]["embedding"]!.vectorValue!
        let before = try await docs.search(
            Query().nearest(to: q, in: "embedding").matching(.typed("river")).limit(10))
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await db.write { tx in
                let d = try tx.documents("docs")
                try d.insert(
                    Document(
                        id: 999,
                        [
                            "title": "river river river", "body": "river", "year": 2001,
                            "embedding": .vector(q),
                        ])
                )
                try d.delete(ids: [6])
                try tx.execute("INSERT INTO audit VALUES ('x')")
                // Inside the transaction the new row is visible, to search too.
                #expect(
                    try d.search(Query().nearest(to: q, in: "embedding").limit(1)).first?.record
                        .id == 999)
                throw Boom()
            }
        }
        let after = try await docs.search(
            Query().nearest(to: q, in: "embedding").matching(.typed("river")).limit(10))
        #expect(after == before)
        #expect(try await docs.count() == 40)
        #expect(try await db.query("SELECT count(*) AS n FROM audit").first?.int("n") == 0)
        // A committed transaction spans collections and raw SQL.
        let tags = try await db.documents("tags", schema: DocumentSchema(fields: [.text("name")]))
        try await db.write { tx in
            try tx.documents("docs").patch(6, [Field("title"): "changed"])
            try tx.documents("tags").insert(Document(id: 1, ["name": "t"]))
            try tx.execute("INSERT INTO audit VALUES ('y')")
        }
        #expect(try await tags.count() == 1)
        #expect(try await docs.fetch(id: 6)?["title"] == "changed")
    }

    @Test("readers never see a half-applied transaction while a writer commits")
    func parallelReaders() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("bank.trove"))
        let accounts = try await db.documents(
            "accounts",
            schema: DocumentSchema(
                fields: [.integer("balance"), .vector("v", dimension: 2, metric: .l2)]))
        try await accounts.insert(
            (1...10).map {
                Document(id: .int($0), ["balance": 100, "v": .vector([Float($0), 0])])
            })
        let writer = Task {
            var rng = SeededGenerator(seed: 1)
            for _ in 0..<150 {
                let (a, b) = (
                    Int64.random(in: 1...10, using: &rng), Int64.random(in: 1...10, using: &rng)
                )
                try await db.write { tx in
                    let t = try tx.documents("accounts")
                    let x = try t.fetch(id: .int(a))!["balance"]!.intValue!
                    try t.patch(.int(a), [Field("balance"): .int(x - 7)])
                    let y = try t.fetch(id: .int(b))!["balance"]!.intValue!
                    try t.patch(.int(b), [Field("balance"): .int(y + 7)])
                    // A new document and its vector, removed again in the same transaction.
                    try t.insert(Document(id: 1000, ["balance": 0, "v": .vector([0.5, 0])]))
                    try t.delete(ids: [1000])
                }
            }
        }
        let readers = (0..<3).map { _ in
            Task {
                var checks = 0
                while checks < 60 {
                    let (total, count, nearest) = try await db.read { r in
                        let t = try r.documents("accounts")
                        let rows = try t.aggregate([.sum("balance"), .count()])
                        let hit = try t.search(Query().nearest(to: [0.5, 0], in: "v").limit(1))
                        return (
                            rows[0].values["sum_balance"], rows[0].values["count"],
                            hit.first?.record.id
                        )
                    }
                    #expect(total == .int(1000))
                    #expect(count == .int(10))
                    #expect(nearest == 1)
                    checks += 1
                }
            }
        }
        try await writer.value
        for reader in readers { try await reader.value }
    }

    @Test(
        "an HNSW vector field: recall against the exact scan, filtered top-k exact, follows writes")
    func hnswField() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("h.trove"))
        let docs = try await db.documents(
            "h",
            schema: DocumentSchema(
                fields: [.integer("group", indexed: true), .vector("v", dimension: 16)],
                vectorIndexes: ["v": .hnsw(m: 12, efConstruction: 100, efSearch: 64)]))
        var rng = SeededGenerator(seed: 12)
        let documents = (1...1500).map {
            Document(
                id: .int(Int64($0)),
                ["group": .int(Int64($0 % 20)), "v": .vector(rng.unitVector(dimension: 16))])
        }
        try await docs.insert(documents)
        var found = 0
        for _ in 0..<20 {
            let q = rng.unitVector(dimension: 16)
            let hits = try await docs.search(Query().nearest(to: q, in: "v").limit(10)).map(
                \.record.id)
            found +=
                Set(hits).intersection(
                    Self.exact(q, field: "v", metric: .cosine, k: 10, among: documents)
                ).count
            // A filter leaving few candidates: exactly the exact answer.
            let filtered = try await docs.search(
                Query(Field("group") == 3).nearest(to: q, in: "v").limit(5)
            ).map(
                \.record.id)
            #expect(
                filtered
                    == Self.exact(
                        q, field: "v", metric: .cosine, k: 5,
                        among: documents.filter { $0["group"] == 3 }))
        }
        #expect(Double(found) / 200 >= 0.9, "recall@10 \(Double(found) / 200)")
        let q = rng.unitVector(dimension: 16)
        try await docs.insert(Document(id: 5000, ["group": 99, "v": .vector(q)]))
        #expect(
            try await docs.search(Query().nearest(to: q, in: "v").limit(1)).first?.record.id
                == 5000)
        try await docs.delete(id: 5000)
        #expect(
            try await docs.search(Query().nearest(to: q, in: "v").limit(1)).first?.record.id
                != 5000)
        #expect(
            try await docs.explain(Query().nearest(to: q, in: "v")).contains { $0.contains("HNSW") }
        )
        await #expect(throws: TroveError.self) {
            try await db.documents(
                "bad", schema: DocumentSchema(fields: [.text("t")], vectorIndexes: ["t": .hnsw()]))
        }
    }

    @Test(
        "aggregates over a search's results; verify finds a damaged FTS5 index and repair rebuilds it"
    )
    func aggregateOverSearchAndRepair() async throws {
        let dir = try TemporaryDirectory()
        let (db, docs, documents) = try await Self.seeded(120, seed: 8, at: dir.path("s.trove"))
        let search = Query(Field("year") >= 2010).matching(.typed("garden")).limit(15)
        let hits = try await docs.search(search)
        let rows = try await docs.aggregate([.count(), .minimum("year")], over: search)
        #expect(rows.first?.values["count"] == .int(Int64(hits.count)))
        let years = hits.compactMap { hit in
            documents.first { $0.id == hit.record.id }?["year"]?.intValue
        }
        #expect(rows.first?.values["min_year"] == .int(years.min()!))
        // Damage the FTS5 index behind SQLite's back: drop one row's entry only.
        try await db.execute(
            "INSERT INTO docs_fts(docs_fts, rowid, title, body) VALUES ('delete', 1, ?, ?)",
            bindings: [
                .text(documents[0]["title"]!.stringValue!),
                .text(documents[0]["body"]!.stringValue!),
            ])
        #expect(try await !docs.verify().isEmpty)
        // The database-wide check sees it too, under the collection's name, and repair fixes it.
        let report = try await db.verify()
        #expect(!report.isHealthy && report.problems.contains { $0.hasPrefix("docs: ") })
        #expect(report.collections.first { $0.name == "docs" }?.rows == 120)
        let repaired = try await db.repair()
        #expect(repaired.actions.contains { $0.hasPrefix("docs: ") } && repaired.after.isHealthy)
        #expect(try await docs.verify().isEmpty)
        // A healthy collection is left alone.
        #expect(try await db.repair().actions.isEmpty)
    }
}

@Suite("Documents on an encrypted database")
struct EncryptedDocumentTests {
    @Test(
        "document writes, reader-pool reads and searches work; the sentinel never reaches the file")
    func encryptedDocuments() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("secret.trove")
        let key = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
        do {
            let db = try Database(path: path, encryption: .key(key))
            let notes = try await db.documents(
                "notes",
                schema: DocumentSchema(
                    fields: [.text("body"), .vector("v", dimension: 3)],
                    fullText: FullTextDefinition(fields: ["body"]))
            )
            try await notes.insert([
                Document(id: 1, ["body": "SENTINEL-zebra-7731 diary", "v": [1, 0, 0]]),
                Document(id: 2, ["body": "groceries", "v": [0, 1, 0]]),
            ])
            #expect(
                try await notes.search(Query().matching(.typed("diary"))).map(\.record.id) == [1])
            #expect(
                try await notes.search(Query().nearest(to: [0.9, 0.1, 0], in: "v").limit(1)).first?
                    .record.id == 1)
            #expect(try await db.read { r in try r.documents("notes").count() } == 2)
            try await db.checkpoint()
        }
        for suffix in ["", "-wal"] {
            guard let bytes = FileManager.default.contents(atPath: path + suffix) else { continue }
            #expect(
                bytes.range(of: Data("SENTINEL-zebra".utf8)) == nil,
                "plaintext in \(suffix.isEmpty ? "file" : suffix)")
        }
        let reopened = try Database(path: path, encryption: .key(key))
        #expect(try await reopened.documents(named: "notes").fetch(id: 2)?["body"] == "groceries")
    }
}
