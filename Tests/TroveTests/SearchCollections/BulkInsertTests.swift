import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// The API's bulk insert path: inside its transaction the insert triggers are dropped, the API
/// writes the change log and the FTS5 index itself (one statement each per batch), and the
/// triggers are recreated before the commit (DocumentStore+Write.swift).
@Suite("Bulk insert: the API's batch path keeps FTS5 and the change log in step")
struct BulkInsertTests {
    /// Rows in the log per id, FTS5 documents, and the insert triggers' SQL.
    private func state(_ db: Database, _ name: String) async throws -> (
        log: [Int64: Int], ftsDocuments: Int, triggers: [String]
    ) {
        var log: [Int64: Int] = [:]
        for row in try await db.query(
            "SELECT rid, count(*) FROM \(name)_log WHERE op = 1 GROUP BY rid")
        {
            log[row.int64(at: 0)!] = Int(row.int64(at: 1)!)
        }
        let documents = try await db.query("SELECT count(*) FROM \(name)_fts_docsize")[0].int64(
            at: 0)!
        let triggers = try await db.query(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ('\(name)_log_ai', '\(name)_fts_ai') ORDER BY name"
        ).map { $0.string(at: 0)! }
        return (log, Int(documents), triggers)
    }

    @Test("ids in any order and with gaps: one log entry and one FTS5 document per row, searchable")
    func unorderedIDs() async throws {
        let db = try Database()
        let items = try await SearchCollection("items", in: db, dimension: 4)
        let triggersBefore = try await state(db, "items").triggers
        #expect(triggersBefore.count == 2)
        var rng = SeededGenerator(seed: 7)
        var ids = (1...300).map { Int64($0 * 3) }
        ids.shuffle(using: &rng)
        let entries = ids.map { id in
            VectorEntry(
                id: .int(Int64(id)), content: "word\(id) shared", source: "s",
                metadata: "{\"id\":\(id)}",
                vector: rng.vector(dimension: 4))
        }
        try await items.insert(Array(entries[..<150]))
        try await items.insert(Array(entries[150...]))
        // Small batches and auto-assigned single rows go through the triggers.
        let assigned = try await items.insert(
            VectorEntry(content: "auto assigned", vector: [1, 2, 3, 4]))

        let (log, documents, triggers) = try await state(db, "items")
        #expect(log == Dictionary(uniqueKeysWithValues: (ids + [assigned.integer]).map { ($0, 1) }))
        #expect(documents == 301)
        #expect(triggers == triggersBefore)
        #expect(try await db.verify().isHealthy)
        for id in ids.prefix(20) {
            #expect(
                try await items.search(Query().matching(.fts5("word\(id)"))).map(\.id.integer) == [
                    id
                ])
        }
        #expect(try await items.search(Query().matching(.fts5("assigned"))).map(\.id) == [assigned])
        #expect(try await items.search(Query().matching(.fts5("shared")).limit(1_000)).count == 300)
        #expect(
            try await items.search(vector: entries[5].vector, limit: 1).first?.id == entries[5].id)
    }

    @Test(
        "raw SQL inserts after a bulk insert still fire the triggers, on this and other connections"
    )
    func rawSQLStillIndexed() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        let db = try Database(path: path)
        let items = try await SearchCollection("items", in: db, dimension: 2)
        try await items.insert(randomEntries(count: 200, dimension: 2, seed: 3))
        let blob = SQLValue.blob([Float(0), 1].withUnsafeBytes { Array($0) })
        try await db.execute(
            "INSERT INTO items(id, content, embedding) VALUES (1000, 'same connection', ?)",
            bindings: [blob])
        let raw = try Connection(path: path)
        try raw.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        try raw.execute(
            "INSERT INTO items(id, content, embedding) VALUES (1001, 'other connection', ?)", [blob]
        )

        #expect(try await items.search(Query().matching(.fts5("same"))).map(\.id) == [1000])
        #expect(try await items.search(Query().matching(.fts5("other"))).map(\.id) == [1001])
        let (log, documents, triggers) = try await state(db, "items")
        #expect(log[1000] == 1 && log[1001] == 1)
        #expect(log.count == 202)
        #expect(documents == 202)
        #expect(triggers.count == 2)
        #expect(Set(try await items.search(vector: [0, 1], limit: 2).map(\.id)) == [1000, 1001])
        #expect(try await db.verify().isHealthy)
    }

    @Test("a duplicate id late in a large batch leaves the table, FTS5 and the log unchanged")
    func allOrNothing() async throws {
        let db = try Database()
        let items = try await SearchCollection("items", in: db, dimension: 3)
        try await items.insert(randomEntries(count: 10, dimension: 3, seed: 1, firstID: 2_000))
        let before = try await state(db, "items")
        // 1,200 rows: more than one multi-row statement; the clash is in the last one.
        let batch = randomEntries(count: 1_200, dimension: 3, seed: 2, firstID: 801)
        await #expect(throws: TroveError.duplicateDocumentID(.int(2_000))) {
            try await items.insert(batch)
        }
        let after = try await state(db, "items")
        #expect(after.log == before.log)
        #expect(after.ftsDocuments == before.ftsDocuments)
        #expect(after.triggers == before.triggers && after.triggers.count == 2)
        #expect(try await items.count() == 10)
        #expect(try await items.search(Query().matching(.fts5("row"))).count == 10)
        #expect(try await db.verify().isHealthy)
        // The triggers are live again for raw SQL.
        try await db.execute("INSERT INTO items(id, content) VALUES (5, 'afterwards')")
        #expect(try await items.search(Query().matching(.fts5("afterwards"))).map(\.id) == [5])
    }

    @Test("inside the caller's transaction: rolled back with it, or committed with it")
    func callerTransaction() async throws {
        let db = try Database()
        let items = try await SearchCollection("items", in: db, dimension: 3)
        try await db.execute(script: "BEGIN")
        try await items.insert(randomEntries(count: 100, dimension: 3, seed: 4))
        try await db.execute(script: "ROLLBACK")
        #expect(try await items.count() == 0)
        #expect(try await state(db, "items").ftsDocuments == 0)

        try await db.execute(script: "BEGIN")
        try await items.insert(randomEntries(count: 100, dimension: 3, seed: 4))
        try await db.execute(script: "COMMIT")
        let (log, documents, triggers) = try await state(db, "items")
        #expect(log.count == 100 && documents == 100 && triggers.count == 2)
        #expect(try await items.search(Query().matching(.fts5("row"))).count == 10)
        #expect(try await db.verify().isHealthy)
    }

    @Test("a reader on another connection never sees the table without its insert triggers")
    func readerSeesTriggers() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        let db = try Database(path: path)
        let items = try await SearchCollection("items", in: db, dimension: 2)
        let reader = try Connection(path: path)
        try reader.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        func triggerCount() throws -> Int64 {
            try reader.scalar(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'items'")!
                .int64Value!
        }
        let expected = try triggerCount()
        #expect(expected == 9)  // log (3), FTS5 (3), version, links (delete and id change)
        try await items.insert(randomEntries(count: 100, dimension: 2, seed: 12))
        #expect(try triggerCount() == expected)
        try reader.execute("INSERT INTO items(id, content) VALUES (900, 'reader wrote this')")
        #expect(try await items.search(Query().matching(.fts5("reader"))).map(\.id) == [900])
        #expect(try await db.verify().isHealthy)
    }

    @Test("a collection created with FTS5's default settings gets Trove's on a writable open")
    func appliesFTSSettings() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("old.trove")
        do {
            let items = try await SearchCollection("items", in: Database(path: path), dimension: 2)
            try await items.insert(randomEntries(count: 5, dimension: 2, seed: 9))
        }
        let raw = try Connection(path: path)
        try raw.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        func settings() throws -> [String: Int64] {
            var out: [String: Int64] = [:]
            for row in try raw.query("SELECT k, v FROM items_fts_config WHERE k != 'version'") {
                out[row.string(at: 0)!] = row.int64(at: 1)
            }
            return out
        }
        let trove = try settings()
        #expect(trove["hashsize"] == 8 << 20)
        // As a file written before these settings existed.
        try raw.execute("DELETE FROM items_fts_config WHERE k != 'version'")
        _ = try await SearchCollection(named: "items", in: Database(path: path, readOnly: true))
        #expect(try settings().isEmpty)
        let db = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: db)
        #expect(try settings() == trove)
        try await items.insert(randomEntries(count: 80, dimension: 2, seed: 10, firstID: 100))
        let (log, documents, _) = try await state(db, "items")
        #expect(log.count == 85 && log.values.allSatisfy { $0 == 1 })
        #expect(documents == 85)
        #expect(try await db.verify().isHealthy)
    }
}
