import CTroveCipher
import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

/// Decrypt-ahead (readahead.c): a worker decrypts the next pages of a sequential scan; a read uses
/// them only when its own ciphertext is byte-identical. These tests change pages on disk after the
/// worker decrypted them and check the reader returns what is on disk, never the worker's copy.
@Suite("Encryption: decrypt-ahead", .serialized)
struct EncryptionReadAheadTests {
    static let rows = 3000

    /// Same length for every generation, so an update rewrites cells in place.
    static func body(_ id: Int, generation: Int) -> String {
        let head = "g\(generation) row \(id) "
        return head + String(repeating: "abcdefghij", count: 90).prefix(900 - head.count)
    }

    /// A WAL file of `rows` rows (4 KB pages, ~4 rows a page), checkpointed into the main file.
    static func makeFile(_ path: String) throws {
        let c = try EncryptedFiles.open(path)
        try c.execute(
            script: "CREATE TABLE t(id INTEGER PRIMARY KEY, generation INTEGER, body TEXT)")
        try c.transaction {
            for id in 1...rows {
                try c.execute(
                    "INSERT INTO t VALUES (?, 0, ?)",
                    [.integer(Int64(id)), .text(body(id, generation: 0))])
            }
        }
        try c.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
    }

    static func scan(_ c: Connection) throws -> [[SQLValue]] {
        try c.query("SELECT id, generation, body FROM t ORDER BY id").map { row in
            (0..<3).map { row[$0] }
        }
    }

    /// Runs `body` with decrypt-ahead always on (whatever the machine's load) or off.
    static func withReadAhead<T>(_ on: Bool, _ body: () throws -> T) rethrows -> T {
        let before = EncryptionReadAhead.policy
        EncryptionReadAhead.policy = on ? .always : .off
        defer { EncryptionReadAhead.policy = before }
        return try body()
    }

    @Test(
        "a scan returns the same rows with and without decrypt-ahead, and uses the worker's pages")
    func sameResults() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.makeFile(path)
        let (plainRows, offState) = try Self.withReadAhead(false) {
            let c = try EncryptedFiles.open(path)
            return (try Self.scan(c), c.readAheadState())
        }
        let (aheadRows, onState) = try Self.withReadAhead(true) {
            let c = try EncryptedFiles.open(path)
            return (try Self.scan(c), c.readAheadState())
        }
        #expect(plainRows.count == Self.rows)
        #expect(aheadRows == plainRows)
        #expect(offState == nil)
        let state = try #require(onState)
        // ~750 leaf pages read in order. How many the worker has ready in time depends on how fast
        // the reader goes (this bare scan spends ~2 us a page) and on the machine's load.
        #expect(state.hits > 75)
        #expect(state.misses == 0)
    }

    @Test(
        "ten files scanned while all stay open: right rows from each, never more than 8 workers alive"
    )
    func manyFiles() throws {
        let dir = try TemporaryDirectory()
        let paths = (0..<10).map { dir.path("f\($0).sqlite") }
        for (i, path) in paths.enumerated() {
            let c = try EncryptedFiles.open(path)
            try c.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
            try c.transaction {
                for id in 1...400 {
                    try c.execute(
                        "INSERT INTO t VALUES (?, ?)",
                        [.integer(Int64(id)), .text("file \(i) " + Self.body(id, generation: i))])
                }
            }
            try c.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try Self.withReadAhead(true) {
            var open: [Connection] = []
            for (i, path) in paths.enumerated() {
                let c = try EncryptedFiles.open(path)
                open.append(c)
                let rows = try c.query("SELECT id, body FROM t ORDER BY id")
                #expect(rows.count == 400)
                #expect(
                    rows.allSatisfy {
                        $0[1]
                            == .text(
                                "file \(i) " + Self.body(Int($0[0].int64Value ?? 0), generation: i))
                    })
                #expect(EncryptionStatistics.current.readAheadWorkersLive <= 8)
            }
            // Whether the worker is ahead of a 400-row scan depends on scheduling (the test suite
            // runs in parallel on few cores): scan again, up to twenty more times, with a pause
            // before each that lets the workers run, before asking. Each connection's page cache
            // is emptied first (`shrink_memory`): a scan served from it reads no page from the
            // file, so it would give the worker nothing to be ahead of.
            for _ in 0..<20
            where !open.compactMap({ $0.readAheadState() }).contains(where: { $0.hits > 0 }) {
                usleep(50_000)
                for c in open {
                    try c.execute(script: "PRAGMA shrink_memory")
                    _ = try c.query("SELECT id, body FROM t ORDER BY id")
                }
            }
            #expect(open.compactMap { $0.readAheadState() }.contains { $0.hits > 0 })
            open.forEach { $0.close() }
        }
    }

    /// Opens a reader, steps its scan to just before row `stopBefore`, waits for the worker to
    /// finish its window, and returns the statement mid-scan with the pages the worker holds.
    static func readerMidScan(_ path: String, stopBefore: Int) throws -> (
        Connection, Statement, [UInt32]
    ) {
        let c = try EncryptedFiles.open(path)
        let statement = try c.prepare("SELECT id, body FROM t ORDER BY id")
        while try statement.step() {
            if statement.int64(at: 0) == Int64(stopBefore) { break }
        }
        let state = try #require(c.readAheadState())
        return (c, statement, state.readyPages)
    }

    /// Rewrites row `id` (same length, next generation) and returns the main file's page that
    /// changed, with its ciphertext before the change.
    static func rewriteRow(_ path: String, id: Int) throws -> (page: Int, before: [UInt8]) {
        let before = EncryptedFiles.bytes(path)
        do {
            let c = try EncryptedFiles.open(path)
            try c.execute(
                "UPDATE t SET generation = 1, body = ? WHERE id = ?",
                [.text(body(id, generation: 1)), .integer(Int64(id))])
            try c.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let after = EncryptedFiles.bytes(path)
        #expect(after.count == before.count)
        let pages = EncryptedFiles.pageCount(path)
        let changed = (2...pages).filter { page in
            let o = EncryptedFiles.offset(ofPage: page)
            return before[o..<(o + 4096)] != after[o..<(o + 4096)]
        }
        #expect(changed.count == 1)
        let page = try #require(changed.first)
        let o = EncryptedFiles.offset(ofPage: page)
        return (page, Array(before[o..<(o + 4096)]))
    }

    @Test(
        "an older copy of a page put back after the worker decrypted the current one is refused as stale, not served"
    )
    func changedAfterWorker() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.makeFile(path)
        let target = 1500
        // The page holding row 1500 at generation 0 (kept) and 1 (on disk).
        let (page, generation0) = try Self.rewriteRow(path, id: target)
        try Self.withReadAhead(true) {
            let (c, statement, ready) = try Self.readerMidScan(path, stopBefore: target - 12)
            // The worker holds the page with generation 1 of the row, decrypted and verified.
            #expect(ready.contains(UInt32(page)))
            // Now the disk gets the older (validly sealed) version of that page back.
            let o = EncryptedFiles.offset(ofPage: page)
            try EncryptedFiles.modify(path, at: o) {
                $0.replaceSubrange(o..<(o + 4096), with: generation0)
            }
            var seen: String?
            let error = #expect(throws: (any Error).self) {
                while try statement.step() {
                    if statement.int64(at: 0) == Int64(target) { seen = statement.string(at: 1) }
                }
            }
            // Neither the worker's copy (its ciphertext is not what is on disk) nor the older
            // version on disk (the page map records the newer one).
            #expect(EncryptedFiles.failure(try #require(error)) == .stalePage(page: UInt32(page)))
            #expect(seen == nil)
            let state = try #require(c.readAheadState())
            #expect(state.misses >= 1)
        }
    }

    @Test(
        "a byte changed in a page the worker already decrypted is still an authentication failure")
    func tamperedAfterWorker() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.makeFile(path)
        let target = 1500
        let (page, _) = try Self.rewriteRow(path, id: target)
        try Self.withReadAhead(true) {
            let (_, statement, ready) = try Self.readerMidScan(path, stopBefore: target - 12)
            #expect(ready.contains(UInt32(page)))
            let offset = EncryptedFiles.offset(ofPage: page) + 2000
            try EncryptedFiles.modify(path, at: offset) { $0[offset] ^= 0x01 }
            let error = #expect(throws: (any Error).self) {
                while try statement.step() {}
            }
            #expect(
                EncryptedFiles.failure(try #require(error))
                    == .pageAuthenticationFailed(file: .database, page: UInt32(page)))
        }
    }

    /// Set by the writer when it is done (with its error, if any); read by the reader.
    final class Done: @unchecked Sendable {
        // @unchecked Sendable: `value` and `failure` are only touched under `lock`.
        private let lock = NSLock()
        private var value = false
        private var failure: (any Error)?
        var isSet: Bool { lock.withLock { value } }
        var error: (any Error)? { lock.withLock { failure } }
        func set(_ error: (any Error)? = nil) { lock.withLock { (value, failure) = (true, error) } }
    }

    @Test(
        "a writer rewriting every page while a reader scans: each scan is one whole generation",
        arguments: [true, false])
    func writerWhileScanning(walMode: Bool) async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.makeFile(path)
        if !walMode {
            try EncryptedFiles.open(path).execute(script: "PRAGMA journal_mode = DELETE")
        }
        let done = Done()
        @Sendable func write() throws {
            let c = try EncryptedFiles.open(path, walMode: walMode)
            for generation in 1...25 {
                try c.transaction {
                    for id in 1...Self.rows {
                        try c.execute(
                            "UPDATE t SET generation = ?, body = ? WHERE id = ?",
                            [
                                .integer(Int64(generation)),
                                .text(Self.body(id, generation: generation)),
                                .integer(Int64(id)),
                            ])
                    }
                }
                // WAL: copy the pages into the main file under the reader's feet.
                if walMode { try c.execute(script: "PRAGMA wal_checkpoint(PASSIVE)") }
            }
        }
        // The writer runs on a thread of its own: the reader's loop below holds one of the
        // cooperative pool's threads until the writer is done, and a task of the writer's could
        // wait behind it (and behind other suites' blocking tests) for ever on a 2-core machine.
        Thread {
            do {
                try write()
                done.set()
            } catch { done.set(error) }
        }.start()
        try Self.withReadAhead(true) {
            let reader = try EncryptedFiles.open(path, walMode: walMode)
            // A small cache, so every scan reads its pages through the VFS again.
            try reader.execute(script: "PRAGMA cache_size = 16")
            var scans = 0
            var generations = Set<Int64>()
            repeat {
                let rows = try Self.scan(reader)
                #expect(rows.count == Self.rows)
                let generation = rows.first?[1].int64Value ?? -1
                generations.insert(generation)
                for row in rows {
                    let id = Int(row[0].int64Value ?? 0)
                    if row[1].int64Value != generation
                        || row[2] != .text(Self.body(id, generation: Int(generation)))
                    {
                        Issue.record(
                            "scan \(scans): row \(id) is \(row[1]) in a scan of generation \(generation)"
                        )
                        return
                    }
                }
                scans += 1
            } while !done.isSet || scans < 3
            let state = try #require(reader.readAheadState())
            #expect(state.hits > 0)
            #expect(scans >= 3)
            print(
                "decrypt-ahead under a writer (WAL \(walMode)): \(scans) scans, generations \(generations.count), "
                    + "hits \(state.hits), misses \(state.misses)")
        }
        if let error = done.error { throw error }
    }
}
