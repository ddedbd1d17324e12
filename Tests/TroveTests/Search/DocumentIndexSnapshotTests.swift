import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// A document collection's HNSW field saves its graph with the change-log watermark it reflects
/// (`<name>_index`, one row key per field), loads it on the next open and replays the log after
/// it; a stale, damaged or mismatched snapshot is rebuilt from the table.
@Suite("HNSW snapshots of document vector fields")
struct DocumentIndexSnapshotTests {
    static let dimension = 16
    static func schema(m: Int = 12) -> DocumentSchema {
        DocumentSchema(
            fields: [.integer("group", indexed: true), .vector("v", dimension: dimension)],
            vectorIndexes: ["v": .hnsw(m: m, efConstruction: 100, efSearch: 64)])
    }

    /// `count` documents with seeded unit vectors, ids from 1.
    static func fill(_ docs: DocumentCollection, count: Int, seed: UInt64 = 5) async throws
        -> [Int64: [Float]]
    {
        var rng = SeededGenerator(seed: seed)
        var vectors: [Int64: [Float]] = [:]
        var documents: [Document] = []
        for id in Int64(1)...Int64(count) {
            let v = rng.unitVector(dimension: dimension)
            vectors[id] = v
            documents.append(Document(id: .int(id), ["group": .int(id % 10), "v": .vector(v)]))
        }
        try await docs.insert(documents)
        return vectors
    }

    static func queries(_ n: Int, seed: UInt64 = 99) -> [[Float]] {
        var rng = SeededGenerator(seed: seed)
        return (0..<n).map { _ in rng.unitVector(dimension: dimension) }
    }

    /// The top 10 of each query, filtered by group for every other query.
    static func results(_ docs: DocumentCollection, _ queries: [[Float]]) async throws
        -> [[DocumentID]]
    {
        var all: [[DocumentID]] = []
        for (i, q) in queries.enumerated() {
            let query = i.isMultiple(of: 2) ? Query() : Query(Field("group") == .int(Int64(i % 10)))
            all.append(
                try await docs.search(query.nearest(to: q, in: "v").limit(10)).map(\.record.id))
        }
        return all
    }

    static func blob(_ vector: [Float]) -> SQLValue {
        .blob(vector.withUnsafeBytes { Array($0) })
    }

    /// A collection of 1,500 documents whose graph was saved; returns the results before close.
    static func savedCollection(at path: String) async throws -> (
        before: [[DocumentID]], stats: IndexStatistics, vectors: [Int64: [Float]]
    ) {
        let db = try Database(path: path)
        let docs = try await db.documents("docs", schema: schema())
        let vectors = try await fill(docs, count: 1_500)
        let before = try await results(docs, queries(12))
        let stats = try await docs.saveIndex(field: "v")
        return (before, stats, vectors)
    }

    @Test("reopened, the graph is loaded from its snapshot, not rebuilt, and answers as before")
    func loadedOnReopen() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.trove")
        let (before, saved, _) = try await Self.savedCollection(at: path)
        #expect(saved.origin == .rebuilt(reason: "no snapshot saved"))
        #expect(saved.snapshotWatermark == saved.watermark && saved.vectorCount == 1_500)

        let db = try Database(path: path)
        let docs = try await db.documents(named: "docs")
        #expect(try await docs.indexStatistics(field: "v").origin == .notLoaded)
        #expect(try await Self.results(docs, Self.queries(12)) == before)
        let stats = try await docs.indexStatistics(field: "v")
        #expect(stats.origin == .snapshot)
        #expect(stats.replayedRows == 0 && stats.vectorCount == 1_500)
        #expect(stats.snapshotWatermark == saved.watermark && stats.watermark == saved.watermark)
        #expect(try await docs.verify().isEmpty)
        // One snapshot row per field, keyed by the field's name.
        #expect(
            try await db.query("SELECT DISTINCT name FROM docs_index").map { $0.string(at: 0) } == [
                "v"
            ])
    }

    @Test(
        "changes made after the snapshot, by the API and by raw SQL, are replayed after reopening")
    func changesAfterSnapshot() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.trove")
        _ = try await Self.savedCollection(at: path)
        var rng = SeededGenerator(seed: 1234)
        let moved = rng.unitVector(dimension: Self.dimension)
        let added = rng.unitVector(dimension: Self.dimension)
        do {
            let db = try Database(path: path)
            let docs = try await db.documents(named: "docs")
            try await docs.upsert([Document(id: 1, ["group": 1, "v": .vector(moved)])])
            try await db.execute("DELETE FROM docs WHERE id = 2")
            try await db.execute(
                "INSERT INTO docs(id, \"group\", v) VALUES (5000, 0, ?)",
                bindings: [Self.blob(added)])
            try await db.execute(
                "UPDATE docs SET v = ? WHERE id = 3", bindings: [Self.blob(added.map { -$0 })])
        }
        let db = try Database(path: path)
        let docs = try await db.documents(named: "docs")
        #expect(
            try await docs.search(Query().nearest(to: moved, in: "v").limit(1)).first?.record.id
                == 1)
        #expect(
            try await docs.search(Query().nearest(to: added, in: "v").limit(1)).first?.record.id
                == 5000)
        #expect(
            try await docs.search(Query().nearest(to: added.map { -$0 }, in: "v").limit(1)).first?
                .record.id == 3)
        let all = try await docs.search(Query().nearest(to: added, in: "v").limit(1_600)).map(
            \.record.id)
        #expect(all.count == 1_500 && !all.contains(2))
        let stats = try await docs.indexStatistics(field: "v")
        #expect(stats.origin == .snapshot)
        #expect(stats.replayedRows == 4 && stats.vectorCount == 1_500)
        #expect(try await docs.verify().isEmpty)
    }

    @Test("a snapshot the log was pruned past is rebuilt from the table")
    func staleSnapshot() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.trove")
        let (_, saved, _) = try await Self.savedCollection(at: path)
        var rng = SeededGenerator(seed: 4321)
        let moved = rng.unitVector(dimension: Self.dimension)
        do {
            // More than the log keeps (ChangeLog.limit) without loading the index; the next API
            // write prunes the log past the snapshot's watermark.
            let db = try Database(path: path)
            let docs = try await db.documents(named: "docs")
            for _ in 0..<20 { try await db.execute("UPDATE docs SET \"group\" = \"group\" + 1") }
            try await docs.upsert([Document(id: 7, ["group": 0, "v": .vector(moved)])])
            let floor = try await db.query(
                "SELECT CAST(value AS INTEGER) FROM trove_meta WHERE key = 'log_floor.docs'"
            )
            .first?.int64(at: 0)
            #expect((floor ?? 0) > saved.watermark)
        }
        let db = try Database(path: path)
        let docs = try await db.documents(named: "docs")
        #expect(
            try await docs.search(Query().nearest(to: moved, in: "v").limit(1)).first?.record.id
                == 7)
        let stats = try await docs.indexStatistics(field: "v")
        guard case .rebuilt(let reason) = stats.origin else {
            Issue.record("expected a rebuild, got \(stats.origin)")
            return
        }
        #expect(reason.contains("below the pruned log floor"))
        #expect(stats.vectorCount == 1_500)
    }

    @Test("a damaged snapshot (one byte flipped) is rebuilt from the table and answers as before")
    func damagedSnapshot() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.trove")
        let (_, _, vectors) = try await Self.savedCollection(at: path)
        do {
            let db = try Database(path: path)
            var bytes = try #require(
                try await db.query("SELECT data FROM docs_index WHERE name = 'v' AND part = 0")
                    .first?.blob(at: 0))
            bytes[bytes.count / 2] ^= 0x5A
            try await db.execute(
                "UPDATE docs_index SET data = ? WHERE name = 'v' AND part = 0",
                bindings: [.blob(bytes)])
        }
        let db = try Database(path: path)
        let docs = try await db.documents(named: "docs")
        let stats = try await docs.loadIndex(field: "v")
        guard case .rebuilt(let reason) = stats.origin else {
            Issue.record("expected a rebuild, got \(stats.origin)")
            return
        }
        #expect(reason.contains("snapshot rejected"))
        // The rebuilt graph finds every sampled document's own vector first.
        for (id, vector) in vectors.sorted(by: { $0.key < $1.key }).prefix(25) {
            #expect(
                try await docs.search(Query().nearest(to: vector, in: "v").limit(1)).first?.record
                    .id == .int(id))
        }
        // loadIndex saved the rebuilt graph: the next open loads it.
        #expect(stats.snapshotWatermark == stats.watermark)
        #expect(
            try await Database(path: path).documents(named: "docs").loadIndex(field: "v").origin
                == .snapshot)
    }

    @Test("a snapshot made with other parameters (M) is rebuilt from the table")
    func otherConfiguration() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.trove")
        do {
            // Two collections with the same rows and log; one's graph (M 8) is put where the
            // other's (M 12) belongs.
            let db = try Database(path: path)
            let a = try await db.documents("a", schema: Self.schema(m: 8))
            let b = try await db.documents("b", schema: Self.schema(m: 12))
            _ = try await Self.fill(a, count: 300)
            _ = try await Self.fill(b, count: 300)
            try await a.saveIndex(field: "v")
            try await db.execute("CREATE TABLE b_index AS SELECT * FROM a_index")
        }
        let db = try Database(path: path)
        let b = try await db.documents(named: "b")
        let stats = try await b.loadIndex(field: "v")
        guard case .rebuilt(let reason) = stats.origin else {
            Issue.record("expected a rebuild, got \(stats.origin)")
            return
        }
        #expect(reason.contains("differ from the field's"))
        #expect(stats.vectorCount == 300)
    }

    @Test(
        "rebuildIndex builds from the table and saves; statistics, saveIndexes and unknown fields")
    func administration() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("s.trove")
        _ = try await Self.savedCollection(at: path)
        let db = try Database(path: path)
        let docs = try await db.documents(named: "docs")
        let rebuilt = try await docs.rebuildIndex(field: "v")
        #expect(rebuilt.origin == .rebuilt(reason: "rebuild requested"))
        #expect(rebuilt.vectorCount == 1_500 && rebuilt.snapshotWatermark == rebuilt.watermark)
        #expect(try await db.saveIndexes() == [])  // nothing unsaved
        try await db.execute("DELETE FROM docs WHERE id <= 10")
        _ = try await docs.search(Query().nearest(to: Self.queries(1)[0], in: "v"))
        #expect(try await db.saveIndexes() == ["docs"])
        let stats = try await docs.indexStatistics(field: "v")
        #expect(stats.vectorCount == 1_490 && stats.snapshotWatermark == stats.watermark)
        await #expect(throws: TroveError.self) { try await docs.indexStatistics(field: "group") }
        await #expect(throws: TroveError.self) { try await docs.saveIndex(field: "nope") }
        // A flat field reports where it came from and saves its matrix the same way.
        let flat = try await db.documents(
            "flat", schema: DocumentSchema(fields: [.vector("v", dimension: 4)]))
        try await flat.insert(Document(id: 1, ["v": .vector([1, 0, 0, 0])]))
        let loaded = try await flat.loadIndex(field: "v")
        #expect(
            loaded.origin == .rebuilt(reason: "no snapshot saved")
                && loaded.snapshotWatermark == loaded.watermark)
        #expect(
            try await db.query("SELECT count(*) FROM flat_index WHERE name = 'v.flat'")[0][0]
                == .integer(1))
    }

    @Test("API writes save the graph once 5,000 log entries are unsaved")
    func autosave() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("s.trove"))
        let docs = try await db.documents("docs", schema: Self.schema())
        _ = try await Self.fill(docs, count: 200)
        let loaded = try await docs.loadIndex(field: "v")
        #expect(loaded.snapshotWatermark == loaded.watermark)
        var rng = SeededGenerator(seed: 8)
        let few = (1...100).map {
            Document(
                id: .int(Int64(1_000 + $0)),
                ["group": 1, "v": .vector(rng.unitVector(dimension: Self.dimension))])
        }
        try await docs.insert(few)
        // not due yet
        #expect(try await docs.indexStatistics(field: "v").snapshotWatermark == loaded.watermark)
        let many = (1...5_000).map {
            Document(
                id: .int(Int64(10_000 + $0)),
                ["group": 1, "v": .vector(rng.unitVector(dimension: Self.dimension))])
        }
        try await docs.insert(many)
        let stats = try await docs.indexStatistics(field: "v")
        #expect(stats.vectorCount == 5_300 && stats.snapshotWatermark == stats.watermark)
    }

    @Test("a search collection's saved graph (format-2 fixture, pages_index) still loads")
    func searchCollectionFixture() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("format2.trove")
        try FileManager.default.copyItem(
            atPath: TestPaths.fixtures.appendingPathComponent("format2.trove").path, toPath: path)
        // Read-only, the preset layout finds the graph under the key files before format 4 used.
        let readOnly = try Database(path: path, readOnly: true)
        #expect(
            try await SearchCollection(named: "pages", in: readOnly).loadIndex().origin == .snapshot
        )
        let db = try Database(path: path)
        let pages = try await SearchCollection(named: "pages", in: db)
        let stats = try await pages.loadIndex()
        #expect(stats.origin == .snapshot && stats.vectorCount == 20)
        #expect(try await pages.search(vector: [5, 1, 2], limit: 1).first?.id == 5)
        // Saved again in the same table, under the key the upgrade to format 4 gave it.
        try await db.execute("UPDATE pages SET embedding = embedding WHERE id = 1")
        _ = try await pages.search(vector: [5, 1, 2], limit: 1)  // replays the raw update
        #expect(try await db.saveIndexes() == ["pages"])
        #expect(
            try await db.query("SELECT DISTINCT name FROM pages_index").map { $0.string(at: 0) }
                == ["embedding"])
    }
}
