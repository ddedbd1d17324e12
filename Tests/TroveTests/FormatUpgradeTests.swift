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
    static func fixtureCopy(in dir: TemporaryDirectory) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/format1.trove")
        let path = dir.path("format1.trove")
        try FileManager.default.copyItem(atPath: source.path, toPath: path)
        return path
    }

    @Test("a format-1 file opens, searches, and is upgraded in place to format 2")
    func format1Opens() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.fixtureCopy(in: dir)
        // Read-only first: it opens and searches without being changed.
        do {
            let readOnly = try Database(path: path, readOnly: true)
            let notes = try await readOnly.collection(named: "notes")
            #expect(try await notes.count() == 3)
            #expect(try await readOnly.query("SELECT value FROM trove_meta WHERE key = 'format_version'").first?.string("value") == "1")
        }
        let db = try Database(path: path)
        #expect(try await db.query("SELECT value FROM trove_meta WHERE key = 'format_version'").first?.string("value") == "2")
        let notes = try await db.collection(named: "notes")
        let hits = try await notes.search(vector: [0.0, 0.2, 0.9, 0.1], topK: 1)
        #expect(hits.first?.id == 2)
        #expect(try await notes.searchText(.typed("plumber")).map(\.id) == [3])
        let pages = try await db.collection(named: "pages")
        #expect(try await pages.search(vector: [5, 1, 2], topK: 1).first?.id == 5)
        // The upgraded trigger logs updates of source and metadata (format 1 ignored them).
        let before = try await db.query("SELECT count(*) AS n FROM notes_log").first?.int("n") ?? 0
        try await db.execute("UPDATE notes SET source = 'moved.md', metadata = '{\"list\": \"home\"}' WHERE id = 1")
        let after = try await db.query("SELECT count(*) AS n FROM notes_log").first?.int("n") ?? 0
        #expect(after == before + 1)
        let moved = try await notes.search(vector: [0.9, 0.1, 0.0, 0.1], topK: 3, filter: SearchFilter(source: "moved.md"))
        #expect(moved.map(\.id) == [1])
        #expect(moved.first?.metadata == "{\"list\": \"home\"}")
        // Document collections live beside the old ones in the upgraded file.
        let docs = try await db.documents("extra", schema: DocumentSchema(fields: [.text("t")]))
        try await docs.insert(Document(id: 1, ["t": "x"]))
        #expect(try await db.collectionNames() == ["notes", "pages"])
        #expect(try await db.documentCollectionNames() == ["extra"])
    }
}
