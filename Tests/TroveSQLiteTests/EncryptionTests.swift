import CTroveCipher
import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

/// Helpers shared by the encryption suites.
enum EncryptedFiles {
    /// A fixed raw key (tests only).
    static let key = Encryption.key(Data((0..<32).map { UInt8($0) }))
    static let otherKey = Encryption.key(Data((0..<32).map { UInt8(255 - $0) }))

    static func bytes(_ path: String) -> [UInt8] {
        (FileManager.default.contents(atPath: path)).map { [UInt8]($0) } ?? []
    }

    /// Whether `needle` occurs anywhere in the file at `path`.
    static func contains(_ path: String, _ needle: String) -> Bool {
        let haystack = bytes(path)
        let n = [UInt8](needle.utf8)
        guard haystack.count >= n.count, let first = n.first else { return false }
        var i = 0
        while i <= haystack.count - n.count {
            if haystack[i] == first && Array(haystack[i..<(i + n.count)]) == n { return true }
            i += 1
        }
        return false
    }

    static func modify(_ path: String, at offset: Int, _ change: (inout [UInt8]) -> Void) throws {
        var data = bytes(path)
        change(&data)
        try Data(data).write(to: URL(fileURLWithPath: path))
        _ = offset
    }

    /// Opens an encrypted connection.
    static func open(
        _ path: String, _ encryption: Encryption = key, walMode: Bool = true, readOnly: Bool = false
    ) throws -> Connection {
        let key = try EncryptionKey(path: path, encryption: encryption, create: !readOnly)
        return try Connection(
            .file(path),
            options: .init(
                readOnly: readOnly, walMode: walMode, newFilePageSize: 4096, encryption: key))
    }

    /// The encryption failure behind `error`, if any.
    static func failure(_ error: any Error) -> EncryptionError? {
        if let e = error as? EncryptionError { return e }
        return (error as? SQLiteError)?.encryptionFailure
    }

    /// Physical offset of SQLite page `page` (1-based) in an encrypted file with 4 KB pages.
    static func offset(ofPage page: Int, pageSize: Int = 4096) -> Int {
        EncryptionInfo.fileOffset(ofPage: page, pageSize: pageSize)
    }

    /// SQLite pages in the encrypted file at `path` (4 KB pages).
    static func pageCount(_ path: String, pageSize: Int = 4096) -> Int {
        EncryptionInfo.pageCount(fileSize: bytes(path).count, pageSize: pageSize)
    }

    static func fill(_ c: Connection, rows: Int, sentinel: String) throws {
        try c.execute(script: "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, body TEXT)")
        try c.transaction {
            for i in 0..<rows {
                try c.execute(
                    "INSERT INTO t(body) VALUES (?)",
                    [.text("\(sentinel) row \(i) " + String(repeating: "x", count: 200))])
            }
        }
    }
}

@Suite("Encryption: pages and files", .serialized)
struct EncryptionTests {
    @Test("rows written through an encrypted connection read back; no plaintext in the file or WAL")
    func roundTrip() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let sentinel = "SENTINEL-ROUNDTRIP-7731"
        do {
            let c = try EncryptedFiles.open(path)
            try c.execute(script: "PRAGMA wal_autocheckpoint = 0")
            try EncryptedFiles.fill(c, rows: 500, sentinel: sentinel)
            #expect(
                try c.scalar("SELECT count(*) FROM t WHERE body LIKE ?", [.text("\(sentinel)%")])
                    == .integer(500))
            // Still in the WAL (no checkpoint yet): neither file may show the text.
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(!EncryptedFiles.contains(path + "-wal", sentinel))
            #expect(!EncryptedFiles.contains(path, sentinel))
            #expect(c.isEncrypted)
        }
        #expect(!EncryptedFiles.contains(path, sentinel))
        #expect(!EncryptedFiles.contains(path, "CREATE TABLE"))
        #expect(Array(EncryptedFiles.bytes(path).prefix(8)) == Array("TroveEnc".utf8))
        let again = try EncryptedFiles.open(path)
        #expect(try again.scalar("SELECT count(*) FROM t") == .integer(500))
        #expect(try again.scalar("PRAGMA integrity_check") == .text("ok"))
        #expect(try again.scalar("PRAGMA journal_mode") == .text("wal"))
        let info = try #require(try EncryptionInfo.of(path: path))
        #expect(info.keyDerivation == .rawKey)
    }

    @Test(
        "FTS5, R*Tree and JSON work on an encrypted connection, and their text stays off the disk")
    func extensions() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let c = try EncryptedFiles.open(path)
        try c.execute(
            script: """
                CREATE VIRTUAL TABLE docs USING fts5(body);
                INSERT INTO docs(body) VALUES ('SENTINELFTS oat milk'), ('bicycle repair');
                CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1, y0, y1);
                INSERT INTO boxes VALUES (1, 0, 10, 0, 10), (2, 20, 30, 20, 30);
                CREATE TABLE j(doc TEXT CHECK (json_valid(doc)));
                INSERT INTO j VALUES ('{"tag":"SENTINELJSON","n":3}');
                """)
        #expect(try c.scalar("SELECT rowid FROM docs WHERE docs MATCH 'oat'") == .integer(1))
        #expect(try c.scalar("SELECT id FROM boxes WHERE x0 >= 15 AND x1 <= 35") == .integer(2))
        #expect(try c.scalar("SELECT json_extract(doc, '$.n') FROM j") == .integer(3))
        try c.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        for file in [path, path + "-wal"] {
            #expect(!EncryptedFiles.contains(file, "SENTINELFTS"))
            #expect(!EncryptedFiles.contains(file, "SENTINELJSON"))
        }
    }

    @Test(
        "a transaction larger than the page cache (pages spilled to the WAL, then rewritten in place)"
    )
    func spilledTransaction() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let c = try EncryptedFiles.open(path)
        try c.execute(
            script: """
                PRAGMA cache_size = 20;
                CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT, n INTEGER);
                CREATE INDEX t_n ON t(n);
                BEGIN;
                WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000)
                INSERT INTO t SELECT x, printf('row %d %s', x, hex(randomblob(100))), abs(random()) % 1000 FROM c;
                COMMIT;
                PRAGMA wal_checkpoint(TRUNCATE);
                """)
        #expect(try c.scalar("SELECT count(*) FROM t") == .integer(5000))
        #expect(try EncryptedFiles.open(path).scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("a wrong key is a typed wrongKey error and leaves the file byte-for-byte unchanged")
    func wrongKey() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do { try EncryptedFiles.fill(try EncryptedFiles.open(path), rows: 10, sentinel: "S") }
        let before = EncryptedFiles.bytes(path)
        #expect(throws: EncryptionError.wrongKey) {
            _ = try EncryptedFiles.open(path, EncryptedFiles.otherKey)
        }
        #expect(throws: EncryptionError.wrongKey) {
            _ = try EncryptedFiles.open(path, .passphrase("guess"))
        }
        #expect(throws: EncryptionError.invalidKey(reason: "a raw key is 32 bytes, not 3")) {
            _ = try EncryptedFiles.open(path, .key(Data([1, 2, 3])))
        }
        #expect(EncryptedFiles.bytes(path) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("opening an encrypted file without a key, or a plaintext file with one, is a typed error")
    func keyRequiredAndNotEncrypted() throws {
        let dir = try TemporaryDirectory()
        let encrypted = dir.path("e.sqlite")
        do { try EncryptedFiles.fill(try EncryptedFiles.open(encrypted), rows: 3, sentinel: "S") }
        #expect(throws: EncryptionError.keyRequired(path: encrypted)) {
            _ = try Connection(path: encrypted)
        }
        let plain = dir.path("p.sqlite")
        do { try Connection(path: plain).execute(script: "CREATE TABLE t(x)") }
        #expect(throws: EncryptionError.notEncrypted(path: plain)) {
            _ = try EncryptedFiles.open(plain)
        }
        #expect(try EncryptionInfo.of(path: plain) == nil)
    }

    @Test(
        "one changed byte in any page is reported as that page's authentication failure",
        arguments: [1, 2, 3, 5])
    func tamperedByte(page: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do { try EncryptedFiles.fill(try EncryptedFiles.open(path), rows: 60, sentinel: "S") }
        // Page 1 byte 30 is in its readable (but authenticated) head; elsewhere the ciphertext.
        let offset = EncryptedFiles.offset(ofPage: page) + (page == 1 ? 30 : 1000)
        try EncryptedFiles.modify(path, at: offset) { $0[offset] ^= 0x01 }
        let error = #expect(throws: (any Error).self) {
            let c = try EncryptedFiles.open(path)
            _ = try c.query("SELECT * FROM t")
        }
        #expect(
            EncryptedFiles.failure(try #require(error))
                == .pageAuthenticationFailed(file: .database, page: UInt32(page)))
    }

    @Test("two swapped pages fail authentication")
    func swappedPages() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do { try EncryptedFiles.fill(try EncryptedFiles.open(path), rows: 60, sentinel: "S") }
        let a = EncryptedFiles.offset(ofPage: 2)
        let b = EncryptedFiles.offset(ofPage: 3)
        try EncryptedFiles.modify(path, at: a) { data in
            let pageA = Array(data[a..<(a + 4096)])
            data.replaceSubrange(a..<(a + 4096), with: data[b..<(b + 4096)])
            data.replaceSubrange(b..<(b + 4096), with: pageA)
        }
        let error = #expect(throws: (any Error).self) {
            _ = try EncryptedFiles.open(path).query("SELECT * FROM t")
        }
        let failure = EncryptedFiles.failure(try #require(error))
        #expect(
            failure == .pageAuthenticationFailed(file: .database, page: 2)
                || failure == .pageAuthenticationFailed(file: .database, page: 3))
    }

    @Test("a page from another encrypted file with the same key fails (file identity in the AAD)")
    func pageFromAnotherFile() throws {
        let dir = try TemporaryDirectory()
        let one = dir.path("one.sqlite")
        let two = dir.path("two.sqlite")
        do { try EncryptedFiles.fill(try EncryptedFiles.open(one), rows: 60, sentinel: "S") }
        do { try EncryptedFiles.fill(try EncryptedFiles.open(two), rows: 60, sentinel: "S") }
        let o = EncryptedFiles.offset(ofPage: 2)
        let foreign = Array(EncryptedFiles.bytes(two)[o..<(o + 4096)])
        try EncryptedFiles.modify(one, at: o) { $0.replaceSubrange(o..<(o + 4096), with: foreign) }
        let error = #expect(throws: (any Error).self) {
            _ = try EncryptedFiles.open(one).query("SELECT * FROM t")
        }
        #expect(
            EncryptedFiles.failure(try #require(error))
                == .pageAuthenticationFailed(file: .database, page: 2))
    }

    @Test("a file cut inside a page is an authentication failure; cut at a page boundary, an error")
    func truncation() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do { try EncryptedFiles.fill(try EncryptedFiles.open(path), rows: 200, sentinel: "S") }
        let full = EncryptedFiles.bytes(path)
        let pages = EncryptedFiles.pageCount(path)
        #expect(pages > 6)
        // Inside the last page.
        let cut = EncryptedFiles.offset(ofPage: pages) + 100
        try Data(full[0..<cut]).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: (any Error).self) {
            _ = try EncryptedFiles.open(path).query("SELECT count(*), sum(length(body)) FROM t")
        }
        #expect(
            EncryptedFiles.failure(try #require(error))
                == .pageAuthenticationFailed(file: .database, page: UInt32(pages)))
        // At a page boundary: SQLite sees fewer pages than page 1 records and reports corruption.
        try Data(full[0..<EncryptedFiles.offset(ofPage: pages - 2)]).write(
            to: URL(fileURLWithPath: path))
        let boundary = #expect(throws: SQLiteError.self) {
            let c = try EncryptedFiles.open(path)
            _ = try c.query("SELECT count(*), sum(length(body)) FROM t")
            if try c.scalar("PRAGMA integrity_check") != .text("ok") {
                throw SQLiteError(extendedCode: .corrupt, message: "integrity_check")
            }
        }
        #expect(boundary?.code == .corrupt || boundary?.code == .ioError)
        // Cut inside the key header: the key header itself is damaged.
        try Data(full[0..<100]).write(to: URL(fileURLWithPath: path))
        #expect(
            throws: EncryptionError.corruptHeader(
                path: path, reason: "no intact copy of the key header")
        ) {
            _ = try EncryptedFiles.open(path)
        }
    }

    @Test("a torn key-header copy falls back to the other copy; both damaged is corruptHeader")
    func tornHeader() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do { try EncryptedFiles.fill(try EncryptedFiles.open(path), rows: 5, sentinel: "S") }
        try EncryptedFiles.modify(path, at: 80) { $0[80] ^= 0xff }
        #expect(try EncryptedFiles.open(path).scalar("SELECT count(*) FROM t") == .integer(5))
        try EncryptedFiles.modify(path, at: 512 + 80) { $0[512 + 80] ^= 0xff }
        #expect(
            throws: EncryptionError.corruptHeader(
                path: path, reason: "no intact copy of the key header")
        ) {
            _ = try EncryptedFiles.open(path)
        }
    }

    @Test("a changed WAL frame is reported as a WAL page failure by readers that trust the index")
    func tamperedWALFrame() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let writer = try EncryptedFiles.open(path)
        try writer.execute(script: "PRAGMA wal_autocheckpoint = 0")
        try EncryptedFiles.fill(writer, rows: 30, sentinel: "S")
        let wal = path + "-wal"
        let frames = (EncryptedFiles.bytes(wal).count - 32) / (4096 + 24)
        #expect(frames >= 2)
        // Change a byte in the data of the last frame (the writer keeps the WAL index current).
        let offset = 32 + (frames - 1) * (4096 + 24) + 24 + 500
        let pageNumber = EncryptedFiles.bytes(wal)[(offset - 524)..<(offset - 520)].reduce(
            UInt32(0)
        ) {
            $0 << 8 | UInt32($1)
        }
        try EncryptedFiles.modify(wal, at: offset) { $0[offset] ^= 0x80 }
        let reader = try EncryptedFiles.open(path)
        let error = #expect(throws: (any Error).self) {
            _ = try reader.query("SELECT * FROM t")
            _ = try reader.query("PRAGMA integrity_check")
        }
        #expect(
            EncryptedFiles.failure(try #require(error))
                == .pageAuthenticationFailed(file: .wal, page: pageNumber))
    }

    @Test(
        "WAL frames rewritten by another connection after a log restart read back (no stale frame header)"
    )
    func walRestartByAnotherConnection() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let a = try EncryptedFiles.open(path)
        let b = try EncryptedFiles.open(path)
        try a.execute(script: "PRAGMA wal_autocheckpoint = 0")
        try b.execute(script: "PRAGMA wal_autocheckpoint = 0")
        try EncryptedFiles.fill(a, rows: 40, sentinel: "A")
        // b copies the log back and empties it; a's next commit writes the first frames of the new
        // log; b empties it again and writes its own frames at the offsets a wrote last.
        try b.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        try a.execute("INSERT INTO t(body) VALUES ('small')")
        try b.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        // One transaction touching every page a wrote: its frames replace a's at the same offsets.
        try b.execute("UPDATE t SET body = 'b round ' || id || ' ' || substr(body, 1, 150)")
        #expect(try a.scalar("SELECT count(*) FROM t WHERE body LIKE 'b round%'") == .integer(41))
        #expect(try a.scalar("PRAGMA integrity_check") == .text("ok"))
        try EncryptedFiles.fill(a, rows: 10, sentinel: "A2")
        #expect(try b.scalar("SELECT count(*) FROM t") == .integer(51))
    }

    @Test(
        "rollback journal: page images are sealed, and a hot journal is rolled back through the cipher"
    )
    func rollbackJournal() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let sentinel = "SENTINEL-JOURNAL-4410"
        let c = try EncryptedFiles.open(path, walMode: false)
        try c.execute(script: "PRAGMA journal_mode = PERSIST; PRAGMA cache_size = 4")
        try EncryptedFiles.fill(c, rows: 300, sentinel: sentinel)
        #expect(FileManager.default.fileExists(atPath: path + "-journal"))
        #expect(!EncryptedFiles.contains(path + "-journal", sentinel))
        // A transaction whose changes spill to the file before commit (4-page cache), copied
        // mid-way with its journal: the copy has a hot journal, as after a crash.
        try c.execute(script: "BEGIN; UPDATE t SET body = 'changed ' || id")
        let copy = dir.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-journal", toPath: copy + "-journal")
        try c.execute(script: "ROLLBACK")
        // the copy holds spilled pages
        #expect(EncryptedFiles.bytes(copy) != EncryptedFiles.bytes(path))
        #expect(!EncryptedFiles.contains(copy + "-journal", sentinel))
        let recovered = try EncryptedFiles.open(copy, walMode: false)
        #expect(
            try recovered.scalar(
                "SELECT count(*) FROM t WHERE body LIKE ?", [.text("\(sentinel)%")])
                == .integer(300))
        #expect(try recovered.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("a changed page image in a hot journal is a journal authentication failure, not garbage")
    func tamperedJournal() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let c = try EncryptedFiles.open(path, walMode: false)
        try c.execute(script: "PRAGMA journal_mode = PERSIST; PRAGMA cache_size = 4")
        try EncryptedFiles.fill(c, rows: 300, sentinel: "S")
        try c.execute(script: "BEGIN; UPDATE t SET body = 'changed ' || id")
        let copy = dir.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-journal", toPath: copy + "-journal")
        try c.execute(script: "ROLLBACK")
        // The first record's page image starts 4 bytes after the first sector (4,096 bytes).
        let offset = 4096 + 4 + 100
        try EncryptedFiles.modify(copy + "-journal", at: offset) { $0[offset] ^= 0x01 }
        let error = #expect(throws: (any Error).self) {
            _ = try EncryptedFiles.open(copy, walMode: false).query("SELECT count(*) FROM t")
        }
        guard
            case .pageAuthenticationFailed(.journal, _)? = EncryptedFiles.failure(
                try #require(error))
        else {
            Issue.record("expected a journal page failure, got \(String(describing: error))")
            return
        }
    }

    @Test("temporary files (sorts, VACUUM, temp tables) stay in memory; VACUUM keeps the cipher")
    func temporaryFiles() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let c = try EncryptedFiles.open(path)
        try EncryptedFiles.fill(c, rows: 2000, sentinel: "SENTINEL-TEMP")
        var before = trove_cipher_statistics()
        trove_cipher_get_statistics(&before)
        // With temp_store = MEMORY (what encrypted connections set) SQLite never asks for a temporary
        // file; an app that sets FILE gets the VFS's memory files instead of disk files.
        try c.execute(script: "PRAGMA temp_store = FILE; PRAGMA cache_size = 8")
        _ = try c.query("SELECT body FROM t ORDER BY substr(body, 20) DESC LIMIT 3")
        try c.execute(script: "CREATE TEMP TABLE scratch AS SELECT * FROM t; VACUUM")
        var after = trove_cipher_statistics()
        trove_cipher_get_statistics(&after)
        #expect(after.memory_files_opened > before.memory_files_opened)
        #expect(after.memory_file_bytes_written > before.memory_file_bytes_written)
        #expect(try c.scalar("PRAGMA integrity_check") == .text("ok"))
        #expect(try c.scalar("SELECT count(*) FROM t") == .integer(2000))
        #expect(!EncryptedFiles.contains(path, "SENTINEL-TEMP"))
        #expect(!EncryptedFiles.contains(path + "-wal", "SENTINEL-TEMP"))
        #expect(try EncryptedFiles.open(path).scalar("PRAGMA temp_store") == .integer(2))
    }

    @Test("memory maps are refused and a page-size change is refused with a typed error")
    func mmapAndPageSize() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let c = try EncryptedFiles.open(path, walMode: false)
        try EncryptedFiles.fill(c, rows: 50, sentinel: "S")
        try c.execute(script: "PRAGMA mmap_size = 268435456")
        #expect(try c.scalar("PRAGMA mmap_size") == .integer(0))
        try c.execute(script: "PRAGMA page_size = 8192")
        let error = #expect(throws: SQLiteError.self) { try c.execute(script: "VACUUM") }
        let failure = error?.encryptionFailure
        #expect(failure == .pageSizeChangeRefused || failure == .unalignedWrite(file: .database))
        #expect(
            try EncryptedFiles.open(path, walMode: false).scalar("SELECT count(*) FROM t")
                == .integer(50))
        #expect(try c.scalar("PRAGMA page_size") == .integer(4096))
    }

    @Test("a background checkpointer's own connection gets the key")
    func backgroundCheckpointer() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let c = try EncryptedFiles.open(path)
        let checkpointer = try BackgroundCheckpointer(
            attachingTo: c, thresholdPages: 20, fallbackPages: 400)
        for batch in 0..<20 {
            try EncryptedFiles.fill(c, rows: 20, sentinel: "SENTINEL-CKPT-\(batch)")
        }
        checkpointer.flush()
        #expect(checkpointer.completedCheckpoints > 0)
        #expect(try c.scalar("SELECT count(*) FROM t") == .integer(400))
        #expect(!EncryptedFiles.contains(path, "SENTINEL-CKPT"))
        #expect(EncryptedFiles.bytes(path).count > 16 * 4096)  // pages really reached the file
    }
}

@Suite("Encryption: keys", .serialized)
struct EncryptionKeyTests {
    @Test(
        "passphrase: PBKDF2 parameters recorded; change of passphrase is instant and the old one stops working"
    )
    func changePassphrase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do {
            try EncryptedFiles.fill(
                try EncryptedFiles.open(path, .passphrase("old secret")), rows: 20, sentinel: "S")
        }
        let info = try #require(try EncryptionInfo.of(path: path))
        #expect(info.keyDerivation == .pbkdf2SHA512)
        #expect(info.iterations >= 256_000)
        let pagesBefore = Array(EncryptedFiles.bytes(path).dropFirst(Int(TROVE_CIPHER_HEADER_SIZE)))
        try Connection.changePassphrase(
            path: path, from: .passphrase("old secret"), to: .passphrase("new secret"))
        #expect(
            Array(EncryptedFiles.bytes(path).dropFirst(Int(TROVE_CIPHER_HEADER_SIZE)))
                == pagesBefore)
        #expect(throws: EncryptionError.wrongKey) {
            _ = try EncryptedFiles.open(path, .passphrase("old secret"))
        }
        #expect(
            try EncryptedFiles.open(path, .passphrase("new secret")).scalar(
                "SELECT count(*) FROM t") == .integer(20))
        #expect(try EncryptionInfo.of(path: path)?.generation == 2)
        #expect(throws: EncryptionError.wrongKey) {
            try Connection.changePassphrase(
                path: path, from: .passphrase("old secret"), to: .passphrase("x"))
        }
        // From a passphrase to a raw key.
        try Connection.changePassphrase(
            path: path, from: .passphrase("new secret"), to: EncryptedFiles.key)
        #expect(try EncryptedFiles.open(path).scalar("SELECT count(*) FROM t") == .integer(20))
    }

    @Test("change of data key re-encrypts every page under a new file identity")
    func changeDataKey() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do {
            try EncryptedFiles.fill(
                try EncryptedFiles.open(path), rows: 100, sentinel: "SENTINEL-REKEY")
        }
        let before = EncryptedFiles.bytes(path)
        try Connection.changeDataKey(
            path: path, from: EncryptedFiles.key, to: EncryptedFiles.otherKey)
        let after = EncryptedFiles.bytes(path)
        #expect(Array(before[16..<32]) != Array(after[16..<32]))  // new file identity
        #expect(throws: EncryptionError.wrongKey) { _ = try EncryptedFiles.open(path) }
        let c = try EncryptedFiles.open(path, EncryptedFiles.otherKey)
        #expect(
            try c.scalar("SELECT count(*) FROM t WHERE body LIKE 'SENTINEL-REKEY%'")
                == .integer(100))
        #expect(try c.scalar("PRAGMA integrity_check") == .text("ok"))
        #expect(!EncryptedFiles.contains(path, "SENTINEL-REKEY"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter {
            $0.contains("rekey")
        }
        #expect(leftovers.isEmpty)
    }

    @Test("change of data key refuses while another connection has the file open")
    func changeDataKeyBusy() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let other = try EncryptedFiles.open(path)
        try EncryptedFiles.fill(other, rows: 5, sentinel: "S")
        let error = #expect(throws: SQLiteError.self) {
            try Connection.changeDataKey(
                path: path, from: EncryptedFiles.key, to: EncryptedFiles.otherKey)
        }
        #expect(error?.code == .busy)
        #expect(try other.scalar("SELECT count(*) FROM t") == .integer(5))
    }

    @Test("encrypted copy of a plaintext file and plaintext copy of an encrypted one")
    func copies() throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("plain.sqlite")
        do {
            try EncryptedFiles.fill(
                try Connection(path: plain), rows: 50, sentinel: "SENTINEL-COPY")
        }
        let encrypted = dir.path("enc.sqlite")
        try Connection.encryptedCopy(of: plain, to: encrypted, encryption: EncryptedFiles.key)
        #expect(!EncryptedFiles.contains(encrypted, "SENTINEL-COPY"))
        #expect(try EncryptedFiles.open(encrypted).scalar("SELECT count(*) FROM t") == .integer(50))
        #expect(throws: EncryptionError.destinationExists(path: encrypted)) {
            try Connection.encryptedCopy(of: plain, to: encrypted, encryption: EncryptedFiles.key)
        }
        let exported = dir.path("exported.sqlite")
        try Connection.plaintextCopy(of: encrypted, encryption: EncryptedFiles.key, to: exported)
        #expect(EncryptedFiles.contains(exported, "SENTINEL-COPY"))
        let reopened = try Connection(path: exported)
        #expect(try reopened.scalar("SELECT count(*) FROM t") == .integer(50))
        #expect(try reopened.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("no key or passphrase appears in errors, descriptions or the file")
    func noKeyMaterialLeaks() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let passphrase = "PASSPHRASE-NEVER-PRINTED"
        do {
            try EncryptedFiles.fill(
                try EncryptedFiles.open(path, .passphrase(passphrase)), rows: 5, sentinel: "S")
        }
        #expect(!EncryptedFiles.contains(path, passphrase))
        let key = try EncryptionKey(path: path, encryption: .passphrase(passphrase))
        #expect(!"\(key)".contains(passphrase))
        do {
            _ = try EncryptedFiles.open(path, .passphrase(passphrase + "x"))
        } catch {
            #expect(!"\(error)".contains(passphrase))
        }
    }
}

@Suite("Encryption: cipher known answers")
struct CipherKnownAnswerTests {
    static func hex(_ s: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            bytes.append(UInt8(s[i..<j], radix: 16)!)
            i = j
        }
        return bytes
    }

    @Test("AES-256-GCM: test cases 13, 14 and 16 of McGrew & Viega's GCM specification (NIST)")
    func aesGCM() throws {
        let cases:
            [(key: String, iv: String, plain: String, aad: String, cipher: String, tag: String)] = [
                (
                    String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", "",
                    "",
                    "530f8afbc74536b9a963b4f1c4cb738b"
                ),
                (
                    String(repeating: "00", count: 32), String(repeating: "00", count: 12),
                    String(repeating: "00", count: 16), "",
                    "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"
                ),
                (
                    "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
                    "cafebabefacedbaddecaf888",
                    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
                    "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
                    "76fc6ece0f4e1768cddf8853bb2d551b"
                ),
            ]
        for c in cases {
            let key = Self.hex(c.key)
            let iv = Self.hex(c.iv)
            let plain = Self.hex(c.plain)
            let aad = Self.hex(c.aad)
            var out = [UInt8](repeating: 0, count: plain.count)
            var tag = [UInt8](repeating: 0, count: 16)
            #expect(trove_cipher_seal(key, iv, aad, aad.count, plain, plain.count, &out, &tag) == 0)
            #expect(out == Self.hex(c.cipher))
            #expect(tag == Self.hex(c.tag))
            var back = [UInt8](repeating: 0, count: plain.count)
            #expect(trove_cipher_open(key, iv, aad, aad.count, out, out.count, &back, tag) == 0)
            #expect(back == plain)
            var forged = tag
            forged[0] ^= 1
            #expect(trove_cipher_open(key, iv, aad, aad.count, out, out.count, &back, forged) != 0)
        }
    }

    /// Whether this CPU runs the VAES implementation (gcm_vaes.c).
    static let vaes: Bool = {
        var tag = [UInt8](repeating: 0, count: 16)
        return trove_cipher_vaes_seal(
            [UInt8](repeating: 0, count: 32), [UInt8](repeating: 0, count: 12), nil, 0, nil, 0, nil,
            &tag) == 0
    }()

    @Test(
        "VAES AES-256-GCM equals OpenSSL's: seeded keys, nonces, AAD and lengths (partial blocks, pages, 64 KB)",
        .enabled(if: CipherKnownAnswerTests.vaes, "needs a CPU with AVX-512 VAES and VPCLMULQDQ"))
    func vaesAgainstOpenSSL() throws {
        var random = SeededGenerator(seed: 20_261_201)
        func bytes(_ n: Int) -> [UInt8] {
            (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        let lengths =
            [0, 1, 15, 16, 17, 255, 256, 257, 4064, 16252, 16352, 65504]
            + (0..<200).map { _ in Int.random(in: 0...20_000, using: &random) }
        for (i, length) in lengths.enumerated() {
            let key = bytes(32)
            let nonce = bytes(12)
            let aad = bytes(i % 7 == 0 ? 0 : Int.random(in: 1...160, using: &random))
            let plain = bytes(length)
            var expected = [UInt8](repeating: 0, count: length)
            var expectedTag = [UInt8](repeating: 0, count: 16)
            var out = [UInt8](repeating: 0, count: length)
            var tag = [UInt8](repeating: 0, count: 16)
            #expect(
                trove_cipher_seal(
                    key, nonce, aad, aad.count, plain, length, &expected, &expectedTag) == 0)
            #expect(
                trove_cipher_vaes_seal(key, nonce, aad, aad.count, plain, length, &out, &tag) == 0)
            #expect(out == expected && tag == expectedTag, "length \(length), AAD \(aad.count)")
            var back = [UInt8](repeating: 0, count: length)
            #expect(
                trove_cipher_vaes_open(key, nonce, aad, aad.count, out, length, &back, tag) == 0)
            #expect(back == plain)
            if length > 0 {
                var tampered = out
                tampered[Int.random(in: 0..<length, using: &random)] ^= 0x20
                #expect(
                    trove_cipher_vaes_open(key, nonce, aad, aad.count, tampered, length, &back, tag)
                        != 0)
            }
            var forged = tag
            forged[15] ^= 1
            #expect(
                trove_cipher_vaes_open(key, nonce, aad, aad.count, out, length, &back, forged) != 0)
        }
    }

    @Test(
        "keyed context (what the VFS uses): the same answers, reused across seals, opens and a failed tag"
    )
    func keyedContext() throws {
        // Test case 16 of the GCM specification: one context, keyed once, nonce set per call.
        let key = Self.hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let iv = Self.hex("cafebabefacedbaddecaf888")
        let aad = Self.hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plain = Self.hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
        )
        let cipher = Self.hex(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
        )
        let expectedTag = Self.hex("76fc6ece0f4e1768cddf8853bb2d551b")
        let context = try #require(trove_cipher_context_new(key))
        defer { trove_cipher_context_free(context) }
        for round in 0..<3 {
            var out = [UInt8](repeating: 0, count: plain.count)
            var tag = [UInt8](repeating: 0, count: 16)
            #expect(
                trove_cipher_context_seal(
                    context, iv, aad, aad.count, plain, plain.count, &out, &tag) == 0)
            #expect(out == cipher, "round \(round)")
            #expect(tag == expectedTag, "round \(round)")
            var forged = tag
            forged[15] ^= 0x80
            var back = [UInt8](repeating: 0, count: plain.count)
            #expect(
                trove_cipher_context_open(
                    context, iv, aad, aad.count, out, out.count, &back, forged) != 0)
            // A failed tag leaves the context usable for the next page.
            #expect(
                trove_cipher_context_open(context, iv, aad, aad.count, out, out.count, &back, tag)
                    == 0)
            #expect(back == plain)
        }
    }

    @Test(
        "page codec out of place: input untouched, output opens, a page sealed in place opens out of place"
    )
    func pageCodecInto() throws {
        var generator = SeededGenerator(seed: 15)
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let plain = (0..<4096).map { i in
            i >= 4096 - 32 ? 0 : UInt8.random(in: 0...255, using: &generator)
        }
        let context = try #require(trove_cipher_context_new(key))
        defer { trove_cipher_context_free(context) }
        let database = Int32(TROVE_CIPHER_FILE_DATABASE)
        var sealed = [UInt8](repeating: 0xEE, count: 4096)
        #expect(
            trove_cipher_seal_page_into(context, id, database, 1, nil, 0, plain, &sealed, 4096, 100)
                == 0)
        #expect(Array(sealed[0..<100]) == Array(plain[0..<100]))
        var inPlace = sealed
        #expect(trove_cipher_open_page(key, id, database, 1, nil, 0, &inPlace, 4096, 100) == 0)
        #expect(inPlace == plain)
        var opened = [UInt8](repeating: 0xEE, count: 4096)
        let sealedCopy = sealed
        #expect(
            trove_cipher_open_page_into(
                context, id, database, 1, nil, 0, sealed, &opened, 4096, 100) == 0)
        #expect(opened == plain)
        #expect(sealed == sealedCopy)
        var moved = [UInt8](repeating: 0, count: 4096)
        #expect(
            trove_cipher_open_page_into(context, id, database, 2, nil, 0, sealed, &moved, 4096, 100)
                != 0)
        var oneShot = plain
        #expect(trove_cipher_seal_page(key, id, database, 7, nil, 0, &oneShot, 4096, 0) == 0)
        #expect(
            trove_cipher_open_page_into(context, id, database, 7, nil, 0, oneShot, &opened, 4096, 0)
                == 0)
        #expect(opened == plain)
    }

    @Test(
        "nonces: a context counts up from a random start; another context (or a copy) starts elsewhere"
    )
    func nonceSequence() throws {
        let key = [UInt8](repeating: 7, count: 32)
        let one = try #require(trove_cipher_context_new(key))
        let two = try #require(trove_cipher_context_new(key))
        let copy = try #require(trove_cipher_context_copy(one))
        defer { [one, two, copy].forEach { trove_cipher_context_free($0) } }
        func nonces(_ context: OpaquePointer, _ count: Int) -> [[UInt8]] {
            (0..<count).map { _ in
                var nonce = [UInt8](repeating: 0, count: 12)
                #expect(trove_cipher_context_nonce(context, &nonce) == 0)
                return nonce
            }
        }
        func low64(_ nonce: [UInt8]) -> UInt64 { nonce[4...].reduce(0) { $0 << 8 | UInt64($1) } }
        let first = nonces(one, 300)
        // The same random high 32 bits, then +1 (mod 2^64) each time: never a repeat.
        #expect(
            Set(first.map { Array($0[0..<4]) }).count == 1 || low64(first[0]) > UInt64.max - 300)
        for (a, b) in zip(first, first.dropFirst()) { #expect(low64(b) == low64(a) &+ 1) }
        #expect(Set(first).count == 300)
        // A second context and a copy for another thread draw their own random starts.
        let others = nonces(two, 300) + nonces(copy, 300)
        #expect(Set(first).isDisjoint(with: Set(others)))
        #expect(Set(others).count == 600)
    }

    @Test("PBKDF2-HMAC-SHA512 known answers (password/salt, 1 and 2 iterations)")
    func pbkdf2() throws {
        let password = Array("password".utf8)
        let salt = Array("salt".utf8)
        var out = [UInt8](repeating: 0, count: 64)
        #expect(
            trove_cipher_pbkdf2_sha512(password, password.count, salt, salt.count, 1, &out, 64) == 0
        )
        #expect(
            out
                == Self.hex(
                    "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce"
                ))
        #expect(
            trove_cipher_pbkdf2_sha512(password, password.count, salt, salt.count, 2, &out, 64) == 0
        )
        #expect(
            out
                == Self.hex(
                    "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53cf76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e"
                ))
    }

    @Test(
        "page codec: a sealed page opens; any changed byte, page number, file kind or identity fails"
    )
    func pageCodec() throws {
        var generator = SeededGenerator(seed: 14)
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let plain = (0..<4096).map { i in
            i >= 4096 - 32 ? 0 : UInt8.random(in: 0...255, using: &generator)
        }
        var sealed = plain
        #expect(
            trove_cipher_seal_page(
                key, id, Int32(TROVE_CIPHER_FILE_DATABASE), 1, nil, 0, &sealed, 4096, 100) == 0)
        #expect(Array(sealed[0..<100]) == Array(plain[0..<100]))
        #expect(Array(sealed[100..<4064]) != Array(plain[100..<4064]))
        var opened = sealed
        #expect(
            trove_cipher_open_page(
                key, id, Int32(TROVE_CIPHER_FILE_DATABASE), 1, nil, 0, &opened, 4096, 100) == 0)
        #expect(opened == plain)
        var again = plain
        #expect(
            trove_cipher_seal_page(
                key, id, Int32(TROVE_CIPHER_FILE_DATABASE), 1, nil, 0, &again, 4096, 100) == 0)
        #expect(again != sealed)  // a fresh nonce on every write
        for position in [0, 20, 99, 100, 2000, 4063, 4064, 4080] {
            var copy = sealed
            copy[position] ^= 0x04
            #expect(
                trove_cipher_open_page(
                    key, id, Int32(TROVE_CIPHER_FILE_DATABASE), 1, nil, 0, &copy, 4096, 100) != 0)
        }
        var copy = sealed
        #expect(
            trove_cipher_open_page(
                key, id, Int32(TROVE_CIPHER_FILE_DATABASE), 2, nil, 0, &copy, 4096, 100) != 0)
        copy = sealed
        #expect(
            trove_cipher_open_page(
                key, id, Int32(TROVE_CIPHER_FILE_WAL), 1, nil, 0, &copy, 4096, 100) != 0)
        copy = sealed
        var otherID = id
        otherID[3] ^= 1
        #expect(
            trove_cipher_open_page(
                key, otherID, Int32(TROVE_CIPHER_FILE_DATABASE), 1, nil, 0, &copy, 4096, 100) != 0)
    }
}
