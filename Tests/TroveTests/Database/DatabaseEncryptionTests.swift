import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Encryption at rest through the store: every path that writes (rows, FTS5, metadata, vectors,
/// the HNSW snapshot, overflow pages, VACUUM, background checkpoints and merges) and reading back.
@Suite("Database: encryption at rest", .serialized)
struct DatabaseEncryptionTests {
    static let key = Encryption.key(Data((0..<32).map { UInt8(($0 * 7 + 3) & 0xff) }))

    static func contains(_ path: String, _ needle: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.range(of: Data(needle.utf8)) != nil
    }

    /// Every file SQLite may have left next to `path`.
    static func files(_ path: String) -> [String] {
        [path, path + "-wal", path + "-journal", path + "-shm"].filter {
            FileManager.default.fileExists(atPath: $0)
        }
    }

    @Test(
        "sentinels through rows, FTS5, metadata, vectors, HNSW snapshot, overflow pages and VACUUM never reach the files"
    )
    func sentinelsEverywhere() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.trove")
        var rng = SeededGenerator(seed: 1414)
        let dimension = 16
        let sentinels = ["SENTINELROW", "SENTINELMETA", "SENTINELSRC", "SENTINELBIG"]
        var probe: [Float] = []
        do {
            let database = try Database(path: path, encryption: Self.key)
            #expect(database.encryption?.keyDerivation == .rawKey)
            let notes = try await SearchCollection(
                "notes", in: database,
                configuration: CollectionConfiguration(dimension: dimension, index: .hnsw()))
            var entries: [VectorEntry] = []
            for id in 1...300 {
                let vector = rng.unitVector(dimension: dimension)
                if id == 42 { probe = vector }
                entries.append(
                    VectorEntry(
                        id: .int(Int64(id)), content: "SENTINELROW \(id) groceries oat milk",
                        source: "SENTINELSRC",
                        metadata: "{\"tag\":\"SENTINELMETA\",\"n\":\(id)}", vector: vector))
            }
            try await notes.insert(entries)
            // A 200 KB row: overflow pages.
            try await notes.insert(
                VectorEntry(
                    id: 1000,
                    content: "SENTINELBIG " + String(repeating: "payload ", count: 25_000),
                    source: "big",
                    vector: rng.unitVector(dimension: dimension)))
            _ = try await notes.saveIndex()
            try await database.mergeTextIndexes()
            // Files mid-life, WAL still holding pages.
            for file in Self.files(path) {
                for sentinel in sentinels {
                    #expect(!Self.contains(file, sentinel), "\(sentinel) in \(file)")
                }
            }
            try await database.execute(script: "VACUUM")
            try await database.checkpoint()
            #expect(
                try await notes.search(Query().matching(.typed("groceries")).limit(5)).count == 5)
        }
        for file in Self.files(path) {
            // ("SQLite format 3" stays: page 1's first 100 bytes are readable by design.)
            for sentinel in sentinels + ["groceries", "CREATE TABLE", "trove_meta"] {
                #expect(!Self.contains(file, sentinel), "\(sentinel) in \(file)")
            }
        }
        // Reopened: text, vector (HNSW snapshot loaded) and exact search, verify.
        let database = try Database(path: path, encryption: Self.key)
        let notes = try await SearchCollection(named: "notes", in: database)
        #expect(try await notes.count() == 301)
        #expect(try await notes.search(Query().matching(.typed("oat milk")).limit(3)).count == 3)
        #expect(try await notes.search(vector: probe, limit: 1).first?.id == 42)
        #expect(
            try await notes.search(Query().nearest(to: probe, in: "embedding").limit(1).exact(true))
                .first?.id == 42)
        #expect(try await notes.fetch(id: 1000)?.content.count == 12 + 8 * 25_000)
        #expect(try await database.verify().isHealthy)
    }

    @Test("wrong key and missing key are typed errors; plaintext databases keep working unchanged")
    func wrongKeyThroughDatabase() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.trove")
        do {
            _ = try await SearchCollection(
                "c", in: Database(path: path, encryption: Self.key), dimension: 4)
        }
        #expect(throws: EncryptionError.wrongKey) {
            _ = try Database(path: path, encryption: .key(Data(repeating: 9, count: 32)))
        }
        #expect(throws: EncryptionError.keyRequired(path: path)) { _ = try Database(path: path) }
        let plain = dir.path("p.trove")
        let database = try Database(path: plain)
        #expect(database.encryption == nil)
        _ = try await SearchCollection("c", in: database, dimension: 4)
        #expect(Self.contains(plain, "SQLite format 3"))
    }

    @Test("read-only opens and a second Database on the same encrypted file see the writer's rows")
    func readersOnEncryptedFile() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.trove")
        let writer = try Database(path: path, encryption: Self.key)
        let c = try await SearchCollection("c", in: writer, dimension: 4)
        try await c.insert(
            (1...30).map {
                VectorEntry(
                    id: .int(Int64($0)), content: "row \($0)", vector: [1, 0, 0, Float($0)])
            })
        let second = try await SearchCollection(
            named: "c", in: Database(path: path, encryption: Self.key))
        #expect(try await second.count() == 30)
        let reader = try await SearchCollection(
            named: "c", in: Database(path: path, encryption: Self.key, readOnly: true))
        #expect(try await reader.count() == 30)
        try await c.insert(VectorEntry(id: 31, content: "row 31", vector: [1, 0, 0, 31]))
        #expect(try await reader.count() == 31)
        #expect(try await reader.search(vector: [1, 0, 0, 31], limit: 1).first?.id == 31)
        await #expect(throws: SQLiteError.self) {
            try await reader.insert(VectorEntry(id: 32, content: "no", vector: [1, 0, 0, 32]))
        }
    }

    @Test("a page changed on disk surfaces from a query as a typed page failure")
    func tamperedPageThroughDatabase() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.trove")
        do {
            let database = try Database(path: path, encryption: Self.key)
            let c = try await SearchCollection("c", in: database, dimension: 4)
            try await c.insert(
                (1...400).map {
                    VectorEntry(
                        id: .int(Int64($0)), content: "row \($0)", vector: [1, 2, 3, Float($0)])
                })
            try await database.checkpoint()
        }
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        // one of the last pages (16 KB pages)
        let page = EncryptionInfo.pageCount(fileSize: bytes.count, pageSize: 16384) - 1
        bytes[EncryptionInfo.fileOffset(ofPage: page, pageSize: 16384) + 777] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            let database = try Database(path: path, encryption: Self.key)
            _ = try await database.verify()
            _ = try await database.query("SELECT count(*), sum(length(content)) FROM c")
            let c = try await SearchCollection(named: "c", in: database)
            _ = try await c.search(
                Query().nearest(to: [1, 2, 3, 4], in: "embedding").limit(400).exact(true))
            Issue.record("no error for a changed page")
        } catch let error as SQLiteError {
            #expect(
                error.encryptionFailure
                    == .pageAuthenticationFailed(file: .database, page: UInt32(page)), "\(error)")
        }
    }

    @Test("change of passphrase and of data key through Database; encrypted and plaintext copies")
    func keyOperations() async throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("plain.trove")
        do {
            let c = try await SearchCollection("c", in: Database(path: plain), dimension: 4)
            try await c.insert(
                (1...50).map {
                    VectorEntry(
                        id: .int(Int64($0)), content: "SENTINELCOPY \($0)",
                        vector: [1, 0, 0, Float($0)])
                })
        }
        let encrypted = dir.path("enc.trove")
        try Database.encryptedCopy(of: plain, to: encrypted, encryption: .passphrase("first"))
        #expect(!Self.contains(encrypted, "SENTINELCOPY"))
        try Database.changePassphrase(
            path: encrypted, from: .passphrase("first"), to: .passphrase("second"))
        #expect(throws: EncryptionError.wrongKey) {
            _ = try Database(path: encrypted, encryption: .passphrase("first"))
        }
        try Database.changeDataKey(path: encrypted, from: .passphrase("second"), to: Self.key)
        let database = try Database(path: encrypted, encryption: Self.key)
        let c = try await SearchCollection(named: "c", in: database)
        #expect(try await c.count() == 50)
        #expect(try await c.search(Query().matching(.typed("SENTINELCOPY")).limit(100)).count == 50)
        #expect(try await database.verify().isHealthy)
        let exported = dir.path("exported.trove")
        try Database.plaintextCopy(of: encrypted, encryption: Self.key, to: exported)
        #expect(try await SearchCollection(named: "c", in: Database(path: exported)).count() == 50)
    }
}

/// Files written by each encrypted format; every later version must keep opening them.
@Suite("Encryption: golden fixture")
struct EncryptionFixtureTests {
    /// Tests/TroveTests/Fixtures/encrypted-v1.trove and encrypted-v1-passphrase.trove, written by
    /// format 1 (before the page map) with this key and the passphrase below, and
    /// encrypted-v2.trove, written by `writeFixture` (format 2) with this key.
    static let key = Encryption.key(Data((0..<32).map { UInt8($0) }))
    static let passphraseFixturePassphrase = "trove fixture passphrase"

    static var fixtures: URL {
        TestPaths.fixtures
    }

    static func copy(_ name: String, to dir: TemporaryDirectory) throws -> String {
        let path = dir.path(name)
        try FileManager.default.copyItem(
            atPath: fixtures.appendingPathComponent(name).path, toPath: path)
        return path
    }

    @Test("encrypted-v1.trove (raw key) opens, its rows and searches match, and it stays writable")
    func rawKeyFixture() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.copy("encrypted-v1.trove", to: dir)
        #expect(try EncryptionInfo.of(path: path)?.formatVersion == 1)
        let database = try Database(path: path, encryption: Self.key)
        let notes = try await SearchCollection(named: "notes", in: database)
        #expect(try await notes.count() == 20)
        #expect(try await notes.fetch(id: 7)?.content == "fixture note 7: buy oat milk")
        #expect(try await notes.search(Query().matching(.typed("note 7")).limit(1)).first?.id == 7)
        #expect(try await notes.search(vector: [1, 0, 0, 7], limit: 1).first?.id == 7)
        #expect(try await database.verify().isHealthy)
        try await notes.insert(VectorEntry(id: 21, content: "added later", vector: [1, 0, 0, 21]))
        #expect(try await notes.count() == 21)
    }

    @Test(
        "encrypted-v1-passphrase.trove opens with its passphrase (PBKDF2 parameters read from the file)"
    )
    func passphraseFixture() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.copy("encrypted-v1-passphrase.trove", to: dir)
        #expect(try EncryptionInfo.of(path: path)?.iterations == 256_000)
        let database = try Database(
            path: path, encryption: .passphrase(Self.passphraseFixturePassphrase))
        #expect(try await SearchCollection(named: "notes", in: database).count() == 20)
        #expect(throws: EncryptionError.wrongKey) {
            _ = try Database(path: path, encryption: .passphrase("nope"))
        }
    }

    @Test(
        "encrypted-v2.trove (page map) opens, matches, stays writable, and refuses an older copy of a page"
    )
    func pageMapFixture() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.copy("encrypted-v2.trove", to: dir)
        #expect(try EncryptionInfo.of(path: path)?.formatVersion == 2)
        let original = [UInt8](FileManager.default.contents(atPath: path)!)
        do {
            let database = try Database(path: path, encryption: Self.key)
            let notes = try await SearchCollection(named: "notes", in: database)
            #expect(try await notes.count() == 20)
            #expect(try await notes.fetch(id: 7)?.content == "fixture note 7: buy oat milk")
            #expect(try await notes.search(vector: [1, 0, 0, 7], limit: 1).first?.id == 7)
            #expect(try await database.verify().isHealthy)
            try await notes.update(
                VectorEntry(id: 7, content: "fixture note 7: bought", vector: [1, 0, 0, 7]))
            try await database.checkpoint()
        }
        // The fixture's own (older, validly sealed) pages put back over the updated ones.
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        let pages = EncryptionInfo.pageCount(
            fileSize: min(bytes.count, original.count), pageSize: 16384)
        var replayed = 0
        for page in 2...pages {
            let o = EncryptionInfo.fileOffset(ofPage: page, pageSize: 16384)
            if bytes[o..<(o + 16384)] != original[o..<(o + 16384)] {
                bytes.replaceSubrange(o..<(o + 16384), with: original[o..<(o + 16384)])
                replayed += 1
            }
        }
        #expect(replayed > 0)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        for suffix in ["-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
        do {
            let database = try Database(path: path, encryption: Self.key)
            _ = try await database.query("SELECT count(*), sum(length(content)) FROM notes")
            _ = try await database.verify()
            Issue.record("older pages were read")
        } catch let error as SQLiteError {
            guard case .stalePage? = error.encryptionFailure else {
                Issue.record("not a stale page: \(error)")
                return
            }
        }
    }

    @Test("a change of data key rewrites a format-1 file as format 2")
    func upgradeByRekey() async throws {
        let dir = try TemporaryDirectory()
        let path = try Self.copy("encrypted-v1.trove", to: dir)
        try Database.changeDataKey(path: path, from: Self.key, to: Self.key)
        #expect(try EncryptionInfo.of(path: path)?.formatVersion == 2)
        let database = try Database(path: path, encryption: Self.key)
        #expect(try await SearchCollection(named: "notes", in: database).count() == 20)
        #expect(try await database.verify().isHealthy)
    }

    /// Regenerates the format-2 fixture (run by hand with TROVE_WRITE_FIXTURES=1; never in CI).
    /// The format-1 fixtures can't be written again: this code writes format 2.
    @Test(
        "write fixtures",
        .enabled(if: ProcessInfo.processInfo.environment["TROVE_WRITE_FIXTURES"] == "1"))
    func writeFixture() async throws {
        for (name, encryption) in [("encrypted-v2.trove", Self.key)] {
            let path = Self.fixtures.appendingPathComponent(name).path
            try? FileManager.default.removeItem(atPath: path)
            do {
                let database = try Database(path: path, encryption: encryption)
                let notes = try await SearchCollection("notes", in: database, dimension: 4)
                try await notes.insert(
                    (1...20).map {
                        VectorEntry(
                            id: .int(Int64($0)), content: "fixture note \($0): buy oat milk",
                            vector: [1, 0, 0, Float($0)])
                    })
                try await database.mergeTextIndexes()
                try await database.checkpoint()
                try await database.execute(
                    script: "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE")
            }
            for suffix in ["-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: path + suffix)
            }
        }
    }
}
