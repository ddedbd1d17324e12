import Foundation
import Testing
import TroveSQLite
import TroveTestSupport
import TroveVectors

@testable import Trove

/// A flat vector field saves its matrix (`<name>_index`, key `flat` for a search collection)
/// with the change-log watermark it reflects; the first query after an open reads it back in
/// one pass and replays the log after it. A snapshot that is damaged, truncated, from another
/// dimension or that the log cannot bring up to date is refused and the matrix rebuilt from the
/// table; either way the answers are those of a matrix built from the table.
@Suite("Flat vector index snapshots")
struct FlatVectorIndexSnapshotTests {
    // Large enough rows that the 700 saved ones take several parts (`IndexSnapshotStore.partBytes`).
    static let dimension = 96

    static func queries(_ n: Int, seed: UInt64 = 31) -> [[Float]] {
        var rng = SeededGenerator(seed: seed)
        return (0..<n).map { _ in rng.vector(dimension: dimension) }
    }

    /// Ids and scores of each query's top 10, unfiltered and filtered to one source.
    static func answers(_ items: SearchCollection) async throws -> [[String]] {
        var all: [[String]] = []
        for q in queries(8) {
            all.append(try await items.search(vector: q, limit: 10).map { "\($0.id) \($0.score)" })
            all.append(
                try await items.search(vector: q, where: .source("odd"), limit: 10).map {
                    "\($0.id) \($0.score)"
                })
        }
        return all
    }

    /// The answers of a matrix built from the table: the snapshot removed, a fresh open.
    static func tableAnswers(_ path: String) async throws -> [[String]] {
        let raw = try Connection(.file(path))
        try raw.execute("DELETE FROM items_index WHERE name = 'embedding.flat'")
        raw.close()
        let items = try await SearchCollection(named: "items", in: Database(path: path))
        let answers = try await answers(items)
        #expect(
            try await items.indexStatistics().origin
                == .rebuilt(reason: SnapshotLoadState.noSnapshot))
        return answers
    }

    /// A flat collection of 700 rows whose matrix was saved, then 10 rows more through the API
    /// (so a pruned log floor can pass the saved watermark).
    @discardableResult
    static func savedCollection(_ path: String, metric: DistanceMetric = .cosine) async throws
        -> IndexStatistics
    {
        let db = try Database(path: path)
        let items = try await SearchCollection(
            "items", in: db, dimension: dimension, metric: metric)
        try await items.insert(hnswEntries(count: 700, dimension: dimension, seed: 3))
        let saved = try await items.saveIndex()
        try await items.insert(
            hnswEntries(count: 10, dimension: dimension, seed: 4, firstID: 5_000))
        return saved
    }

    @Test(
        "the matrix comes back from its snapshot and answers as one built from the table",
        arguments: [DistanceMetric.cosine, .l2, .dot])
    func roundTrip(metric: DistanceMetric) async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("flat.trove")
        let saved = try await Self.savedCollection(path, metric: metric)
        #expect(
            saved.vectorCount == 700 && saved.snapshotWatermark == saved.watermark
                && saved.origin == .rebuilt(reason: SnapshotLoadState.noSnapshot))
        let db = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: db)
        let fromSnapshot = try await Self.answers(items)
        let stats = try await items.indexStatistics()
        #expect(stats.origin == .snapshot && stats.vectorCount == 710 && stats.replayedRows == 10)
        #expect(stats.snapshotWatermark == saved.watermark)
        #expect(fromSnapshot == (try await Self.tableAnswers(path)))
        // The snapshot goes with its collection.
        #expect(try await db.dropCollection("items"))
        #expect(
            try await db.query("SELECT name FROM sqlite_master WHERE name = 'items_index'").isEmpty)
    }

    @Test("rows changed after the save, through the API and by raw SQL, are replayed from the log")
    func changedAfterSave() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("flat.trove")
        try await Self.savedCollection(path)
        var rng = SeededGenerator(seed: 12)
        let raw = try Connection(.file(path))
        for id in [Int64(3), 40, 41, 699] {
            let bytes = rng.vector(dimension: Self.dimension).withUnsafeBytes { Array($0) }
            try raw.execute(
                "UPDATE items SET embedding = ? WHERE id = ?", [.blob(bytes), .integer(id)])
        }
        try raw.execute("DELETE FROM items WHERE id IN (5, 6, 7)")
        try raw.execute("UPDATE items SET embedding = NULL WHERE id = 8")
        let bytes = rng.vector(dimension: Self.dimension).withUnsafeBytes { Array($0) }
        try raw.execute(
            "INSERT INTO items(id, content, source, embedding) VALUES (9000, 'raw', 'odd', ?)",
            [.blob(bytes)])
        raw.close()
        let items = try await SearchCollection(named: "items", in: Database(path: path))
        let answers = try await Self.answers(items)
        let stats = try await items.indexStatistics()
        #expect(stats.origin == .snapshot && stats.vectorCount == 707)
        #expect(answers == (try await Self.tableAnswers(path)))
    }

    @Test(
        "a damaged, truncated, foreign or unreachable snapshot is refused and rebuilt from the table",
        arguments: [
            "flip", "truncate", "short", "value", "part", "size", "dimension", "floor", "ahead",
        ])
    func refused(damage: String) async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("flat.trove")
        try await Self.savedCollection(path)
        let raw = try Connection(.file(path))
        let expected: String
        switch damage {
        case "flip":
            // One byte of a row's floats, changed in place: same sizes, only the checksum differs.
            let data = try raw.query(
                "SELECT data FROM items_index WHERE name = 'embedding.flat' AND part = 2")[0][0]
            guard case .blob(var bytes) = data else {
                Issue.record("no part 2: \(data)")
                return
            }
            bytes[17] ^= 0x40
            try raw.execute(
                "UPDATE items_index SET data = ? WHERE name = 'embedding.flat' AND part = 2",
                [.blob(bytes)])
            expected = "checksum"
        case "truncate":
            try raw.execute(
                "DELETE FROM items_index WHERE name = 'embedding.flat' AND part = (SELECT max(part) FROM items_index WHERE name = 'embedding.flat')"
            )
            expected = "truncated"
        case "short":
            // A part in the middle that lost its last bytes: the parts no longer add up to the size.
            try raw.execute(
                "UPDATE items_index SET data = substr(data, 1, length(data) - 100) WHERE name = 'embedding.flat' AND part = 1"
            )
            expected = "truncated"
        case "value":
            // Not a blob at all (the column's affinity keeps what raw SQL stores).
            try raw.execute(
                "UPDATE items_index SET data = 5 WHERE name = 'embedding.flat' AND part = 1")
            expected = "no data"
        case "part":
            try raw.execute("DELETE FROM items_index WHERE name = 'embedding.flat' AND part = 1")
            expected = "part 1 is missing"
        case "size":
            // An absurd recorded size must be refused before anything is allocated for it.
            try raw.execute(
                "UPDATE items_index SET total_bytes = 1 << 50 WHERE name = 'embedding.flat'")
            expected = "size"
        case "dimension":
            // A valid snapshot of an 8-d matrix in the 16-d field's place, at a reachable watermark.
            let other = try await SearchCollection("other", in: Database(path: path), dimension: 8)
            try await other.insert(hnswEntries(count: 500, dimension: 8, seed: 5))
            try await other.saveIndex()
            try raw.execute("DELETE FROM items_index WHERE name = 'embedding.flat'")
            try raw.execute(
                """
                INSERT INTO items_index SELECT 'embedding.flat', part, (SELECT max(seq) FROM items_log), format, checksum, total_bytes, data
                FROM other_index WHERE name = 'embedding.flat'
                """)
            expected = "\(Self.dimension)-d"
        case "floor":
            // What a prune does: drop the log up to its newest entry and record the floor.
            try raw.execute(
                "INSERT INTO trove_meta(key, value) VALUES ('log_floor.items', (SELECT max(seq) FROM items_log)) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            try raw.execute("DELETE FROM items_log WHERE seq < (SELECT max(seq) FROM items_log)")
            expected = "floor"
        default:
            try raw.execute(
                "UPDATE items_index SET watermark = watermark + 1000 WHERE name = 'embedding.flat'")
            expected = "ahead"
        }
        raw.close()
        let db = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: db)
        let answers = try await Self.answers(items)
        let stats = try await items.indexStatistics()
        guard case .rebuilt(let reason) = stats.origin else {
            Issue.record("expected a rebuild after \(damage), got \(stats.origin)")
            return
        }
        #expect(reason.contains(expected), "\(reason)")
        #expect(stats.vectorCount == 710)
        // Saved again by loadIndex, so the next open reads it back.
        try await items.loadIndex()
        #expect(
            try await SearchCollection(named: "items", in: Database(path: path)).loadIndex().origin
                == .snapshot)
        #expect(answers == (try await Self.tableAnswers(path)))
    }

    @Test(
        "a matrix saved in the earlier WITHOUT ROWID table loads, and the next save moves the table, keeping its other rows"
    )
    func earlierTableLayout() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("flat.trove")
        try await Self.savedCollection(path)
        let raw = try Connection(.file(path))
        #expect(
            try raw.scalar("SELECT count(*) FROM items_index WHERE name = 'embedding.flat'")!
                .int64Value! >= 3)
        // The table as files written before hold it, with a second snapshot beside the field's.
        try raw.execute(
            script: """
                CREATE TABLE earlier (
                    name TEXT NOT NULL, part INTEGER NOT NULL, watermark INTEGER NOT NULL,
                    format INTEGER NOT NULL, checksum INTEGER NOT NULL, total_bytes INTEGER NOT NULL,
                    data BLOB NOT NULL, PRIMARY KEY (name, part)
                ) WITHOUT ROWID;
                INSERT INTO earlier SELECT * FROM items_index;
                INSERT INTO earlier SELECT 'other', part, watermark, format, checksum, total_bytes, data FROM items_index;
                DROP TABLE items_index;
                ALTER TABLE earlier RENAME TO items_index;
                """)
        let other = try raw.query(
            "SELECT part, data FROM items_index WHERE name = 'other' ORDER BY part")
        raw.close()
        let db = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: db)
        let answers = try await Self.answers(items)
        #expect(try await items.indexStatistics().origin == .snapshot)
        try await items.insert(
            hnswEntries(count: 1, dimension: Self.dimension, seed: 6, firstID: 6_000))
        try await items.saveIndex()
        // Rowids now (a blob reader opens its parts by them); the other snapshot came along.
        #expect(
            try await db.query(
                "SELECT count(rowid) FROM items_index WHERE name = 'embedding.flat'")[0].int64(
                    at: 0)
                ?? 0 >= 3)
        #expect(
            try await db.query(
                "SELECT part, data FROM items_index WHERE name = 'other' ORDER BY part") == other)
        let reopened = try await SearchCollection(named: "items", in: Database(path: path))
        #expect(try await reopened.loadIndex().origin == .snapshot)
        _ = try await reopened.delete(id: .int(6_000))
        #expect(try await Self.answers(reopened) == answers)
    }

    @Test(
        "saveIndexes copies the log back into the file, so the next open reads the matrix through its memory map"
    )
    func saveIndexesCheckpoints() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("flat.trove")
        let db = try Database(path: path)
        let items = try await SearchCollection("items", in: db, dimension: Self.dimension)
        try await items.insert(hnswEntries(count: 700, dimension: Self.dimension, seed: 3))
        _ = try await items.search(vector: Self.queries(1)[0], limit: 1)
        // The rows and the matrix stay below the size at which the log is copied back by itself.
        let before = try #require(
            try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(try await db.saveIndexes() == ["items"])
        // The file itself now holds the rows and the matrix (700 × (8 + 4 × 96) bytes).
        let after = try #require(
            try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(
            before < 700 * (8 + 4 * Self.dimension) && after > 2 * 700 * (8 + 4 * Self.dimension),
            "\(before) → \(after)")
    }

    @Test("the checksum covers every byte whatever the cuts between parts")
    func wordSumIgnoresCuts() {
        var rng = SeededGenerator(seed: 77)
        let bytes = (0..<1_003).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBytes { all in
            var whole: UInt64 = 0
            IndexSnapshotStore.wordSum(all, at: 0, into: &whole)
            for cuts in [[1], [3, 7], [5, 6, 64, 999], [500]] {
                var sum: UInt64 = 0
                var start = 0
                for end in cuts + [all.count] {
                    IndexSnapshotStore.wordSum(
                        UnsafeRawBufferPointer(rebasing: all[start..<end]), at: start, into: &sum)
                    start = end
                }
                #expect(sum == whole, "\(cuts)")
            }
            var changed = Array(all)
            changed[501] ^= 1
            var other: UInt64 = 0
            changed.withUnsafeBytes { IndexSnapshotStore.wordSum($0, at: 0, into: &other) }
            #expect(other != whole)
        }
    }
}
