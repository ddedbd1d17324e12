import Foundation
import Testing
import TroveSQLite
import TroveTestSupport
import TroveVectors

@testable import Trove

/// Seeded rows for HNSW tests: `count` rows of `dimension` floats, sources "even"/"odd" and a
/// metadata `bucket` (row number mod 1,000) so filters of any selectivity in 0.1% steps exist.
func hnswEntries(count: Int, dimension: Int, seed: UInt64, firstID: Int64 = 1) -> [VectorEntry] {
    var rng = SeededGenerator(seed: seed)
    return (0..<count).map { i in
        let id = firstID + Int64(i)
        return VectorEntry(
            id: .int(id), content: "row \(id)", source: i % 2 == 0 ? "even" : "odd",
            metadata: "{\"bucket\":\(i % 1000)}", vector: rng.vector(dimension: dimension))
    }
}

/// Mean recall@k of approximate results against exact ones.
func recall(_ approximate: [[Int64]], _ exact: [[Int64]]) -> Double {
    var found = 0
    var wanted = 0
    for (a, e) in zip(approximate, exact) {
        found += Set(a).intersection(e).count
        wanted += e.count
    }
    return wanted == 0 ? 1 : Double(found) / Double(wanted)
}

/// The ids and vectors the in-memory HNSW index holds, read on the actor.
func indexContents(_ collection: SearchCollection) async throws -> [Int64: [Float]] {
    let store = collection.documents.store
    return try await collection.database.withWriter { connection in
        let hnsw = try store.vectorIndex("embedding") as! HNSWVectorIndex
        return try store.indexes.withExclusiveIndexes(connection, loading: [hnsw]) { _ in
            let index = hnsw.index!
            var out: [Int64: [Float]] = [:]
            for id in index.ids { out[id] = index.vector(for: id) }
            return out
        }
    }
}

/// What the table says the index must hold: each row's vector, normalised under cosine.
func tableVectors(_ database: Database, table: String, metric: DistanceMetric) async throws
    -> [Int64: [Float]]
{
    var out: [Int64: [Float]] = [:]
    for row in try await database.query(
        "SELECT id, embedding FROM \(table) WHERE embedding IS NOT NULL")
    {
        guard let id = row[0].int64Value, case .blob(let bytes) = row[1] else { continue }
        var vector = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        if metric == .cosine {
            let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
            vector = vector.map { $0 / norm }
        }
        out[id] = vector
    }
    return out
}

/// Whether the index holds exactly the table's vectors (to float rounding).
func agree(_ index: [Int64: [Float]], _ table: [Int64: [Float]]) -> Bool {
    guard Set(index.keys) == Set(table.keys) else { return false }
    for (id, v) in table {
        guard let w = index[id], w.count == v.count else { return false }
        for i in v.indices where abs(v[i] - w[i]) > 1e-5 { return false }
    }
    return true
}

/// One 3,000 x 32-d HNSW collection at default parameters, built once and shared by the
/// read-only tests (an HNSW build is the slow part of a debug test run).
enum SharedHNSW {
    static let collection = Task<SearchCollection, any Error> {
        let items = try await SearchCollection(
            "items", in: Database(),
            configuration: CollectionConfiguration(
                dimension: HNSWCollectionTests.dimension, index: .hnsw()))
        try await items.insert(
            hnswEntries(count: 3_000, dimension: HNSWCollectionTests.dimension, seed: 7))
        return items
    }
}

@Suite("HNSW collections: approximate search in the store")
struct HNSWCollectionTests {
    static let dimension = 32
    static let hnsw = IndexKind.hnsw()
    /// Cheaper parameters for tests about consistency rather than recall.
    static let small = IndexKind.hnsw(m: 8, efConstruction: 40)

    func makeHNSW(_ database: Database, count: Int, seed: UInt64 = 7, kind: IndexKind = small)
        async throws
        -> SearchCollection
    {
        let items = try await SearchCollection(
            "items", in: database,
            configuration: CollectionConfiguration(dimension: Self.dimension, index: kind))
        try await items.insert(hnswEntries(count: count, dimension: Self.dimension, seed: seed))
        return items
    }

    /// The vector leg's line of `explain`: how the search runs.
    static func vectorPlan(_ items: SearchCollection, _ query: Query) async throws -> String {
        try await items.explain(query).first { $0.hasPrefix("vector leg") } ?? ""
    }

    func queries(_ n: Int, seed: UInt64) -> [[Float]] {
        var rng = SeededGenerator(seed: seed)
        return (0..<n).map { _ in rng.vector(dimension: Self.dimension) }
    }

    @Test("recall@10 >= 0.95 against the exact answer at default parameters (3,000 x 32-d)")
    func recallAtTen() async throws {
        let items = try await SharedHNSW.collection.value
        let db = items.database
        var approximate: [[Int64]] = []
        var exact: [[Int64]] = []
        for q in queries(100, seed: 99) {
            let found = try await items.search(Query().nearest(to: q, in: "embedding").limit(10))
            #expect(found.count == 10)
            approximate.append(found.map(\.id.integer))
            exact.append(
                try await items.search(
                    Query().nearest(to: q, in: "embedding").limit(10).exact(true)
                ).map(\.id.integer))
        }
        let r = recall(approximate, exact)
        #expect(r >= 0.95, "recall@10 \(r)")
        #expect(
            try await Self.vectorPlan(
                items, Query().nearest(to: queries(1, seed: 99)[0], in: "embedding")
            ).contains(
                "HNSW graph walk"))
        // A wider per-query candidate list finds at least as much, a narrow one less.
        var wide: [[Int64]] = []
        var narrow: [[Int64]] = []
        for q in queries(100, seed: 99) {
            wide.append(
                try await items.search(
                    Query().nearest(to: q, in: "embedding").limit(10).efSearch(400)
                ).map(
                    \.id.integer))
            narrow.append(
                try await items.search(
                    Query().nearest(to: q, in: "embedding").limit(10).efSearch(10)
                ).map(\.id.integer)
            )
        }
        #expect(recall(wide, exact) >= r)
        #expect(recall(narrow, exact) <= recall(wide, exact))
        await #expect(throws: TroveError.self) {
            _ = try await items.search(
                Query().nearest(to: queries(1, seed: 1)[0], in: "embedding").efSearch(0))
        }
        // exact: true on the HNSW collection gives the same answer as a flat collection.
        let flat = try await SearchCollection("flat", in: db, dimension: Self.dimension)
        try await flat.insert(hnswEntries(count: 3_000, dimension: Self.dimension, seed: 7))
        for (q, e) in zip(queries(100, seed: 99).prefix(20), exact) {
            #expect(try await flat.search(vector: q, limit: 10).map(\.id.integer) == e)
        }
        // Hybrid search uses the approximate leg without error.
        let hybrid = try await items.search(
            Query().nearest(to: queries(1, seed: 5)[0], in: "embedding").matching("row").limit(5))
        #expect(hybrid.count == 5)
    }

    @Test(
        "filtered search at 0.1%, 1%, 10% and 50% returns exactly k matching rows with recall >= 0.95",
        arguments: [1, 10, 100, 500])
    func filtered(bucketsPerThousand: Int) async throws {
        let items = try await SharedHNSW.collection.value
        let db = items.database
        let sql = "json_extract(metadata, '$.bucket') < ?"
        let bindings: [SQLValue] = [.integer(Int64(bucketsPerThousand))]
        let matching = Set(
            try await db.query(
                "SELECT id FROM items WHERE json_extract(metadata, '$.bucket') < ?",
                bindings: bindings
            ).compactMap { $0[0].int64Value })
        #expect(matching.count == 3 * bucketsPerThousand)
        let k = 10
        var approximate: [[Int64]] = []
        var exact: [[Int64]] = []
        var plans: Set<String> = []
        for q in queries(40, seed: 1234) {
            let query = Query(.sql(sql, bindings)).nearest(to: q, in: "embedding").limit(k)
            let found = try await items.search(query)
            plans.insert(try await Self.vectorPlan(items, query))
            #expect(found.count == min(k, matching.count))
            #expect(found.allSatisfy { matching.contains($0.id.integer) })
            approximate.append(found.map(\.id.integer))
            exact.append(
                try await items.search(
                    Query(.sql(sql, bindings)).nearest(to: q, in: "embedding").limit(k).exact(true)
                )
                .map(\.id.integer))
        }
        let r = recall(approximate, exact)
        #expect(r >= 0.95, "recall@10 at \(bucketsPerThousand)/1000: \(r)")
        // The plan depends only on the counts, so every query took the same one: the index's.
        #expect(plans.count == 1)
        let expected = HNSWIndex.plan(matching: matching.count, total: 3_000, k: k, efSearch: 64)
        #expect(plans.first?.contains(expected.description) == true, "\(plans)")
    }

    @Test(
        "the planner walks the graph with a filter when candidates are many and still returns k matching"
    )
    func filteredGraphWalk() async throws {
        let items = try await SharedHNSW.collection.value
        let db = items.database
        // 90% of the rows (bucket < 900) is above the exact-scan threshold for 3,000 rows.
        let sql = "json_extract(metadata, '$.bucket') < 900"
        let matching = Set(
            try await db.query("SELECT id FROM items WHERE \(sql)").compactMap { $0[0].int64Value })
        var approximate: [[Int64]] = []
        var exact: [[Int64]] = []
        for q in queries(30, seed: 77) {
            let query = Query(.sql(sql, [])).nearest(to: q, in: "embedding").limit(10)
            let found = try await items.search(query)
            let plan = try await Self.vectorPlan(items, query)
            #expect(plan.contains("graph traversal"), "\(plan)")
            #expect(found.count == 10)
            approximate.append(found.map(\.id.integer))
            exact.append(
                try await items.search(
                    Query(.sql(sql, [])).nearest(to: q, in: "embedding").limit(10).exact(true)
                ).map(
                    \.id.integer))
            #expect(found.allSatisfy { matching.contains($0.id.integer) })
        }
        #expect(recall(approximate, exact) >= 0.95)
        let q = queries(1, seed: 77)[0]
        #expect(
            try await Self.vectorPlan(items, Query().nearest(to: q, in: "embedding").exact())
                .contains(
                    "exact scan (requested)"))
        #expect(
            try await Self.vectorPlan(items, Query().nearest(to: q, in: "embedding")).contains(
                "HNSW graph walk"))
    }

    @Test("raw-SQL insert, update and delete are visible to the next HNSW query")
    func rawSQL() async throws {
        let db = try Database()
        let items = try await makeHNSW(db, count: 500)
        var rng = SeededGenerator(seed: 3)
        let v = rng.vector(dimension: Self.dimension)
        let blob = SQLValue.blob(v.withUnsafeBytes { Array($0) })
        #expect(try await items.search(vector: v, limit: 1).first?.distance ?? 0 > 1e-3)
        try await db.execute(
            "INSERT INTO items(id, content, embedding) VALUES (9001, 'raw', ?)", bindings: [blob])
        #expect(try await items.search(vector: v, limit: 1).map(\.id) == [9001])
        try await db.execute(
            "UPDATE items SET embedding = ? WHERE id = 9001",
            bindings: [.blob(v.map { -$0 }.withUnsafeBytes { Array($0) })])
        #expect(try await items.search(vector: v, limit: 1).map(\.id) != [9001])
        #expect(try await items.search(vector: v.map { -$0 }, limit: 1).map(\.id) == [9001])
        try await db.execute("DELETE FROM items WHERE id = 9001")
        #expect(
            !(try await items.search(vector: v.map { -$0 }, limit: 20).contains { $0.id == 9001 }))
        try await db.execute("DELETE FROM items WHERE id <= 100")
        let hits = try await items.search(vector: v, limit: 400)
        #expect(hits.count == 400)
        #expect(hits.allSatisfy { $0.id > 100 })
        #expect(
            agree(
                try await indexContents(items),
                try await tableVectors(db, table: "items", metric: .cosine)))
    }

    @Test("another connection's writes reach this connection's HNSW index")
    func secondConnection() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ann.trove")
        let first = try await makeHNSW(try Database(path: path), count: 300)
        _ = try await first.search(vector: queries(1, seed: 1)[0], limit: 5)
        let second = try await SearchCollection(named: "items", in: Database(path: path))
        try await second.insert(
            hnswEntries(count: 50, dimension: Self.dimension, seed: 11, firstID: 5_000))
        try await second.delete(id: 1)
        let contents = try await indexContents(first)
        #expect(contents.count == 349)
        #expect(contents[1] == nil && contents[5_000] != nil)
    }

    @Test("a snapshot round trip across close and reopen loads instead of rebuilding")
    func snapshotRoundTrip() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ann.trove")
        let qs = queries(20, seed: 5)
        var before: [[Int64]] = []
        do {
            let db = try Database(path: path)
            let items = try await makeHNSW(db, count: 1_000)
            let first = try await items.loadIndex()
            #expect(first.origin == .rebuilt(reason: "no snapshot saved"))
            #expect(first.snapshotWatermark == first.watermark)  // loadIndex saved it
            for q in qs {
                before.append(try await items.search(vector: q, limit: 10).map(\.id.integer))
            }
            // Changes after the save are replayed from the log on the next open.
            try await items.insert(
                hnswEntries(count: 20, dimension: Self.dimension, seed: 12, firstID: 10_000))
            try await items.delete(id: 2)
            #expect(try await items.indexStatistics().snapshotWatermark == first.watermark)
        }
        let db = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: db)
        let stats = try await items.loadIndex()
        #expect(stats.origin == .snapshot)
        #expect(stats.replayedRows == 21)
        #expect(stats.vectorCount == 1_019)
        #expect(
            agree(
                try await indexContents(items),
                try await tableVectors(db, table: "items", metric: .cosine)))
        var after: [[Int64]] = []
        for q in qs {
            after.append(
                try await items.search(vector: q, limit: 10).map(\.id.integer).filter {
                    $0 < 10_000
                }
            )
        }
        #expect(recall(after, before.map { $0.filter { $0 != 2 } }) >= 0.9)
        // An explicit save moves the snapshot's watermark forward; the next open replays nothing.
        let saved = try await items.saveIndex()
        #expect(saved.snapshotWatermark == saved.watermark)
        #expect(try await db.saveIndexes().isEmpty)
        let again = try await SearchCollection(named: "items", in: Database(path: path)).loadIndex()
        #expect(again.origin == .snapshot && again.replayedRows == 0)
    }

    @Test(
        "a corrupt, truncated or stale snapshot is rebuilt from the table and answers correctly",
        arguments: ["flip", "truncate", "part", "size", "format", "floor", "ahead"])
    func corruptSnapshot(damage: String) async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ann.trove")
        do {
            let items = try await makeHNSW(try Database(path: path), count: 600)
            try await items.saveIndex()
            // Changes after the save, so a pruned log floor can pass the snapshot's watermark.
            try await items.insert(
                hnswEntries(count: 10, dimension: Self.dimension, seed: 13, firstID: 7_000))
        }
        let raw = try Connection(.file(path))
        switch damage {
        case "flip":
            // One byte of the body changed in place (sizes unchanged): only the checksum fails.
            guard
                case .blob(var bytes) = try raw.query(
                    "SELECT data FROM items_index WHERE part = 0")[0][0]
            else {
                Issue.record("no part 0")
                return
            }
            bytes[100] ^= 0xFF
            try raw.execute("UPDATE items_index SET data = ? WHERE part = 0", [.blob(bytes)])
        case "truncate":
            try raw.execute("UPDATE items_index SET data = substr(data, 1, length(data) - 100)")
        case "part":
            try raw.execute("UPDATE items_index SET part = part + 1000")
        case "size":
            // An absurd recorded size must be refused before anything is allocated for it.
            try raw.execute("UPDATE items_index SET total_bytes = 1 << 50")
        case "format":
            try raw.execute("UPDATE items_index SET format = 99")
        case "floor":
            // What a prune does: drop the log up to its newest entry and record the floor.
            try raw.execute(
                "INSERT INTO trove_meta(key, value) VALUES ('log_floor.items', (SELECT max(seq) FROM items_log)) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            try raw.execute("DELETE FROM items_log WHERE seq < (SELECT max(seq) FROM items_log)")
        default:
            try raw.execute("UPDATE items_index SET watermark = watermark + 1000")
        }
        raw.close()
        let db = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: db)
        let stats = try await items.loadIndex()
        guard case .rebuilt(let reason) = stats.origin else {
            Issue.record("expected a rebuild after \(damage), got \(stats.origin)")
            return
        }
        #expect(!reason.isEmpty)
        if damage == "flip" { #expect(reason.contains("checksum"), "\(reason)") }
        #expect(stats.vectorCount == 610)
        #expect(
            agree(
                try await indexContents(items),
                try await tableVectors(db, table: "items", metric: .cosine)))
        let q = queries(1, seed: 8)[0]
        let exact = try await items.search(
            Query().nearest(to: q, in: "embedding").limit(10).exact(true)
        ).map(
            \.id.integer)
        #expect(
            recall([try await items.search(vector: q, limit: 10).map(\.id.integer)], [exact]) >= 0.9
        )
        // The rebuilt index was saved again, so the next open loads it.
        #expect(
            try await SearchCollection(named: "items", in: Database(path: path)).loadIndex().origin
                == .snapshot)
    }

    @Test("rebuildIndex discards the snapshot, rebuilds from the table and saves again")
    func rebuildIndex() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ann.trove")
        let db = try Database(path: path)
        let items = try await makeHNSW(db, count: 300)
        try await items.saveIndex()
        let stats = try await items.rebuildIndex()
        #expect(stats.origin == .rebuilt(reason: "rebuild requested"))
        #expect(stats.vectorCount == 300 && stats.snapshotWatermark == stats.watermark)
        #expect(
            agree(
                try await indexContents(items),
                try await tableVectors(db, table: "items", metric: .cosine)))
        #expect(
            try await SearchCollection(named: "items", in: Database(path: path)).loadIndex().origin
                == .snapshot)
        // Flat collections rebuild their matrix from the table and save it too.
        let flat = try await SearchCollection("flat", in: db, dimension: 4)
        try await flat.insert(VectorEntry(id: 1, content: "x", vector: [1, 0, 0, 0]))
        let flatStats = try await flat.rebuildIndex()
        #expect(
            flatStats.origin == .rebuilt(reason: "rebuild requested") && flatStats.vectorCount == 1)
        #expect(flatStats.snapshotWatermark == flatStats.watermark)
    }

    @Test(
        "the index kind is frozen: reopening with another kind or parameters is a schema mismatch")
    func kindIsFrozen() async throws {
        let db = try Database()
        _ = try await SearchCollection(
            "items", in: db, configuration: CollectionConfiguration(dimension: 4, index: .hnsw()))
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(
                "items", in: db, configuration: CollectionConfiguration(dimension: 4))
        }
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(
                "items", in: db,
                configuration: CollectionConfiguration(
                    dimension: 4, index: .hnsw(quantization: .int8)))
        }
        _ = try await SearchCollection("flat", in: db, dimension: 4)
        do {
            _ = try await SearchCollection(
                "flat", in: db, configuration: CollectionConfiguration(dimension: 4, index: .hnsw())
            )
            Issue.record("expected schemaMismatch")
        } catch TroveError.schemaMismatch(let collection, let details) {
            #expect(collection == "flat")
            #expect(details.contains("index"))
        }
        #expect(try await db.configuration(of: "items")?.index == .hnsw())
        // Bad parameters are refused before anything is created.
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(
                "bad", in: db,
                configuration: CollectionConfiguration(dimension: 4, index: .hnsw(m: 1)))
        }
    }

    @Test(
        "configurations stored without an index field, or by the flat-only format, decode as flat")
    func oldConfigurations() throws {
        let old = #"{"dimension":4,"metric":"cosine"}"#
        #expect(
            try JSONDecoder().decode(CollectionConfiguration.self, from: Data(old.utf8)).index
                == .flat)
        let flat = #"{"dimension":4,"metric":"cosine","index":{"flat":{}}}"#
        #expect(
            try JSONDecoder().decode(CollectionConfiguration.self, from: Data(flat.utf8)).index
                == .flat)
        let hnsw = CollectionConfiguration(dimension: 4, index: .hnsw(m: 8, quantization: .binary))
        #expect(
            try JSONDecoder().decode(
                CollectionConfiguration.self, from: Data(hnsw.encodedJSON().utf8)) == hnsw)
    }

    @Test(
        "int8 and binary quantized collections keep recall@10 >= 0.95 through re-scoring",
        arguments: [HNSWQuantization.int8, .binary])
    func quantized(quantization: HNSWQuantization) async throws {
        let db = try Database()
        let items = try await makeHNSW(
            db, count: 1_000, kind: .hnsw(m: 8, efConstruction: 60, quantization: quantization))
        var approximate: [[Int64]] = []
        var exact: [[Int64]] = []
        for q in queries(40, seed: 31) {
            approximate.append(try await items.search(vector: q, limit: 10).map(\.id.integer))
            exact.append(
                try await items.search(
                    Query().nearest(to: q, in: "embedding").limit(10).exact(true)
                ).map(\.id.integer))
        }
        let r = recall(approximate, exact)
        // One sign bit per dimension is a coarse walk at 32-d; re-scoring still ranks what it finds.
        #expect(r >= (quantization == .binary ? 0.6 : 0.95), "recall@10 \(quantization): \(r)")
        // A stored vector is its own nearest neighbour after float32 re-scoring.
        for id in [Int64(3), 500, 999] {
            let vector = try #require(try await items.fetch(id: .int(id))).vector
            #expect(try await items.search(vector: vector, limit: 1).map(\.id.integer) == [id])
        }
    }

    @Test("API writes after the index is loaded are applied directly, deletes and updates included")
    func apiWrites() async throws {
        let db = try Database()
        let items = try await makeHNSW(db, count: 400)
        _ = try await items.loadIndex()
        try await items.insert(
            hnswEntries(count: 100, dimension: Self.dimension, seed: 41, firstID: 1_000))
        try await items.upsert(
            VectorEntry(
                id: 5, content: "moved", vector: [Float](repeating: 1, count: Self.dimension)))
        try await items.delete(where: .source("odd"))
        #expect(try await items.indexStatistics().replayedRows == 0)
        #expect(
            agree(
                try await indexContents(items),
                try await tableVectors(db, table: "items", metric: .cosine)))
        #expect(
            try await items.search(vector: [Float](repeating: 1, count: Self.dimension), limit: 1)
                .map(\.id) == [5])
        try await items.delete(where: .all)
        #expect(
            try await items.search(vector: [Float](repeating: 1, count: Self.dimension), limit: 5)
                .isEmpty)
    }
}
