import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveSQLite
import TroveTestSupport

/// Files that are not what they should be: each fails with a typed error and is left as it was.
@Suite("Bad files: typed errors, files left as they were", .serialized)
struct BadFileTests {
    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// A file database with 20 seeded rows, checkpointed and closed.
    func seededFile(_ dir: TemporaryDirectory, name: String = "store.trove") async throws -> (
        path: String, snapshot: CollectionSnapshot
    ) {
        let path = dir.path(name)
        let database = try Database(path: path)
        let collection = try await seededCollection(database)
        let snapshot = try await CollectionSnapshot(collection)
        try await database.checkpoint()
        return (path, snapshot)
    }

    @Test("a file that is not a database is SQLiteError notADatabase, and is not overwritten")
    func notADatabase() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.txt")
        var rng = SeededGenerator(seed: 1)
        let original = Data((0..<50_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        try original.write(to: URL(fileURLWithPath: path))
        await expectError(
            SQLiteError.self, { _ = try Database(path: path) },
            matches: { $0.code == .notADatabase })
        #expect(try bytes(path) == original)
        // A text file too.
        let text = Data("# My notes\nbuy oat milk\n".utf8)
        try text.write(to: URL(fileURLWithPath: path))
        await expectError(
            SQLiteError.self, { _ = try Database(path: path) },
            matches: { $0.code == .notADatabase })
        #expect(try bytes(path) == text)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test(
        "a truncated database fails with SQLiteError corrupt when read, never a crash or wrong answers",
        arguments: [0.9, 0.5, 0.25])
    func truncatedDatabase(_ fraction: Double) async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("big.trove")
        do {
            // Enough rows that the table spans many pages.
            let database = try Database(path: path)
            let collection = try await SearchCollection("items", in: database, dimension: 64)
            var rng = SeededGenerator(seed: 3)
            try await collection.insert(
                (1...Int64(600)).map {
                    VectorEntry(
                        id: .int(Int64($0)),
                        content: "row \($0) " + String(repeating: "filler ", count: 20),
                        vector: rng.vector(dimension: 64))
                })
            try await database.checkpoint()
        }
        let full = try bytes(path)
        let truncated = full.prefix(Int(Double(full.count) * fraction) / 4096 * 4096)
        try truncated.write(to: URL(fileURLWithPath: path))
        // Opening may succeed (page 1 holds the schema); reading the missing pages must fail typed.
        var failure: SQLiteError?
        do {
            let database = try Database(path: path)
            let collection = try await SearchCollection(named: "items", in: database)
            let count = try await collection.count()
            _ = try await collection.search(vector: [Float](repeating: 0.5, count: 64), limit: 5)
            _ = try await collection.search(Query().matching(.typed("row")).limit(5))
            let check = try await database.query("PRAGMA integrity_check").compactMap {
                $0.string(at: 0)
            }
            // If every read succeeded the answers must still be complete, and SQLite must say so.
            #expect(
                count == 600 && check == ["ok"],
                "truncated file read without an error: count \(count), \(check)")
        } catch let error as SQLiteError {
            failure = error
        }
        #expect(
            failure?.code == .corrupt || failure?.code == .notADatabase,
            "got \(String(describing: failure))")
    }

    @Test("a database from a newer format version is unsupportedFormatVersion and is not changed")
    func newerFormatVersion() async throws {
        let dir = try TemporaryDirectory()
        let (path, _) = try await seededFile(dir)
        do {
            let connection = try Connection(path: path)
            try connection.execute(
                "UPDATE trove_meta SET value = '99' WHERE key = 'format_version'")
            try connection.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try bytes(path)
        await expectError(
            TroveError.self, { _ = try Database(path: path) },
            matches: { if case .unsupportedFormatVersion(99, _) = $0 { true } else { false } })
        await expectError(
            TroveError.self, { _ = try Database(path: path, readOnly: true) },
            matches: { if case .unsupportedFormatVersion(99, _) = $0 { true } else { false } })
        #expect(try bytes(path) == before)
    }

    @Test(
        "a collection whose stored configuration is unreadable is schemaMismatch, nothing changed")
    func unreadableConfiguration() async throws {
        let dir = try TemporaryDirectory()
        let (path, snapshot) = try await seededFile(dir)
        do {
            let connection = try Connection(path: path)
            try connection.execute(
                "UPDATE trove_meta SET value = '{\"dimension\": \"four\"}' WHERE key = 'collection.items'"
            )
        }
        let database = try Database(path: path)
        await expectError(
            TroveError.self, { _ = try await SearchCollection(named: "items", in: database) },
            matches: { if case .schemaMismatch = $0 { true } else { false } })
        #expect(
            try await database.query("SELECT count(*) FROM items")[0].int(at: 0) == snapshot.count)
    }

    @Test(
        "a read-only database file: reads work, writes fail with SQLiteError readOnly, file unchanged"
    )
    func readOnlyFile() async throws {
        let dir = try TemporaryDirectory()
        let (path, snapshot) = try await seededFile(dir)
        // The folder stays writable (for the -wal and -shm files); only the database file is not.
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o777], ofItemAtPath: dir.url.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        let before = try bytes(path)
        // The tests run as root, which ignores file modes, so an unprivileged child does the work.
        let lines = try CrashChild.run(["probe", path])
        #expect(lines.contains("open ok"), "\(lines)")
        #expect(lines.contains("count \(snapshot.count)"), "\(lines)")
        #expect(
            lines.contains("search \(snapshot.vectorHits.prefix(3).map { $0 })")
                || lines.contains { $0.hasPrefix("search [") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("text [") }, "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("error SQLiteError 8 ") },
            "write on a read-only file: \(lines)")
        #expect(!lines.contains("insert ok"))
        #expect(try bytes(path) == before)
        // Read-only mode in-process behaves the same without changing permissions.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let database = try Database(path: path, readOnly: true)
        let items = try await SearchCollection(named: "items", in: database)
        #expect(try await items.count() == snapshot.count)
        await expectError(
            SQLiteError.self,
            { try await items.insert(VectorEntry(id: 999, content: "x", vector: [1, 0, 0, 0])) },
            matches: { $0.code == .readOnly })
        #expect(try await CollectionSnapshot(items) == snapshot)
    }

    @Test("a database in a read-only folder: a typed SQLiteError, never a crash; data unchanged")
    func readOnlyFolder() async throws {
        let dir = try TemporaryDirectory()
        let (path, snapshot) = try await seededFile(dir)
        let before = try bytes(path)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o555], ofItemAtPath: dir.url.path)
        defer {
            try? FileManager.default.setAttributes(
                [.posixPermissions: 0o755], ofItemAtPath: dir.url.path)
        }
        let lines = try CrashChild.run(["probe", path])
        // WAL needs the -wal and -shm files next to the database: SQLite reports cantOpen (14) or
        // readOnly (8) when it cannot create them; either way, as a typed error.
        let failed = lines.first {
            $0.hasPrefix("open error") || $0.hasPrefix("error") || $0.hasPrefix("E ")
        }
        if let failed {
            #expect(
                failed.contains("SQLiteError 14 ") || failed.contains("SQLiteError 8 "), "\(lines)")
        } else {
            #expect(lines.contains("count \(snapshot.count)"), "\(lines)")
        }
        #expect(!lines.contains("insert ok"), "\(lines)")
        #expect(try bytes(path) == before)
    }

    @Test(
        "a full disk (max_page_count) is SQLiteError full; the batch is not written, earlier data intact"
    )
    func fullDisk() async throws {
        let dir = try TemporaryDirectory()
        let (path, _) = try await seededFile(dir)
        let database = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: database)
        let snapshot = try await CollectionSnapshot(items)
        let pages = try await database.query("PRAGMA page_count")[0].int(at: 0)!
        _ = try await database.query("PRAGMA max_page_count = \(pages + 2)")
        var rng = SeededGenerator(seed: 5)
        let batch = (100...Int64(400)).map {
            VectorEntry(
                id: .int(Int64($0)), content: String(repeating: "big row \($0) ", count: 30),
                vector: rng.vector(dimension: 4))
        }
        await expectError(
            SQLiteError.self, { try await items.insert(batch) }, matches: { $0.code == .full })
        #expect(try await CollectionSnapshot(items) == snapshot)
        // Single rows that fit still go in; the index and the table still agree afterwards.
        _ = try await database.query("PRAGMA max_page_count = 1000000")
        try await items.insert(Array(batch.prefix(10)))
        #expect(try await items.count() == snapshot.count + 10)
        #expect(try await items.search(vector: batch[3].vector, limit: 1).first?.id == batch[3].id)
        // And after reopening, nothing of the failed batch is there.
        let reopened = try await SearchCollection(named: "items", in: Database(path: path))
        #expect(try await reopened.count() == snapshot.count + 10)
        #expect(try await reopened.contains(id: 200) == false)
    }

    @Test(
        "a model folder with a truncated weights file is EmbeddingError invalidSafeTensors",
        .enabled(
            if: FileManager.default.fileExists(
                atPath: BERTEmbedder.defaultModelDirectory.appendingPathComponent(
                    "model.safetensors"
                ).path)),
        arguments: [0, 7, 8, 4096, 1_000_000, -1])
    func truncatedWeights(_ keep: Int) async throws {
        let model = BERTEmbedder.defaultModelDirectory
        let dir = try TemporaryDirectory()
        let copy = dir.url.appendingPathComponent("all-MiniLM-L6-v2")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: model.path)
        where name != "model.safetensors" {
            try FileManager.default.createSymbolicLink(
                at: copy.appendingPathComponent(name),
                withDestinationURL: model.appendingPathComponent(name))
        }
        let weights = model.appendingPathComponent("model.safetensors")
        let handle = try FileHandle(forReadingFrom: weights)
        let total = Int(try handle.seekToEnd())
        try handle.seek(toOffset: 0)
        // keep = -1: everything but the last byte.
        let data = try handle.read(upToCount: keep < 0 ? total - 1 : keep) ?? Data()
        try handle.close()
        try data.write(to: copy.appendingPathComponent("model.safetensors"))
        await expectError(
            EmbeddingError.self, { _ = try BERTEmbedder(modelDirectory: copy) },
            matches: { if case .invalidSafeTensors = $0 { true } else { false } })
    }
}
