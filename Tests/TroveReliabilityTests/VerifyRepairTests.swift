import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// `verify()` finds damage to what is derived from the tables; `repair()` rebuilds it.
@Suite("Database.verify and repair")
struct VerifyRepairTests {
    func fileDatabase(_ dir: TemporaryDirectory) async throws -> (
        Database, SearchCollection, String
    ) {
        let path = dir.path("store.trove")
        let database = try Database(path: path)
        let collection = try await seededCollection(database, count: 50)
        return (database, collection, path)
    }

    @Test("a healthy database verifies clean, with counts that match the table")
    func healthy() async throws {
        let dir = try TemporaryDirectory()
        let (database, items, _) = try await fileDatabase(dir)
        _ = try await SearchCollection("other", in: database, dimension: 3, lexicalSearch: false)
        let report = try await database.verify()
        #expect(report.isHealthy, "\(report.problems)")
        #expect(report.integrity == ["ok"])
        // The links table comes with the first collection of any kind (search collections have
        // the link triggers of the one layout since format 4).
        #expect(report.collections.map(\.name) == ["_trove_edges", "items", "other"])
        let health = try #require(report.collections.first { $0.name == "items" })
        #expect(
            health.rows == 50 && health.rowsWithVector == 50 && health.textIndexDocuments == 50
                && health.vectorIndexCount == 50)
        #expect(report.collections.first { $0.name == "other" }?.textIndexDocuments == nil)
        // Repairing a healthy database changes nothing a user can see.
        let snapshot = try await CollectionSnapshot(items)
        let result = try await database.repair()
        #expect(result.before.isHealthy && result.after.isHealthy)
        #expect(try await CollectionSnapshot(items) == snapshot)
    }

    @Test(
        "a row removed from the FTS index behind the table's back is found by verify and restored by repair"
    )
    func ftsRowMissing() async throws {
        let dir = try TemporaryDirectory()
        let (database, items, _) = try await fileDatabase(dir)
        let row = try #require(try await items.fetch(id: 7))
        // Raw FTS5 command: drops row 7's terms from the index, the table keeps the row.
        try await database.execute(
            "INSERT INTO items_fts(items_fts, rowid, content) VALUES ('delete', ?, ?)",
            bindings: [7, .text(row.content)])
        #expect(try await items.search(Query().matching("\"row 7 \"")).isEmpty)
        let report = try await database.verify()
        #expect(!report.isHealthy)
        #expect(
            report.problems.contains { $0.hasPrefix("items: text index") }, "\(report.problems)")
        let result = try await database.repair()
        #expect(result.after.isHealthy, "\(result.after.problems)")
        #expect(
            result.actions.contains { $0.hasPrefix("items: rebuilt its derived indexes") },
            "\(result.actions)")
        #expect(try await items.search(Query().matching("\"row 7\"")).map(\.id) == [7])
    }

    @Test("garbage written into the FTS shadow tables is found by verify and repaired")
    func ftsShadowGarbage() async throws {
        let dir = try TemporaryDirectory()
        let (database, items, _) = try await fileDatabase(dir)
        let before = try await items.search(Query().matching(.typed("word3")).limit(50)).map(\.id)
        try await database.execute(
            "UPDATE items_fts_data SET block = x'0102030405060708' WHERE id > 10")
        try await database.execute("DELETE FROM items_fts_docsize WHERE id IN (1, 2, 3)")
        let report = try await database.verify()
        #expect(!report.isHealthy)
        #expect(
            report.problems.contains {
                $0.contains("text index holds 47 documents, the table 50 rows")
            },
            "\(report.problems)")
        let result = try await database.repair()
        #expect(result.after.isHealthy, "\(result.after.problems)")
        #expect(
            try await items.search(Query().matching(.typed("word3")).limit(50)).map(\.id) == before)
    }

    @Test(
        "a document collection's stale vector (a lost change-log entry) is found bit for bit, and repaired"
    )
    func staleDocumentVector() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("docs.trove"))
        let docs = try await database.documents(
            "docs", schema: DocumentSchema(fields: [.vector("v", dimension: 4)]))
        try await docs.insert(
            (1...20).map { i in Document(id: .int(Int64(i)), ["v": .vector([Float(i), 1, 0, 0])]) })
        _ = try await docs.search(Query().nearest(to: [1, 0, 0, 0], in: "v"))  // loads the index
        let raw = try Connection(path: dir.path("docs.trove"))
        try raw.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        let newest = try raw.scalar("SELECT max(seq) FROM docs_log")!.int64Value!
        let moved: [Float] = [0, 0, 0, 1]
        // Same count, other values: a count check cannot see it.
        try raw.execute(
            "UPDATE docs SET v = ? WHERE id = 7", [.blob(moved.withUnsafeBytes { Array($0) })])
        try raw.execute("DELETE FROM docs_log WHERE seq > ?", [.integer(newest)])
        let report = try await database.verify()
        #expect(
            report.problems.contains {
                $0.contains(
                    "vector(v): vector index disagrees with the table: 0 vectors missing, 1 stale, 0 without a row"
                )
            },
            "\(report.problems)")
        let result = try await database.repair()
        #expect(result.after.isHealthy, "\(result.after.problems)")
        #expect(
            try await docs.search(Query().nearest(to: moved, in: "v").limit(1)).first?.record.id
                == 7)
    }

    @Test(
        "a lost change-log entry leaves a stale vector; verify finds it, repair reloads every connection"
    )
    func staleVectorIndex() async throws {
        let dir = try TemporaryDirectory()
        let (database, items, path) = try await fileDatabase(dir)
        // A second process's view of the same file, with its index loaded.
        let other = try await SearchCollection(named: "items", in: Database(path: path))
        _ = try await items.search(vector: [1, 0, 0, 0])
        _ = try await other.search(vector: [1, 0, 0, 0])
        // Someone changes row 5's vector with raw SQL and the log entry is lost (damage).
        let moved: [Float] = [0, 0, 0, 1]
        let blob = moved.withUnsafeBytes { Array($0) }
        let raw = try Connection(path: path)
        try raw.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        let newest = try raw.scalar("SELECT max(seq) FROM items_log")!.int64Value!
        try raw.execute("UPDATE items SET embedding = ? WHERE id = 5", [.blob(blob)])
        // (Two entries: the update and the version trigger's raise of _version.)
        try raw.execute("DELETE FROM items_log WHERE seq > ?", [.integer(newest)])
        let report = try await database.verify()
        #expect(
            report.problems.contains {
                $0.contains("vector index disagrees with the table: 0 vectors missing, 1 stale")
            },
            "\(report.problems)")
        #expect(try await other.database.verify().isHealthy == false)
        let result = try await database.repair()
        #expect(result.after.isHealthy, "\(result.after.problems)")
        // This connection and the other one both answer from the table now.
        #expect(try await items.search(vector: moved, limit: 1).first?.id == 5)
        #expect(try await other.search(vector: moved, limit: 1).first?.id == 5)
        #expect(try await other.database.verify().isHealthy)
    }

    @Test(
        "a row deleted while its log entry is lost leaves a vector without a row; found and repaired"
    )
    func orphanVector() async throws {
        let dir = try TemporaryDirectory()
        let (database, items, path) = try await fileDatabase(dir)
        _ = try await items.search(vector: [1, 0, 0, 0])
        let raw = try Connection(path: path)
        try raw.registerTroveTokenizer()  // the default full-text index uses Trove's tokenizer
        try raw.execute("DELETE FROM items WHERE id = 9")
        try raw.execute("DELETE FROM items_log WHERE seq = (SELECT max(seq) FROM items_log)")
        let report = try await database.verify()
        #expect(report.problems.contains { $0.contains("1 without a row") }, "\(report.problems)")
        #expect(try await database.repair().after.isHealthy)
        #expect(try await items.search(vector: [1, 0, 0, 0], limit: 100).count == 49)
    }

    @Test("a change-log floor above the log is reported and repaired")
    func logFloorAboveLog() async throws {
        let dir = try TemporaryDirectory()
        let (database, items, _) = try await fileDatabase(dir)
        try await database.execute(
            "INSERT INTO trove_meta(key, value) VALUES ('log_floor.items', '1000000')")
        let report = try await database.verify()
        #expect(
            report.problems.contains { $0.contains("floor 1000000 is above") }, "\(report.problems)"
        )
        let result = try await database.repair()
        #expect(result.after.isHealthy, "\(result.after.problems)")
        #expect(try await items.search(vector: [1, 0, 0, 0], limit: 100).count == 50)
    }

    @Test("verify works on a read-only database; repair there is a typed readOnly error")
    func readOnly() async throws {
        let dir = try TemporaryDirectory()
        let (database, _, path) = try await fileDatabase(dir)
        try await database.checkpoint()
        let reader = try Database(path: path, readOnly: true)
        let report = try await reader.verify()
        #expect(report.isHealthy, "\(report.problems)")
        await expectError(
            SQLiteError.self, { _ = try await reader.repair() }, matches: { $0.code == .readOnly })
    }

    @Test(
        "verify on a file with damaged table pages reports it (or fails typed); repair says the tables need a backup"
    )
    func damagedTablePages() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("damaged.trove")
        do {
            let database = try Database(path: path)
            let items = try await SearchCollection("items", in: database, dimension: 64)
            var rng = SeededGenerator(seed: 11)
            try await items.insert(
                (1...Int64(400)).map {
                    VectorEntry(
                        id: .int(Int64($0)),
                        content: "row \($0) " + String(repeating: "filler ", count: 20),
                        vector: rng.vector(dimension: 64))
                })
            try await database.checkpoint()
        }
        // Overwrite a run of pages in the middle of the file with garbage (not the header page).
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let start = bytes.count / 2 / 4096 * 4096
        var rng = SeededGenerator(seed: 12)
        for i in start..<min(bytes.count, start + 3 * 4096) {
            bytes[i] = UInt8.random(in: 0...255, using: &rng)
        }
        try bytes.write(to: URL(fileURLWithPath: path))
        do {
            let database = try Database(path: path)
            let report = try await database.verify()
            #expect(!report.isHealthy)
            #expect(report.integrity != ["ok"], "integrity_check did not notice: \(report)")
            let result = try await database.repair()
            #expect(
                result.actions.contains { $0.contains("restore a backup") }
                    || !result.after.isHealthy)
        } catch let error as SQLiteError {
            #expect(error.code == .corrupt || error.code == .notADatabase, "\(error)")
        }
    }
}
