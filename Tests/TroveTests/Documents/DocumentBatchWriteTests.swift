import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// The document engine's batch paths for collections with full-text fields (DocumentStore+Write.swift):
/// bulk inserts with the log and FTS5 insert triggers out of the way, multi-row statements for
/// smaller batches and upserts, and one savepoint per write.
@Suite("Document batch writes with full text")
struct DocumentBatchWriteTests {
    static let schema = DocumentSchema(
        id: .string,
        fields: [.text("title"), .text("body"), .text("code", optional: true, unique: true)],
        fullText: FullTextDefinition(["title": 2, "body": 1]))

    static func documents(_ range: ClosedRange<Int>) -> [Document] {
        range.map { i in
            Document(
                id: .string("d\(i)"),
                [
                    "title": .string("title\(i) common"), "body": .string("body word\(i % 7)"),
                    "code": .string("c\(i)"),
                ])
        }
    }

    private func triggerSQL(_ db: Database) async throws -> [String] {
        try await db.query(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ('docs_log_ai', 'docs_fts_ai') ORDER BY name"
        )
        .map { $0.string(at: 0)! }
    }

    @Test("a bulk batch, a multi-row batch and single rows are all searchable and logged once each")
    func pathsAgree() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("d.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        let triggers = try await triggerSQL(db)
        #expect(triggers.count == 2)
        try await docs.insert(Self.documents(1...200))  // bulk
        try await docs.insert(Self.documents(201...230))  // multi-row
        try await docs.insert(Self.documents(231...231))  // one row
        try await docs.upsert(Self.documents(225...240))  // multi-row upsert, half new
        #expect(try await triggerSQL(db) == triggers)
        #expect(try await docs.count() == 240)
        let logged = try await db.query(
            "SELECT count(DISTINCT rid), count(*) FROM docs_log WHERE op = 1")[0]
        #expect(logged.int64(at: 0) == 240)
        #expect(try await db.query("SELECT count(*) FROM docs_fts_docsize")[0].int64(at: 0) == 240)
        for i in [3, 150, 210, 231, 238] {
            let hits = try await docs.search(Query().matching(.typed("title\(i)")).limit(3))
            #expect(hits.map(\.record.id) == [.string("d\(i)")])
        }
        #expect(try await docs.fetch(id: "d226")?.version == 2)
        #expect(try await db.verify().isHealthy)
        // Raw SQL still goes through the recreated triggers.
        try await db.execute("INSERT INTO docs(id, title, body) VALUES ('raw', 'zeppelin', 'x')")
        #expect(
            try await docs.search(Query().matching(.typed("zeppelin"))).map(\.record.id) == [
                "raw"
            ])
    }

    @Test(
        "a failing batch names its row and leaves nothing, also when the caller's transaction goes on"
    )
    func failuresLeaveNothing() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("d.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        try await docs.insert(Self.documents(1...10))
        let triggers = try await triggerSQL(db)
        // Bulk: a duplicate id at row 90.
        var bulk = Self.documents(11...110)
        bulk[89] = Document(id: "d5", ["title": "dup", "body": "b"])
        await #expect(throws: TroveError.duplicateDocumentID("d5")) { try await docs.insert(bulk) }
        // Multi-row: a unique code taken at row 4.
        var small = Self.documents(11...20)
        small[3]["code"] = "c2"
        await #expect(throws: TroveError.uniqueViolation(field: "code", value: "\"c2\"")) {
            try await docs.insert(small)
        }
        await #expect(throws: TroveError.uniqueViolation(field: "code", value: "\"c2\"")) {
            try await docs.upsert(small)
        }
        #expect(try await docs.count() == 10)
        #expect(try await triggerSQL(db) == triggers)
        // Inside a transaction that catches the error and commits other work.
        let failing = bulk
        try await db.write { tx in
            let d = try tx.documents("docs")
            do {
                try d.insert(failing)
                Issue.record("the duplicate was accepted")
            } catch TroveError.duplicateDocumentID {}
            try d.insert(Self.documents(300...300))
        }
        #expect(try await docs.count() == 11)
        #expect(try await docs.search(Query().matching(.typed("title50"))).isEmpty)
        #expect(try await triggerSQL(db) == triggers)
        #expect(try await db.verify().isHealthy)
    }

    @Test(
        "a bulk batch indexes each full-text field from its own column, in any order, NULLs included"
    )
    func bulkIndexesEachFieldFromItsColumn() async throws {
        // Full-text fields in another order than the table's columns, with a field between them
        // that is not indexed and an optional one: each FTS5 column of a bulk batch must hold its
        // own field's value. FTS5's integrity check (in verify) compares the index with the
        // table, and deleting or changing rows removes the terms the table holds.
        let schema = DocumentSchema(
            id: .int64,
            fields: [.text("a"), .integer("n"), .text("b", optional: true), .text("c")],
            fullText: FullTextDefinition(["c": 1, "a": 1, "b": 2]))
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("d.trove"))
        let docs = try await db.documents("docs", schema: schema)
        let rows = (1...120).map { i in
            Document(
                id: .int(Int64(i)),
                [
                    "a": .string("alpha\(i)"), "n": .int(Int64(i)),
                    "b": i % 3 == 0 ? .null : .string("beta\(i)"), "c": .string("gamma\(i)"),
                ])
        }
        try await docs.insert(rows)
        #expect(try await db.verify().isHealthy)
        // FTS5 kept the batch's terms pending until the commit: one segment, not one per row.
        #expect(
            try await db.query("SELECT count(DISTINCT segid) FROM docs_fts_idx")[0].int64(at: 0)
                == 1)
        for (word, field, id) in [("alpha7", "a", 7), ("beta8", "b", 8), ("gamma9", "c", 9)] {
            let hits = try await docs.search(Query().matching(.typed(word), in: [field]).limit(3))
            #expect(hits.map(\.record.id) == [.int(Int64(id))], "\(word) in \(field)")
            #expect(
                try await docs.search(
                    Query().matching(.typed(word), in: [field == "a" ? "c" : "a"])
                ).isEmpty)
        }
        #expect(try await docs.search(Query().matching(.typed("beta9"))).isEmpty)
        #expect(try await docs.delete(ids: (1...40).map { .int(Int64($0)) }) == 40)
        _ = try await docs.patch(.int(50), [Field("c"): .string("delta")])
        #expect(try await db.verify().isHealthy)
        #expect(try await docs.search(Query().matching(.typed("gamma50"))).isEmpty)
        #expect(
            try await docs.search(Query().matching(.typed("delta"))).map(\.record.id) == [
                .int(50)
            ])
        #expect(try await db.query("SELECT count(*) FROM docs_fts_docsize")[0].int64(at: 0) == 80)
    }
}
