import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

@Suite("Change log: indexes follow every writer")
struct ChangeLogTests {
    @Test("raw-SQL inserts, updates and deletes are visible to both searches on the next query")
    func rawSQLWrites() async throws {
        let db = try Database()
        let items = try await SearchCollection("items", in: db, dimension: 2)
        try await items.insert(VectorEntry(id: 1, content: "alpha", vector: [1, 0]))
        #expect(try await items.search(vector: [0, 1], limit: 5).map(\.id) == [1])

        let blob = SQLValue.blob([Float(0), 1].withUnsafeBytes { Array($0) })
        try await db.execute(
            "INSERT INTO items(id, content, embedding) VALUES (2, 'bravo charlie', ?)",
            bindings: [blob])
        #expect(try await items.search(vector: [0, 1], limit: 1).map(\.id) == [2])
        #expect(try await items.search(Query().matching("bravo")).map(\.id) == [2])

        try await db.execute(
            "UPDATE items SET content = 'delta', embedding = ? WHERE id = 1",
            bindings: [.blob([Float(0), -1].withUnsafeBytes { Array($0) })])
        #expect(try await items.search(Query().matching("alpha")).isEmpty)
        #expect(try await items.search(Query().matching("delta")).map(\.id) == [1])
        #expect(try await items.search(vector: [0, -1], limit: 1).map(\.id) == [1])

        try await db.execute("UPDATE items SET id = 10 WHERE id = 2")
        #expect(Set(try await items.search(vector: [0, 1], limit: 5).map(\.id)) == [1, 10])
        #expect(try await items.search(Query().matching("bravo")).map(\.id) == [10])

        try await db.execute("DELETE FROM items WHERE id = 10")
        #expect(try await items.search(vector: [0, 1], limit: 5).map(\.id) == [1])
        #expect(try await items.search(Query().matching("bravo")).isEmpty)

        // A row without a vector is found by text, not by vector search.
        try await db.execute("INSERT INTO items(id, content) VALUES (3, 'echo')")
        #expect(try await items.search(Query().matching("echo")).map(\.id) == [3])
        #expect(try await items.search(vector: [1, 0], limit: 5).map(\.id) == [1])
        // A non-finite vector stored by raw SQL is treated as no vector.
        try await db.execute(
            "UPDATE items SET embedding = ? WHERE id = 3",
            bindings: [.blob([Float.nan, 1].withUnsafeBytes { Array($0) })])
        #expect(try await items.search(vector: [1, 0], limit: 5).map(\.id) == [1])
    }

    @Test("a second connection's writes are visible on the next query")
    func secondConnection() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        let first = try await SearchCollection("items", in: Database(path: path), dimension: 3)
        try await first.insert(randomEntries(count: 20, dimension: 3, seed: 21))
        #expect(try await first.search(vector: [1, 1, 1], limit: 100).count == 20)

        let second = try await SearchCollection(named: "items", in: Database(path: path))
        try await second.insert(
            VectorEntry(id: 500, content: "from the second connection", vector: [9, 9, 9]))
        try await second.delete(id: 1)
        let hits = try await first.search(vector: [1, 1, 1], limit: 100)
        #expect(hits.count == 20)
        #expect(hits.first?.id == 500)
        #expect(!hits.contains { $0.id == 1 })
        #expect(try await first.search(Query().matching("second")).map(\.id) == [500])

        // And through a plain SQLite connection (another library or process) that registers
        // Trove's tokenizer, which the default full-text index needs.
        let raw = try Connection(path: path)
        try raw.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        try raw.execute("DELETE FROM items WHERE id = 500")
        #expect(try await first.search(vector: [1, 1, 1], limit: 1).first?.id != 500)
    }

    @Test("when the log was pruned past the watermark, the index reloads from the table")
    func prunedLog() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        let first = try await SearchCollection("items", in: Database(path: path), dimension: 2)
        try await first.insert(VectorEntry(id: 1, content: "a", vector: [1, 0]))
        #expect(try await first.search(vector: [1, 0], limit: 5).map(\.id) == [1])
        // Another process writes, then prunes the whole log and records the floor.
        let raw = try Connection(path: path)
        try raw.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        let blob = SQLValue.blob([Float(0), 1].withUnsafeBytes { Array($0) })
        try raw.execute("INSERT INTO items(id, content, embedding) VALUES (2, 'b', ?)", [blob])
        try raw.execute("DELETE FROM items WHERE id = 1")
        let maxSeq = try raw.scalar("SELECT max(seq) FROM items_log")!
        try raw.execute("DELETE FROM items_log")
        try raw.execute(
            "INSERT OR REPLACE INTO trove_meta(key, value) VALUES ('log_floor.items', ?)",
            [.text(String(maxSeq.int64Value!))])
        #expect(try await first.search(vector: [1, 0], limit: 5).map(\.id) == [2])
    }

    @Test("the log stays bounded under many writes")
    func logBounded() async throws {
        let db = try Database()
        let items = try await SearchCollection("items", in: db, dimension: 2, lexicalSearch: false)
        for round in 0..<6 {
            let batch = (0..<10_000).map { i in
                VectorEntry(id: .int(Int64(i)), content: "", vector: [Float(i + 1), Float(round)])
            }
            try await items.upsert(batch)
        }
        let logCount = try await db.query("SELECT count(*) FROM items_log")[0].int64(at: 0)!
        #expect(logCount <= 60_000)
        #expect(
            try await items.search(vector: [1, 5], where: .sql("id = 0", []), limit: 1).first?.id
                == 0)
        #expect(try await items.count() == 10_000)
    }

    @Test("a document collection's log stays bounded under updates alone")
    func logBoundedUnderUpdates() async throws {
        let db = try Database()
        let docs = try await db.documents("docs", schema: DocumentSchema(fields: [.integer("n")]))
        try await docs.insert((0..<10).map { Document(id: .int(Int64($0)), ["n": 0]) })
        try await db.write { tx in
            let d = try tx.documents("docs")
            for round in 1...6_000 {
                for id in 0..<10 {
                    try d.update(Document(id: .int(Int64(id)), ["n": .int(Int64(round))]))
                }
            }
        }
        let logCount = try await db.query("SELECT count(*) FROM docs_log")[0].int64(at: 0)!
        #expect(logCount <= 50_001)
        #expect(try await docs.fetch(id: 3)?["n"] == 6_000)
    }
}
