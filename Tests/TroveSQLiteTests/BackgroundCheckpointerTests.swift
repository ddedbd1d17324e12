import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@Suite("BackgroundCheckpointer")
struct BackgroundCheckpointerTests {
    /// Writes `rows` rows of 4 KB each, one transaction per `perCommit` rows.
    private func write(_ c: Connection, rows: Range<Int>, perCommit: Int = 20) throws {
        let blob = [UInt8](repeating: 7, count: 4096)
        var start = rows.lowerBound
        while start < rows.upperBound {
            let end = min(rows.upperBound, start + perCommit)
            try c.transaction {
                for i in start..<end {
                    try c.execute(
                        "INSERT INTO t(id, b) VALUES (?, ?)", [.integer(Int64(i)), .blob(blob)])
                }
            }
            start = end
        }
    }

    private func fileBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue
            ?? 0
    }

    private func walBytes(_ path: String) -> Int { fileBytes(path + "-wal") }

    /// A new WAL file in `dir` with an empty table `t`, and its writer connection.
    private func freshTable(in dir: TemporaryDirectory) throws -> (path: String, writer: Connection)
    {
        let path = dir.path("db.sqlite")
        let writer = try Connection(path: path)
        try writer.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)")
        return (path, writer)
    }

    @Test("commits past the threshold are checkpointed on the background queue")
    func checkpointsInBackground() throws {
        let dir = try TemporaryDirectory()
        let (path, writer) = try freshTable(in: dir)
        let checkpointer = try BackgroundCheckpointer(
            attachingTo: writer, thresholdPages: 50, fallbackPages: 1_000)
        try write(writer, rows: 0..<2_000)
        checkpointer.flush()
        #expect(checkpointer.completedCheckpoints > 0)
        // The log was copied back and restarted: it stays below the 8 MB written (about 4 MB,
        // the fallback size, plus what a slow queue lets through on a busy machine).
        #expect(walBytes(path) < 7 << 20)
        // The pages reached the main file.
        #expect(fileBytes(path) > 3 << 20)
        let reader = try Connection(path: path, options: .init(readOnly: true))
        #expect(try reader.scalar("SELECT count(*) FROM t") == .integer(2_000))
        _ = checkpointer
    }

    @Test("without it SQLite's own automatic checkpoint runs in the writer's commits")
    func replacesAutomaticCheckpoint() throws {
        let dir = try TemporaryDirectory()
        let (path, writer) = try freshTable(in: dir)
        // A threshold the writes never reach and no fallback: nothing may copy the log back,
        // so it holds every page written (SQLite's automatic checkpoint is off while attached).
        let checkpointer = try BackgroundCheckpointer(
            attachingTo: writer, thresholdPages: 1_000_000, fallbackPages: 1_000_000)
        try write(writer, rows: 0..<1_500)
        #expect(checkpointer.completedCheckpoints == 0)
        #expect(walBytes(path) > 6 << 20)
    }

    @Test("the writer checkpoints itself once the log passes the fallback size")
    func fallbackBoundsTheLog() throws {
        let dir = try TemporaryDirectory()
        let (path, writer) = try freshTable(in: dir)
        let checkpointer = try BackgroundCheckpointer(
            attachingTo: writer, thresholdPages: 1_000_000, fallbackPages: 200)
        try write(writer, rows: 0..<3_000)
        checkpointer.flush()
        #expect(checkpointer.completedCheckpoints > 0)
        // Without the fallback the log would hold all 12 MB. With it: about 200 pages of 4 KB,
        // plus the commits made while a copy handed to the queue waits for a thread, which on a
        // busy machine (two cores, the whole suite running) reached 7.8 MB: the bound is the
        // margin below the unbounded log, not the quiet machine's figure.
        #expect(walBytes(path) < 10 << 20)
    }

    @Test("one transaction larger than the fallback size is copied on the queue, not in its commit")
    func largeTransactionGoesToTheQueue() throws {
        let dir = try TemporaryDirectory()
        let (path, writer) = try freshTable(in: dir)
        let checkpointer = try BackgroundCheckpointer(
            attachingTo: writer, thresholdPages: 1_000_000, fallbackPages: 100)
        try write(writer, rows: 0..<500, perCommit: 500)
        checkpointer.flush()
        #expect(checkpointer.completedCheckpoints == 1)
        #expect(fileBytes(path) > 2 << 20)  // the 2 MB reached the main file
    }

    @Test("released while checkpoints are in flight: no deadlock, data intact")
    func releaseWhileBusy() throws {
        let dir = try TemporaryDirectory()
        let path = try freshTable(in: dir).path  // its writer closed at once
        for round in 0..<5 {
            let writer = try Connection(path: path)
            let checkpointer = try BackgroundCheckpointer(attachingTo: writer, thresholdPages: 10)
            try write(writer, rows: (round * 300)..<((round + 1) * 300), perCommit: 5)
            _ = checkpointer  // released here with the writer, possibly mid-checkpoint
        }
        let reader = try Connection(path: path)
        #expect(try reader.scalar("SELECT count(*) FROM t") == .integer(1_500))
        #expect(try reader.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("needs a writable file")
    func rejectsMemoryAndReadOnly() throws {
        #expect(throws: SQLiteError.self) {
            try BackgroundCheckpointer(attachingTo: Connection(.inMemory))
        }
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        do { _ = try Connection(path: path) }
        #expect(throws: SQLiteError.self) {
            try BackgroundCheckpointer(
                attachingTo: Connection(path: path, options: .init(readOnly: true)))
        }
    }

    @Test("page size applies to new files only")
    func newFilePageSize() throws {
        let dir = try TemporaryDirectory()
        let fresh = dir.path("fresh.sqlite")
        do {
            let c = try Connection(path: fresh, options: .init(newFilePageSize: 16384))
            try c.execute(script: "CREATE TABLE t(x)")
        }
        #expect(try Connection(path: fresh).scalar("PRAGMA page_size") == .integer(16384))
        let old = dir.path("old.sqlite")
        do {
            let c = try Connection(path: old)
            try c.execute(script: "CREATE TABLE t(x)")
        }
        let reopened = try Connection(path: old, options: .init(newFilePageSize: 16384))
        #expect(try reopened.scalar("PRAGMA page_size") == .integer(4096))
    }
}
