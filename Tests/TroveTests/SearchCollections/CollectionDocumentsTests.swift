import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// A search collection through the document engine (its preset schema): unranked queries,
/// aggregates, patches, compare-and-set, deletes by filter and transactions, checked against
/// Swift oracles and against the collection's own search methods.
@Suite("Collection as a preset document schema")
struct CollectionDocumentsTests {
    static let sources = ["a.pdf", "b.md", "c.txt"]
    static let words = ["router", "reset", "garden", "lamp", "ticket", "orbit"]

    struct Row {
        var id: Int64
        var content: String
        var source: String
        var page: Int64?
        var vector: [Float]
    }

    static func rows(count: Int, seed: UInt64) -> [Row] {
        var rng = SeededGenerator(seed: seed)
        return (1...count).map { i in
            Row(
                id: Int64(i),
                content: (0..<4).map { _ in words.randomElement(using: &rng)! }.joined(
                    separator: " "),
                source: sources.randomElement(using: &rng)!,
                page: i % 5 == 0 ? nil : Int64.random(in: 0..<20, using: &rng),
                vector: rng.unitVector(dimension: 4))
        }
    }

    static func entry(_ row: Row) -> VectorEntry {
        VectorEntry(
            id: .int(row.id), content: row.content, source: row.source,
            metadata: row.page.map { #"{"page": \#($0)}"# }, vector: row.vector)
    }

    static func filled(_ db: Database, count: Int = 120, seed: UInt64 = 11) async throws -> (
        SearchCollection, [Row]
    ) {
        let notes = try await SearchCollection("notes", in: db, dimension: 4)
        let rows = rows(count: count, seed: seed)
        try await notes.insert(rows.map(entry))
        return (notes, rows)
    }

    @Test("fetch with filter, order, projection and limit equals the Swift oracle")
    func fetchMatchesOracle() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let (notes, rows) = try await Self.filled(db)
        let fetched = try await notes.page(
            Query(Field("source") != "c.txt" && Field("metadata", path: "$.page") >= 5)
                .sorted(
                    by: SortKey(Field("metadata", path: "$.page"), descending: true),
                    .ascending("content")
                )
                .select(["content", "source"]).limit(15)
        ).documents
        let expected = rows.filter { $0.source != "c.txt" && ($0.page ?? -1) >= 5 }
            .sorted { ($0.page!, $1.content, $1.id) > ($1.page!, $0.content, $0.id) }
            .prefix(15)
        #expect(fetched.map(\.id) == expected.map { .int($0.id) })
        #expect(fetched.map { $0["content"] } == expected.map { .string($0.content) })
        #expect(
            fetched.allSatisfy { Set($0.fields.keys) == ["content", "source"] && $0.version == 1 })
        // fetch returns whole entries in the query's order; a projection is for page(_:).
        let entries = try await notes.fetch(
            Query(Field("source") != "c.txt" && Field("metadata", path: "$.page") >= 5)
                .sorted(
                    by: SortKey(Field("metadata", path: "$.page"), descending: true),
                    .ascending("content")
                ).limit(
                    15))
        #expect(entries.map(\.id) == fetched.map(\.id))
        #expect(entries.map(\.content) == expected.map(\.content))
        await #expect(throws: TroveError.self) {
            try await notes.fetch(Query().select(["content"]))
        }
        // Whole rows: every column of the preset, the vector included.
        let whole = try #require(try await notes.page(Query(Field("id") == 7)).documents.first)
        let seven = rows[6]
        #expect(whole["embedding"] == .vector(seven.vector))
        #expect(whole["source"] == .string(seven.source))
        #expect(whole["created_at"]?.doubleValue != nil && whole["updated_at"]?.doubleValue != nil)
        #expect(
            try await notes.count(where: Field("source") == "a.pdf")
                == rows.count { $0.source == "a.pdf" }
        )
        await #expect(throws: TroveError.self) {
            try await notes.page(Query().nearest(to: [1, 0, 0, 0], in: "embedding")).documents
        }
    }

    @Test(
        "explain reports SQLite's plan for unranked queries and the search's decisions for ranked ones"
    )
    func explain() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let (notes, rows) = try await Self.filled(db)
        let unranked = try await notes.explain(
            Query(Field("source") == "a.pdf").sorted(by: .ascending("id")).limit(5))
        #expect(unranked.first == "fetch in SQLite: filter, order, limit pushed down")
        #expect(unranked.contains { $0.contains("sqlite:") })
        let ranked = try await notes.explain(
            Query(Field("source") == "a.pdf").nearest(to: [1, 0, 0, 0], in: "embedding")
                .matching(.typed("router")).limit(3))
        let matching = rows.count { $0.source == "a.pdf" }
        #expect(ranked.contains("candidates: filter in SQLite, before ranking"))
        #expect(ranked.contains { $0.contains("INDEX notes_i0") }, "\(ranked)")
        #expect(
            ranked.contains(
                "vector leg embedding: in memory, exact scan: the \(matching) candidates (cosine, 4-d)"
            ),
            "\(ranked)")
        #expect(ranked.contains("text leg: in-memory BM25 over content, ranked as FTS5's bm25"))
        #expect(ranked.contains("fusion: reciprocal rank, k = 60.0"))
    }

    @Test("a snapshot read reaches a search collection this database has not opened yet")
    func readBeforeOpen() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("t.trove")
        do {
            let db = try Database(path: path)
            _ = try await Self.filled(db, count: 30)
        }
        let db = try Database(path: path)
        let (count, first) = try await db.read { r in
            let notes = try r.documents("notes")
            return (
                try notes.count(),
                try notes.page(Query().sorted(by: .ascending("id")).limit(1)).documents.first?.id
            )
        }
        #expect(count == 30 && first == 1)
        let notes = try await SearchCollection(named: "notes", in: db)
        #expect(try await notes.count(where: Field("id") <= 10) == 10)
        try await db.write { tx in _ = try tx.documents("notes").delete(ids: [1]) }
        #expect(try await notes.count() == 29)
    }

    @Test("cursor paging visits every row exactly once while rows come and go between pages")
    func cursorPaging() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let (notes, rows) = try await Self.filled(db, count: 90)
        let query = Query().sorted(by: .ascending("source")).limit(7)
        var seen: [Int64] = []
        var page = try await notes.page(query)
        var inserted: Int64 = 1000
        var deleted: Set<Int64> = []
        while true {
            seen += page.documents.map { document -> Int64 in
                guard case .int(let id) = document.id else { return -1 }
                return id
            }
            guard let next = page.next else { break }
            // Between pages: a new row sorting first (never visited) and a row not yet visited deleted.
            inserted += 1
            try await notes.insert(
                VectorEntry(
                    id: .int(inserted), content: "late", source: "0-early", vector: [1, 0, 0, 0]))
            if let victim = rows.map(\.id).first(where: {
                !seen.contains($0) && !deleted.contains($0)
            }) {
                try await notes.delete(id: .int(victim))
                deleted.insert(victim)
            }
            page = try await notes.page(query.after(next))
        }
        #expect(Set(seen).count == seen.count)
        #expect(Set(seen) == Set(rows.map(\.id)).subtracting(deleted))
    }

    @Test("aggregates over a filter and over search results equal the oracle")
    func aggregates() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let (notes, rows) = try await Self.filled(db)
        let groups = try await notes.aggregate(
            [.count(), .minimum("id"), .maximum("id"), .countDistinct("content")],
            groupBy: [Field("source")],
            where: Field("id") > 10)
        let kept = rows.filter { $0.id > 10 }
        #expect(groups.map { $0.group["source"] } == Self.sources.map { .string($0) })
        for group in groups {
            let members = kept.filter { .string($0.source) == group.group["source"] }
            #expect(group.values["count"] == .int(Int64(members.count)))
            #expect(group.values["min_id"] == .int(members.map(\.id).min()!))
            #expect(group.values["max_id"] == .int(members.map(\.id).max()!))
            #expect(
                group.values["distinct_content"] == .int(Int64(Set(members.map(\.content)).count)))
        }
        let q: [Float] = [0.5, 0.5, 0.5, 0.5]
        let search = Query(Field("source") == "a.pdf").nearest(to: q, in: "embedding").limit(9)
        let hits = try await notes.search(search)
        let over = try await notes.aggregate([.count(), .sum("id")], over: search)
        #expect(over.first?.values["count"] == .int(Int64(hits.count)))
        #expect(over.first?.values["sum_id"] == .int(hits.map(\.id.integer).reduce(0, +)))
        await #expect(throws: TroveError.notNumeric(field: "content", aggregate: "sum")) {
            try await notes.aggregate([.sum("content")])
        }
    }

    @Test(
        "patch moves updated_at and the version, reaches every index, and refuses bad input with nothing written"
    )
    func patch() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let (notes, _) = try await Self.filled(db, count: 30)
        // the BM25 and FTS5 legs are loaded
        _ = try await notes.search(Query().matching(.typed("router")))
        _ = try await notes.search(vector: [1, 0, 0, 0], limit: 3)  // and the vectors
        let before = try #require(try await notes.page(Query(Field("id") == 4)).documents.first)
        let after = try await notes.patch(
            4,
            [
                Field("content"): "zeppelin hangar", Field("metadata", path: "$.pinned"): true,
                Field("embedding"): .vector([0, 0, 0, 1]),
            ])
        #expect(after.version == before.version + 1)
        #expect(after["created_at"] == before["created_at"])
        #expect(after["updated_at"]!.doubleValue! >= before["updated_at"]!.doubleValue!)
        #expect(try await notes.search(Query().matching(.typed("zeppelin"))).map(\.id) == [4])
        #expect(try await notes.search(Query().matching("hangar")).map(\.id) == [4])
        #expect(try await notes.search(vector: [0, 0, 0, 1], limit: 1).first?.id == 4)
        let pinned = try await notes.search(
            Query(Field("metadata", path: "$.pinned") == true).nearest(
                to: [1, 0, 0, 0], in: "embedding"))
        #expect(pinned.map(\.id) == [4])
        // Compare-and-set.
        await #expect(
            throws: TroveError.versionConflict(
                id: 4, expected: before.version, actual: after.version)
        ) {
            try await notes.patch(4, [Field("source"): "x"], ifVersion: before.version)
        }
        #expect(
            try await notes.patch(4, [Field("source"): "x"], ifVersion: after.version).version
                == after.version + 1)
        // Bad input: nothing written.
        let stored = try await notes.page(Query(Field("id") == 4)).documents
        await #expect(
            throws: TroveError.invalidValue(
                field: "created_at", reason: "Trove sets created_at itself")
        ) {
            try await notes.patch(4, [Field("created_at"): 0.0])
        }
        await #expect(throws: TroveError.self) {
            try await notes.patch(4, [Field("metadata"): .array([1, 2])])
        }
        do {
            try await notes.patch(
                4,
                [Field("metadata", path: "$.blob"): .string(String(repeating: "x", count: 20_000))])
            Issue.record("a patch past the metadata limit was accepted")
        } catch TroveError.metadataTooLarge(limit: 16_384, let actual) {
            #expect(actual > 20_000)
        }
        await #expect(throws: TroveError.dimensionMismatch(expected: 4, actual: 2)) {
            try await notes.patch(4, [Field("embedding"): .vector([1, 0])])
        }
        await #expect(throws: TroveError.documentNotFound(999)) {
            try await notes.patch(999, [Field("source"): "x"])
        }
        #expect(try await notes.page(Query(Field("id") == 4)).documents == stored)
        // Updates through the search API raise the version as well, and so does raw SQL.
        try await notes.update(
            VectorEntry(id: 5, content: "five", source: "s", vector: [1, 1, 0, 0]))
        try await db.execute("UPDATE notes SET source = 'raw' WHERE id = 6")
        let versions = try await notes.page(Query(Field("id") >= 5 && Field("id") <= 6).select([]))
            .documents
        #expect(versions.map(\.version) == [2, 2])
    }

    @Test("delete(where:) removes the rows from the table and every in-memory index")
    func deleteWhere() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let (notes, rows) = try await Self.filled(db)
        _ = try await notes.search(vector: [1, 0, 0, 0], limit: 3)
        _ = try await notes.search(Query().matching(.typed("router")))
        let removed = try await notes.delete(where: Field("source") == "b.md")
        #expect(removed == rows.count { $0.source == "b.md" })
        #expect(try await notes.count() == rows.count - removed)
        let vector = try await notes.search(vector: [0.5, 0.5, 0.5, 0.5], limit: 200)
        #expect(
            vector.count == rows.count - removed && vector.allSatisfy { $0.record.source != "b.md" }
        )
        let text = try await notes.search(Query().matching(.typed("router garden lamp")).limit(200))
        #expect(!text.isEmpty && text.allSatisfy { $0.record.source != "b.md" })
    }

    @Test(
        "a transaction over a search collection, a document collection and raw SQL is all or nothing, indexes included"
    )
    func transactions() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let (notes, _) = try await Self.filled(db, count: 40)
        let items = try await db.documents(
            "items", schema: DocumentSchema(fields: [.text("title")]))
        try await db.execute("CREATE TABLE audit(note TEXT)")
        let q: [Float] = [0, 0, 1, 0]
        let vectorBefore = try await notes.search(vector: q, limit: 5)
        let textBefore = try await notes.search(Query().matching(.typed("quasar")))
        #expect(textBefore.isEmpty)
        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await db.write { tx in
                let n = try tx.documents("notes")
                try n.insert(
                    Document(
                        id: 500,
                        ["content": "quasar beacon", "source": "tx", "embedding": .vector(q)]))
                try n.patch(1, [Field("content"): "quasar too"])
                _ = try n.delete(ids: [2])
                try tx.documents("items").insert(Document(id: 1, ["title": "t"]))
                try tx.execute("INSERT INTO audit(note) VALUES ('x')")
                #expect(
                    try n.search(Query().nearest(to: q, in: "embedding").limit(1)).first?.record
                        .id == 500)
                throw Abort()
            }
        }
        #expect(try await notes.search(vector: q, limit: 5) == vectorBefore)
        #expect(try await notes.search(Query().matching(.typed("quasar"))).isEmpty)
        #expect(try await notes.count() == 40)
        #expect(try await items.count() == 0)
        #expect(try await db.query("SELECT count(*) AS n FROM audit")[0].int("n") == 0)

        try await db.write { tx in
            let n = try tx.documents("notes")
            try n.insert(
                Document(
                    id: 500, ["content": "quasar beacon", "source": "tx", "embedding": .vector(q)]))
            _ = try n.delete(ids: [2])
            try tx.documents("items").insert(Document(id: 1, ["title": "t"]))
        }
        #expect(try await notes.search(vector: q, limit: 1).first?.id == 500)
        #expect(try await notes.search(Query().matching(.typed("quasar"))).map(\.id) == [500])
        #expect(try await notes.fetch(id: 2) == nil)
        #expect(try await notes.search(vector: q, limit: 100).allSatisfy { $0.id != 2 })
        // A snapshot read sees the same as the search methods (its vector legs scan the table).
        let snapshot = try await db.read { r in
            try r.documents("notes").search(Query().nearest(to: q, in: "embedding").limit(5)).map {
                $0.record.id
            }
        }
        #expect(snapshot == (try await notes.search(vector: q, limit: 5)).map(\.id))
        // Writes through the document view keep the search collection's own rules.
        await #expect(
            throws: TroveError.invalidMetadata(reason: "metadata must be a JSON object, got [1]")
        ) {
            try await db.write { tx in
                try tx.documents("notes").insert(
                    Document(id: 600, ["content": "m", "metadata": [1]]))
            }
        }
        await #expect(throws: TroveError.dimensionMismatch(expected: 4, actual: 3)) {
            try await db.write { tx in
                try tx.documents("notes").insert(
                    Document(id: 600, ["content": "m", "embedding": .vector([1, 0, 0])]))
            }
        }
        await #expect(throws: TroveError.duplicateDocumentID(500)) {
            try await db.write { tx in
                try tx.documents("notes").insert(Document(id: 500, ["content": "again"]))
            }
        }
        #expect(try await notes.count() == 40)
    }
}
