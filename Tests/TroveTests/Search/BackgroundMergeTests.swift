import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// Text indexes leave FTS5's segment merging out of the writer's commits (automerge 0) and merge
/// on a background connection once writes pause (BackgroundMerger.swift).
@Suite("Background merge of text-index segments")
struct BackgroundMergeTests {

    /// Writes `batches` batches of 64 rows, each its own transaction (the bulk path).
    private func fill(_ items: SearchCollection, batches: Int, firstID: Int64 = 0) async throws {
        var rng = SeededGenerator(seed: 11)
        let words = ["apple", "river", "stone", "cloud", "ember", "maple", "quartz", "harbor"]
        for batch in 0..<batches {
            let entries = (0..<64).map { i in
                let id = firstID + Int64(batch * 64 + i + 1)
                let text = (0..<12).map { _ in words[Int.random(in: 0..<words.count, using: &rng)] }
                    .joined(
                        separator: " ")
                return VectorEntry(
                    id: .int(id), content: "\(text) doc\(id)", vector: rng.vector(dimension: 4))
            }
            try await items.insert(entries)
        }
    }

    /// Polls the segment count until it is at most `bound` (10 s at most); returns the last count.
    private func waitForSegments(_ db: Database, _ name: String, atMost bound: Int) async throws
        -> Int
    {
        var count = try await ftsSegmentCount(db, name)
        for _ in 0..<200 where count > bound {
            try await Task.sleep(for: .milliseconds(50))
            count = try await ftsSegmentCount(db, name)
        }
        return count
    }

    private func results(_ items: SearchCollection) async throws -> [[DocumentID]] {
        var all: [[DocumentID]] = []
        for query in ["apple", "\"river stone\"", "quartz AND harbor", "doc17", "ember NOT cloud"] {
            all.append(try await items.search(Query().matching(.fts5(query)).limit(50)).map(\.id))
        }
        return all
    }

    @Test("one segment per batch while writing; merged once writes pause; same results")
    func mergesWhenQuiet() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("store.trove"))
        let items = try await SearchCollection("items", in: db, dimension: 4)
        try await fill(items, batches: 20)
        let written = try await ftsSegmentCount(db, "items")
        #expect(written >= 16)  // the writer merged nothing (a default automerge would leave < 8)
        let before = try await results(items)

        #expect(try await waitForSegments(db, "items", atMost: 8) <= 8)
        #expect(try await results(items) == before)
        #expect(try await db.verify().isHealthy)
    }

    /// The structure record of the FTS5 table `t` at `path` (it changes with every merge step),
    /// after writing it with `segments` segments of 16 rows, one per transaction, on a
    /// connection of its own (no database, so no merger of its own, is attached to the file).
    private func segmentedTable(at path: String, segments: Int) throws -> Connection {
        let connection = try Connection(.file(path))
        try connection.execute(script: "CREATE VIRTUAL TABLE t USING fts5(body)")
        try connection.execute("INSERT INTO t(t, rank) VALUES ('automerge', 0)")
        var rng = SeededGenerator(seed: 5)
        for segment in 0..<segments {
            try connection.transaction(.immediate) {
                for row in 0..<16 {
                    let words = (0..<12).map { _ in "w\(Int.random(in: 0..<500, using: &rng))" }
                    try connection.execute(
                        "INSERT INTO t(body) VALUES (?)",
                        [.text(words.joined(separator: " ") + " s\(segment)r\(row)")])
                }
            }
        }
        return connection
    }

    @Test("a connection waiting for the lock counts as a write: merging waits a quiet period more")
    func waitingWriterDefersMerge() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.sqlite")
        let reader = try segmentedTable(at: path, segments: 100)
        func structure() throws -> [UInt8]? {
            try reader.query("SELECT block FROM t_data WHERE id = 10").first?.blob(at: 0)
        }
        // Blocking sleeps (a synchronous test): they wake on time however busy the concurrency
        // pool is, as the merger's dispatch timer does.
        let merger = BackgroundMerger(path: path, quietPeriod: .seconds(1))
        let written = try structure()
        merger.noteWrite(fts: "t")  // merging would start after 1 s
        merger.giveWay()  // now after 2 s
        Thread.sleep(forTimeInterval: 1.4)
        #expect(try structure() == written)
        var merged = written
        for _ in 0..<500 where merged == written {
            Thread.sleep(forTimeInterval: 0.01)
            merged = try structure()
        }
        #expect(merged != written)
        reader.close()
    }

    @Test("writes inside the app's own transaction are merged after it commits")
    func mergesAfterOuterTransaction() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("store.trove"))
        let items = try await SearchCollection("items", in: db, dimension: 4)
        // 20 transactions of the app's own, each holding a batch and outlasting the quiet period
        // once, so the first merge attempt finds the write lock taken.
        for batch in 0..<20 {
            try await db.execute("BEGIN IMMEDIATE")
            try await fill(items, batches: 1, firstID: Int64(batch * 64))
            if batch == 0 { try await Task.sleep(for: .milliseconds(400)) }
            try await db.execute("COMMIT")
        }
        #expect(try await ftsSegmentCount(db, "items") >= 16)
        #expect(try await waitForSegments(db, "items", atMost: 8) <= 8)
        #expect(try await items.count() == 20 * 64)
    }

    @Test("mergeTextIndexes merges at once")
    func mergeNow() async throws {
        let db = try Database()  // in memory: no background merger, so any merge is this call's
        let items = try await SearchCollection("items", in: db, dimension: 4)
        try await fill(items, batches: 20)
        let before = try await results(items)
        try await db.mergeTextIndexes()
        #expect(try await ftsSegmentCount(db, "items") <= 8)
        #expect(try await results(items) == before)
        #expect(try await db.verify().isHealthy)
    }

    @Test("a database released while its merger runs: no crash, the file intact")
    func releaseDuringMerge() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        for (round, delay) in [230, 260, 290, 320, 350].enumerated() {
            do {
                let db = try Database(path: path)
                let items = try await SearchCollection("items", in: db, dimension: 4)
                try await fill(items, batches: 10, firstID: Int64(round * 10 * 64))
                try await Task.sleep(for: .milliseconds(delay))
            }  // released here, around the moment the merge starts
        }
        let db = try Database(path: path)
        let items = try await SearchCollection("items", in: db, dimension: 4)
        #expect(try await items.count() == 5 * 10 * 64)
        #expect(try await db.verify().isHealthy)
    }

    @Test("a level reaching 32 segments is merged by the writer even without a pause")
    func crisisMergeBoundsSegments() async throws {
        let db = try Database()  // in memory: no background merger at all
        let items = try await SearchCollection("items", in: db, dimension: 4)
        try await fill(items, batches: 31)
        #expect(try await ftsSegmentCount(db, "items") >= 30)  // no merging below 32 segments
        try await fill(items, batches: 9, firstID: 31 * 64)
        #expect(try await ftsSegmentCount(db, "items") < 32)
        #expect(try await items.search(Query().matching(.fts5("doc2000"))).map(\.id) == [2000])
    }
}
