import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Files written by earlier versions keep opening (sqlite-vec keeps legacy fixtures the same way).
@Suite("Format upgrade", .serialized)
struct FormatUpgradeTests {
    /// `Fixtures/format1.trove`: written by Trove at format 1 (session 3's main, 31a0e4a): a
    /// flat collection `notes` (4-d, three rows with source and metadata) and an HNSW
    /// collection `pages` (3-d, l2, 20 rows).
    static func fixtureCopy(in dir: TemporaryDirectory, name: String = "format1.trove") throws
        -> String
    {
        let source = TestPaths.fixtures.appendingPathComponent(name)
        let path = dir.path(name)
        try FileManager.default.copyItem(atPath: source.path, toPath: path)
        return path
    }

    @Test("a format-1 file opens, searches, and is upgraded in place to the current format")
    func format1Opens() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.fixtureCopy(in: dir)
        // Read-only first: it opens and searches without being changed.
        do {
            let readOnly = try Database(path: path, readOnly: true)
            let notes = try await SearchCollection(named: "notes", in: readOnly)
            #expect(try await notes.count() == 3)
            #expect(
                try await readOnly.query(
                    "SELECT value FROM trove_meta WHERE key = 'format_version'"
                ).first?.string(
                    "value") == "1")
        }
        let db = try Database(path: path)
        #expect(
            try await db.query("SELECT value FROM trove_meta WHERE key = 'format_version'").first?
                .string("value")
                == "4")
        let notes = try await SearchCollection(named: "notes", in: db)
        let hits = try await notes.search(vector: [0.0, 0.2, 0.9, 0.1], limit: 1)
        #expect(hits.first?.id == 2)
        #expect(try await notes.search(Query().matching(.typed("plumber"))).map(\.id) == [3])
        let pages = try await SearchCollection(named: "pages", in: db)
        #expect(try await pages.search(vector: [5, 1, 2], limit: 1).first?.id == 5)
        // The upgraded trigger logs updates of source and metadata (format 1 ignored them).
        let before = try await db.query("SELECT count(*) AS n FROM notes_log").first?.int("n") ?? 0
        try await db.execute(
            "UPDATE notes SET source = 'moved.md', metadata = '{\"list\": \"home\"}' WHERE id = 1")
        let after = try await db.query("SELECT count(*) AS n FROM notes_log").first?.int("n") ?? 0
        // Two entries: the update, and the version trigger's raise of `_version` (format 3).
        #expect(after == before + 2)
        let moved = try await notes.search(
            vector: [0.9, 0.1, 0.0, 0.1], where: .source("moved.md"), limit: 3)
        #expect(moved.map(\.id) == [1])
        #expect(moved.first?.record.metadata == "{\"list\": \"home\"}")
        // Document collections live beside the old ones in the upgraded file.
        let docs = try await db.documents("extra", schema: DocumentSchema(fields: [.text("t")]))
        try await docs.insert(Document(id: 1, ["t": "x"]))
        #expect(try await db.collectionNames() == ["extra", "notes", "pages"])
        #expect(try await db.configuration(of: "extra") == nil)
    }

    /// `Fixtures/format2.trove`: written by Trove at format 2 (session 8's main, c329f80): a flat
    /// collection `notes` (4-d; rows 1-4, row 4 updated once), an HNSW collection `pages` (3-d,
    /// l2, 20 rows, its index saved) and a document collection `items` (2 documents).
    @Test(
        "a format-2 file reads as before read-only, and is upgraded in place: search collections get row versions"
    )
    func format2Opens() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.fixtureCopy(in: dir, name: "format2.trove")
        do {
            let readOnly = try Database(path: path, readOnly: true)
            let notes = try await SearchCollection(named: "notes", in: readOnly)
            #expect(try await notes.count() == 4)
            #expect(try await notes.search(vector: [0, 0.2, 0.9, 0.1], limit: 1).first?.id == 2)
            // Rows without a version column read as version 1 until the file is upgraded.
            #expect(try await notes.page(Query()).documents.map(\.version) == [1, 1, 1, 1])
            #expect(
                try await readOnly.query(
                    "SELECT value FROM trove_meta WHERE key = 'format_version'"
                ).first?.string(
                    "value") == "2")
        }
        let db = try Database(path: path)
        #expect(
            try await db.query("SELECT value FROM trove_meta WHERE key = 'format_version'").first?
                .string("value")
                == "4")
        let notes = try await SearchCollection(named: "notes", in: db)
        let rows = try await notes.page(Query().sorted(by: .ascending("id"))).documents
        #expect(rows.map(\.id) == [1, 2, 3, 4])
        #expect(rows.allSatisfy { $0.version == 1 })
        #expect(rows[3]["content"] == "Book the dentist for Tuesday at 10")
        #expect(rows[0]["metadata"] == .object(["list": "home", "priority": 2]))
        #expect(try await notes.search(Query().matching(.typed("plumber"))).map(\.id) == [1])
        let patched = try await notes.patch(1, [Field("metadata", path: "$.priority"): 5])
        #expect(patched.version == 2)
        let byPriority = try await notes.search(
            Query(Field("metadata", path: "$.priority") >= 3).nearest(
                to: [1, 0, 0, 0], in: "embedding"))
        #expect(byPriority.map(\.id) == [1, 3])
        try await notes.update(
            VectorEntry(
                id: 2, content: "Quarterly report due Monday", source: "work.md",
                vector: [0, 0.2, 0.9, 0.1]))
        #expect(try await notes.page(Query(Field("id") == 2)).documents.first?.version == 2)
        let pages = try await SearchCollection(named: "pages", in: db)
        #expect(try await pages.search(vector: [5, 1, 2], limit: 1).first?.id == 5)
        #expect(
            try await pages.aggregate([.count(), .maximum("id")]).first?.values == [
                "count": 20, "max_id": 20,
            ])
        let items = try await db.documents(named: "items")
        #expect(try await items.fetch(Query().sorted(by: .ascending("year"))).map(\.id) == [2, 1])
        #expect(try await db.verify().isHealthy)
    }
}
