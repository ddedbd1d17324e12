import CTroveCipher
import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

/// The page map of format-2 encrypted files (Sources/CTroveCipher/pagemap.c): older copies of
/// pages, of the map, or a file cut short are refused with typed errors; crashes and other
/// connections' writes are not mistaken for them.
@Suite("Encryption: page map", .serialized)
struct EncryptionPageMapTests {
    /// Rows in two generations: `fill` writes generation 0, `update` rewrites every row.
    static func fill(_ path: String, rows: Int) throws {
        let c = try EncryptedFiles.open(path)
        try c.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
        try c.transaction {
            for i in 0..<rows {
                try c.execute(
                    "INSERT INTO t(body) VALUES (?)",
                    [.text("g0 row \(i) " + String(repeating: "a", count: 180))])
            }
        }
        try c.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
    }

    static func update(_ path: String) throws {
        let c = try EncryptedFiles.open(path)
        try c.execute(
            script:
                "UPDATE t SET body = replace(body, 'g0 ', 'g1 '); PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Reads every page of the table, then checks the whole file.
    static func readAll(_ path: String) throws {
        let c = try EncryptedFiles.open(path)
        _ = try c.query("SELECT * FROM t")
        guard try c.scalar("PRAGMA integrity_check") == .text("ok") else {
            throw SQLiteError(extendedCode: .corrupt, message: "integrity_check failed")
        }
    }

    /// Pages (2...) whose bytes differ between two versions of the file.
    static func changedPages(_ old: [UInt8], _ new: [UInt8]) -> [Int] {
        let pages = EncryptionInfo.pageCount(fileSize: min(old.count, new.count), pageSize: 4096)
        return (2...pages).filter { page in
            let o = EncryptedFiles.offset(ofPage: page)
            return old[o..<(o + 4096)] != new[o..<(o + 4096)]
        }
    }

    static func isStale(_ failure: EncryptionError?) -> Bool {
        if case .stalePage? = failure { return true }
        return false
    }

    @Test(
        "new files are format 2; a file spanning several map groups reads back whole after reopening"
    )
    func severalGroups() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 12000)
        #expect(try EncryptionInfo.of(path: path)?.formatVersion == 2)
        let pages = EncryptedFiles.pageCount(path)
        #expect(pages > 2 * EncryptionInfo.pagesPerMapGroup(pageSize: 4096))
        try Self.update(path)
        let c = try EncryptedFiles.open(path)
        #expect(try c.scalar("SELECT count(*) FROM t WHERE body LIKE 'g1 %'") == .integer(12000))
        #expect(try c.scalar("PRAGMA integrity_check") == .text("ok"))
        // Shrinks and grows again: the map forgets the cut pages, then records the new ones.
        try c.execute(
            script: "DELETE FROM t WHERE id > 1000; VACUUM; PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(EncryptedFiles.pageCount(path) < pages / 4)
        try c.execute(
            script:
                "INSERT INTO t(body) SELECT body FROM t; INSERT INTO t(body) SELECT body FROM t; PRAGMA wal_checkpoint(TRUNCATE)"
        )
        let again = try EncryptedFiles.open(path)
        #expect(try again.scalar("SELECT count(*) FROM t") == .integer(4000))
        #expect(try again.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test(
        "an older copy of a page put back is refused as a stale page, naming it",
        arguments: [0, 1, 2])
    func replayedPage(choice: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 3000)
        let old = EncryptedFiles.bytes(path)
        try Self.update(path)
        let new = EncryptedFiles.bytes(path)
        let changed = Self.changedPages(old, new)
        #expect(changed.count > 10)
        // A page of the first group, one of the second, the last one.
        let page = [
            changed[1],
            changed.first { $0 > EncryptionInfo.pagesPerMapGroup(pageSize: 4096) } ?? changed[2],
            changed.last!,
        ][choice]
        let o = EncryptedFiles.offset(ofPage: page)
        try EncryptedFiles.modify(path, at: o) {
            $0.replaceSubrange(o..<(o + 4096), with: old[o..<(o + 4096)])
        }
        let error = #expect(throws: (any Error).self) { try Self.readAll(path) }
        #expect(EncryptedFiles.failure(try #require(error)) == .stalePage(page: UInt32(page)))
        // Put the current page back: everything reads again.
        try EncryptedFiles.modify(path, at: o) {
            $0.replaceSubrange(o..<(o + 4096), with: new[o..<(o + 4096)])
        }
        try Self.readAll(path)
    }

    @Test(
        "the file cut at a page boundary is refused (SQLite sees fewer pages than page 1 records)")
    func cutAtBoundary() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 600)
        let full = EncryptedFiles.bytes(path)
        let pages = EncryptedFiles.pageCount(path)
        try Data(full[0..<EncryptedFiles.offset(ofPage: pages - 1)]).write(
            to: URL(fileURLWithPath: path))
        let error = try #require(#expect(throws: (any Error).self) { try Self.readAll(path) })
        // Page 1 says how many pages there are, so SQLite finds the cut first; a page the map has
        // but the file lacks, read in any other way, is a stale page (database_read).
        #expect(
            (error as? SQLiteError)?.code == .corrupt
                || Self.isStale(EncryptedFiles.failure(error)), "\(error)")
    }

    @Test("older root records put back (the map rolled back) are refused")
    func replayedRoots() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 600)
        let old = EncryptedFiles.bytes(path)
        try Self.update(path)
        try Self.update(path)  // two flushes later: neither map slot is the old root's any more
        try EncryptedFiles.modify(path, at: 1024) {
            $0.replaceSubrange(1024..<2048, with: old[1024..<2048])
        }
        let error = #expect(throws: (any Error).self) { try Self.readAll(path) }
        let failure = EncryptedFiles.failure(try #require(error))
        #expect(
            failure == .pageMapDamaged || Self.isStale(failure), "\(String(describing: failure))")
    }

    @Test(
        "a changed byte in the current map page or root record is refused, never read past",
        arguments: ["map page", "root record"])
    func damagedMap(part: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 600)
        try Self.update(path)
        var bytes = EncryptedFiles.bytes(path)
        // The newest root record and the slot of group 0 it covers: the ones with the higher epoch.
        func epoch(_ o: Int) -> UInt64 {
            bytes[(o + 8)..<(o + 16)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let root = epoch(1024) >= epoch(1536) ? 1024 : 1536
        if part == "root record" {
            bytes[root + 40] ^= 0x01
        } else {
            // Slot A or B of group 0 (right after page 1): flip a byte in each in turn until the
            // file fails; the current one must make it fail.
            let slots = [
                EncryptedFiles.offset(ofPage: 1) + 4096, EncryptedFiles.offset(ofPage: 1) + 8192,
            ]
            var failed = false
            for slot in slots where !failed {
                var trial = bytes
                trial[slot + 700] ^= 0x01
                try Data(trial).write(to: URL(fileURLWithPath: path))
                do { try Self.readAll(path) } catch {
                    let failure = EncryptedFiles.failure(error)
                    #expect(
                        failure == .pageMapDamaged || Self.isStale(failure),
                        "\(String(describing: failure))")
                    failed = true
                }
            }
            #expect(failed)
            return
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: (any Error).self) { try Self.readAll(path) }
        let failure = EncryptedFiles.failure(try #require(error))
        #expect(
            failure == .pageMapDamaged || Self.isStale(failure), "\(String(describing: failure))")
    }

    @Test("a file with pages and neither root record is refused as a damaged map")
    func rootsRemoved() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 200)
        try EncryptedFiles.modify(path, at: 1024) {
            $0.replaceSubrange(1024..<2048, with: [UInt8](repeating: 0, count: 1024))
        }
        let error = #expect(throws: (any Error).self) { try Self.readAll(path) }
        #expect(EncryptedFiles.failure(try #require(error)) == .pageMapDamaged)
    }

    @Test(
        "a whole earlier copy of the file opens (the documented limit: rollback of the whole file)")
    func wholeFileRollback() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 300)
        let old = EncryptedFiles.bytes(path)
        try Self.update(path)
        try Data(old).write(to: URL(fileURLWithPath: path))
        let c = try EncryptedFiles.open(path)
        #expect(try c.scalar("SELECT count(*) FROM t WHERE body LIKE 'g0 %'") == .integer(300))
    }

    @Test("another connection's checkpoints between this one's reads are not mistaken for replays")
    func otherConnectionWrites() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        try Self.fill(path, rows: 2000)
        let reader = try EncryptedFiles.open(path)
        let writer = try EncryptedFiles.open(path)
        for round in 0..<20 {
            try writer.execute(
                "UPDATE t SET body = ? || substr(body, 3) WHERE id % 20 = ?",
                [.text("r\(round % 10)"), .integer(Int64(round))])
            try writer.execute(script: "PRAGMA wal_checkpoint(PASSIVE)")
            #expect(try reader.scalar("SELECT count(*) FROM t") == .integer(2000))
            #expect(try reader.scalar("SELECT sum(length(body)) FROM t") != nil)
        }
        try writer.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try reader.scalar("PRAGMA integrity_check") == .text("ok"))
        #expect(try EncryptedFiles.open(path).scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test(
        "rollback-journal mode: commits, a rolled-back transaction and synchronous = OFF keep the map current"
    )
    func rollbackJournal() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        do {
            let c = try EncryptedFiles.open(path, walMode: false)
            try c.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
            try c.execute(
                script: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                    INSERT INTO t(body) SELECT 'row ' || i || ' ' || printf('%.200c', 'x') FROM n
                    """)
            try? c.transaction {
                try c.execute(script: "UPDATE t SET body = 'changed'")
                throw CancellationError()
            }
            try c.execute(
                script: "PRAGMA synchronous = OFF; UPDATE t SET body = body || '!' WHERE id <= 100")
        }
        let c = try EncryptedFiles.open(path, walMode: false)
        #expect(try c.scalar("SELECT count(*) FROM t WHERE body LIKE '%!'") == .integer(100))
        #expect(try c.scalar("SELECT count(*) FROM t WHERE body = 'changed'") == .integer(0))
        #expect(try c.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("map pages written and stale pages refused are counted")
    func statistics() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.sqlite")
        let before = EncryptionStatistics.current
        try Self.fill(path, rows: 300)
        #expect(EncryptionStatistics.current.mapPagesWritten > before.mapPagesWritten)
        let old = EncryptedFiles.bytes(path)
        try Self.update(path)
        let o = EncryptedFiles.offset(ofPage: 3)
        try EncryptedFiles.modify(path, at: o) {
            $0.replaceSubrange(o..<(o + 4096), with: old[o..<(o + 4096)])
        }
        #expect(throws: (any Error).self) { try Self.readAll(path) }
        #expect(EncryptionStatistics.current.stalePagesRefused > before.stalePagesRefused)
    }
}
