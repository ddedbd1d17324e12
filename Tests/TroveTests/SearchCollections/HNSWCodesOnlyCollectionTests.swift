import Foundation
import Testing
import TroveSQLite
import TroveTestSupport
import TroveVectors

@testable import Trove

/// `.hnsw(quantization: .int8, keepsFloatVectors: false)`: the index keeps only int8 codes and
/// every exact distance comes from the table's float32 vectors.
@Suite("Codes-only HNSW collections: int8 walk, float32 from the table")
struct HNSWCodesOnlyCollectionTests {
    static let dimension = 32
    static let kind = IndexKind.hnsw(
        m: 8, efConstruction: 60, quantization: .int8, keepsFloatVectors: false)

    func makeCollections(_ database: Database, count: Int) async throws -> (
        codes: SearchCollection, flat: SearchCollection
    ) {
        let entries = hnswEntries(count: count, dimension: Self.dimension, seed: 21)
        let codes = try await SearchCollection(
            "codes", in: database,
            configuration: CollectionConfiguration(dimension: Self.dimension, index: Self.kind))
        try await codes.insert(entries)
        let flat = try await SearchCollection("flat", in: database, dimension: Self.dimension)
        try await flat.insert(entries)
        return (codes, flat)
    }

    func queries(_ n: Int, seed: UInt64) -> [[Float]] {
        var rng = SeededGenerator(seed: seed)
        return (0..<n).map { _ in rng.vector(dimension: Self.dimension) }
    }

    @Test("the walk keeps recall@10 >= 0.95, and exact: true equals a flat collection's answer")
    func recallAndExact() async throws {
        let db = try Database()
        let (codes, flat) = try await makeCollections(db, count: 1_500)
        var approximate: [[Int64]] = []
        var exact: [[Int64]] = []
        for q in queries(40, seed: 5) {
            let truth = try await flat.search(vector: q, limit: 10)
            let query = Query().nearest(to: q, in: "embedding").limit(10)
            let found = try await codes.search(query)
            let plan = try await HNSWCollectionTests.vectorPlan(codes, query)
            #expect(
                plan.contains("HNSW graph walk") && plan.contains("re-scored from the table"),
                "\(plan)")
            approximate.append(found.map(\.id.integer))
            exact.append(truth.map(\.id.integer))
            // Exact distances come from the table, so they equal the flat collection's.
            let exactHits = try await codes.search(
                Query().nearest(to: q, in: "embedding").limit(10).exact(true))
            #expect(exactHits.map(\.id) == truth.map(\.id))
            for (a, b) in zip(exactHits, truth) {
                #expect(abs((a.distance ?? .nan) - (b.distance ?? .nan)) < 1e-5)
            }
            // A walked hit carries the float32 distance too, not the int8 approximation.
            for hit in found {
                let vector = try #require(try await codes.fetch(id: hit.id)).vector
                #expect(
                    abs(Double(DistanceMetric.cosine.distance(q, vector)) - (hit.distance ?? .nan))
                        < 1e-5)
            }
        }
        let r = recall(approximate, exact)
        #expect(r >= 0.95, "recall@10 \(r)")
    }

    @Test(
        "filtered search returns exactly k matching rows with recall >= 0.95 on both plans",
        arguments: [10, 800])
    func filtered(bucketsPerThousand: Int) async throws {
        let db = try Database()
        let (codes, flat) = try await makeCollections(db, count: 3_000)
        let sql = "json_extract(metadata, '$.bucket') < ?"
        let bindings: [SQLValue] = [.integer(Int64(bucketsPerThousand))]
        var approximate: [[Int64]] = []
        var exact: [[Int64]] = []
        var plans: Set<String> = []
        for q in queries(30, seed: 8) {
            let query = Query(.sql(sql, bindings)).nearest(to: q, in: "embedding").limit(10)
            let found = try await codes.search(query)
            plans.insert(try await HNSWCollectionTests.vectorPlan(codes, query))
            #expect(found.count == 10)
            let truth = try await flat.search(vector: q, where: .sql(sql, bindings), limit: 10)
            approximate.append(found.map(\.id.integer))
            exact.append(truth.map(\.id.integer))
        }
        // One plan for every query, the one the counts call for; a scan reads the table.
        #expect(plans.count == 1)
        let plan = plans.first ?? ""
        #expect(
            plan.contains(bucketsPerThousand == 10 ? "exact scan" : "graph traversal"), "\(plan)")
        #expect(
            plan.contains(bucketsPerThousand == 10 ? "from the table" : "int8 codes"), "\(plan)")
        let r = recall(approximate, exact)
        #expect(r >= 0.95, "recall@10 at \(bucketsPerThousand)/1000: \(r)")
    }

    @Test("the index holds no float32 copy, snapshots round trip, and raw SQL writes are seen")
    func memorySnapshotAndRawSQL() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("codes.trove")
        let q = queries(1, seed: 3)[0]
        do {
            let db = try Database(path: path)
            let (codes, _) = try await makeCollections(db, count: 1_000)
            let stats = try await codes.loadIndex()
            #expect(stats.snapshotWatermark == stats.watermark)
            let store = codes.documents.store
            let (usage, keeps) = try await db.withWriter { connection in
                let hnsw = try store.vectorIndex("embedding") as! HNSWVectorIndex
                return try store.indexes.withExclusiveIndexes(connection, loading: [hnsw]) { _ in
                    (hnsw.index!.memoryUsage, hnsw.index!.configuration.storesFullPrecision)
                }
            }
            #expect(!keeps)
            #expect(usage.fullPrecisionBytes == 0)
            // int8 codes (+ a scale) instead of 1,000 float32 vectors (128,000 bytes).
            #expect(usage.walkedVectorBytes < 1_000 * Self.dimension * 4 / 3)
        }
        let db = try Database(path: path)
        let codes = try await SearchCollection(named: "codes", in: db)
        #expect(try await codes.loadIndex().origin == .snapshot)
        // A row written by raw SQL is found by the next walk, with its table distance.
        let blob = q.withUnsafeBytes { SQLValue.blob(Array($0)) }
        try await db.execute(
            "INSERT INTO codes(id, content, embedding) VALUES (77777, 'raw', ?)", bindings: [blob])
        let top = try await codes.search(vector: q, limit: 1)
        #expect(top.map(\.id) == [77_777])
        #expect(abs(top[0].distance ?? .nan) < 1e-5)
        // Reopening with float vectors kept is another configuration.
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(
                "codes", in: db,
                configuration: CollectionConfiguration(
                    dimension: Self.dimension,
                    index: .hnsw(
                        m: 8, efConstruction: 60, quantization: .int8)))
        }
    }

    @Test("the codes-only planner scans the table only for few matching rows")
    func codesOnlyPlanner() {
        let total = 58_029
        let ef = 64
        // 1%: 581² ≤ 64 · 58,029: reading 581 vectors beats walking ~6,400 nodes.
        #expect(
            HNSWVectorIndex.codesOnlyPlan(matching: 581, total: total, k: 10, efSearch: ef)
                .isExactScan)
        // 10%: the walk, where the in-memory rule would still scan.
        #expect(
            !HNSWVectorIndex.codesOnlyPlan(matching: 5_810, total: total, k: 10, efSearch: ef)
                .isExactScan)
        #expect(HNSWIndex.plan(matching: 5_810, total: total, k: 10, efSearch: ef).isExactScan)
        // A handful of rows is always a scan.
        #expect(
            HNSWVectorIndex.codesOnlyPlan(matching: 100, total: 10_000_000, k: 10, efSearch: ef)
                .isExactScan)
    }

    @Test("the configuration round trips; older stored forms read as keeping float vectors")
    func configurationCoding() throws {
        let config = CollectionConfiguration(dimension: 4, index: Self.kind)
        let json = config.encodedJSON()
        #expect(json.contains("\"keepsFloatVectors\":false"))
        #expect(
            try JSONDecoder().decode(CollectionConfiguration.self, from: Data(json.utf8)) == config)
        let kept = CollectionConfiguration(dimension: 4, index: .hnsw(quantization: .int8))
        #expect(!kept.encodedJSON().contains("keepsFloatVectors"))
        let old =
            #"{"dimension":4,"metric":"cosine","index":{"hnsw":{"m":16,"efConstruction":200,"efSearch":64,"quantization":"int8"}}}"#
        #expect(
            try JSONDecoder().decode(CollectionConfiguration.self, from: Data(old.utf8)).index
                == .hnsw(quantization: .int8, keepsFloatVectors: true))
        // Codes only needs int8 codes to build the graph from.
        #expect(throws: TroveError.self) {
            try IndexKind.hnsw(quantization: .none, keepsFloatVectors: false).validate()
        }
    }
}

extension HNSWFilterPlan {
    var isExactScan: Bool {
        if case .exactScan = self { return true }
        return false
    }
}
