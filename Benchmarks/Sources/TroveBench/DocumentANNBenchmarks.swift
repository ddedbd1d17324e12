// trove-bench documents-ann: reopening a document collection whose vector field has an HNSW
// index: loading the saved graph (and replaying the change log after it) against rebuilding it
// from the table, through the public DocumentCollection API.
import Foundation
@_spi(Benchmarks) import Trove

func runDocumentANNBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        say("""
            trove-bench documents-ann [--base F.npy] [--queries F.npy] [--limit-base N] [--limit-queries N]
                                      [--m 16] [--ef-construction 200] [--ef-search 64] [--quantization none]
                                      [--codes-only] [--changes 1000] [--loads 3] [--directory DIR] [--json FILE]
            A document collection (id, group, embedding) in a Trove file with an HNSW field. Reports the
            first build from the table and its save, then per reopen: loadIndex(field:) from the snapshot
            (best of --loads), the first query after open with the snapshot and without it (rebuild on
            that query), and the load after --changes upserts made after the snapshot (replayed from the
            log). Checks that loaded and rebuilt graphs answer, recall@10 against the shared ground truth.
            """)
        return
    }
    let vectorsDir = "\(sharedBenchDirectory)/vectors"
    let base = try readNPY(options.string("base", "\(vectorsDir)/base.f16.npy"))
    let queryMatrix = try readNPY(options.string("queries", "\(vectorsDir)/queries.f16.npy"))
    let n = min(base.rows, options.int("limit-base", base.rows)), d = base.columns
    let queries = (0..<min(options.int("limit-queries", 200), queryMatrix.rows)).map { queryMatrix.row($0) }
    let usesSharedTruth = options.values["base"] == nil && options.values["limit-base"] == nil
    let m = options.int("m", 16), efConstruction = options.int("ef-construction", 200)
    let efSearch = options.int("ef-search", 64)
    let quantization = HNSWQuantization(rawValue: options.string("quantization", "none")) ?? .none
    let kind = IndexKind.hnsw(
        m: m, efConstruction: efConstruction, efSearch: efSearch, quantization: quantization,
        keepsFloatVectors: !options.has("codes-only"))
    let changes = min(n, options.int("changes", 1_000))
    let loadCount = max(1, options.int("loads", 3))
    let directory = options.values["directory"]
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("trove-documents-ann-\(getpid())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = "\(directory)/documents-ann.trove"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    defer { if options.values["directory"] == nil { try? FileManager.default.removeItem(atPath: directory) } }

    say("trove-bench documents-ann: n=\(n) dim=\(d) queries=\(queries.count) metric=cosine field=embedding index=\(kind)"
        + " k=10 changes=\(changes) loads=\(loadCount); cores \(ProcessInfo.processInfo.activeProcessorCount);"
        + " plain swift build -c release; file \(path)")
    var json: [String: Any] = ["n": n, "dim": d, "queries": queries.count, "index": "\(kind)", "changes": changes]
    let schema = DocumentSchema(
        fields: [.integer("group", indexed: true), .vector("embedding", dimension: d)],
        vectorIndexes: ["embedding": kind])
    func document(_ row: Int, vector: [Float]) -> Document {
        Document(id: .int(Int64(row + 1)), ["group": .int(Int64(row % 100)), "embedding": .vector(vector)])
    }
    func top10(_ docs: DocumentCollection) async throws -> [[Int64]] {
        var all: [[Int64]] = []
        for q in queries {
            let hits = try await docs.search(Query().nearest(to: q, in: "embedding").limit(10))
            all.append(hits.map { if case .int(let id) = $0.record.id { id } else { -1 } })
        }
        return all
    }
    // Ground truth: the shared exact top-100 (row numbers; document ids are row + 1).
    var truth: [[Int64]]?
    if usesSharedTruth, FileManager.default.fileExists(atPath: "\(vectorsDir)/gt_top100.i32.npy") {
        let gt = try readNPY("\(vectorsDir)/gt_top100.i32.npy")
        truth = (0..<queries.count).map { q in (0..<10).map { Int64(gt.ints[q * gt.columns + $0]) + 1 } }
    }
    func recall(_ found: [[Int64]]) -> String {
        guard let truth else { return "n/a" }
        var hit = 0
        for (f, t) in zip(found, truth) { hit += Set(f).intersection(t).count }
        return formatted(Double(hit) / Double(10 * truth.count), 4)
    }

    // Rows, then the first load: no snapshot, so the graph is built from the table and saved.
    let built: [[Int64]]
    do {
        let database = try Database(path: path)
        let docs = try await database.documents("docs", schema: schema)
        let t0 = benchNow()
        for start in stride(from: 0, to: n, by: 5_000) {
            try await docs.insert((start..<min(n, start + 5_000)).map { document($0, vector: base.row($0)) })
        }
        say("  rows inserted (index not loaded): \(formatted(Double(benchNow() - t0) / 1e9, 2)) s")
        let meter = ContentionMeter()
        let c0 = processCPUSeconds(), t1 = benchNow()
        let stats = try await docs.loadIndex(field: "embedding")
        let wall = Double(benchNow() - t1) / 1e9, cpu = processCPUSeconds() - c0
        guard case .rebuilt = stats.origin, stats.vectorCount == n else {
            throw NPYError(description: "expected a rebuild of \(n) vectors, got \(stats.origin), \(stats.vectorCount)")
        }
        let bytes = try await database.query("SELECT sum(length(data)) FROM docs_index").first?[0].int64Value ?? 0
        built = try await top10(docs)
        say("  rebuild from the table: \(formatted(stats.loadSeconds, 2)) s wall (CPU \(formatted(cpu, 2)) s incl. save);"
            + " save \(formatted(wall - stats.loadSeconds, 2)) s, snapshot \(formatted(Double(bytes) / 1e6, 1)) MB;"
            + " recall@10 \(recall(built)); other procs busy cores \(meter.stop().map { formatted($0, 2) } ?? "n/a")")
        json["rebuild_s"] = stats.loadSeconds
        json["rebuild_cpu_s"] = cpu
        json["save_s"] = wall - stats.loadSeconds
        json["snapshot_mb"] = Double(bytes) / 1e6
    }

    // Reopen: loadIndex(field:) loads the snapshot (best of --loads opens).
    var loads: [Double] = []
    let loadMeter = ContentionMeter()
    for _ in 0..<loadCount {
        let database = try Database(path: path)
        let docs = try await database.documents(named: "docs")
        let t0 = benchNow()
        let stats = try await docs.loadIndex(field: "embedding")
        loads.append(Double(benchNow() - t0) / 1e9)
        guard stats.origin == .snapshot, stats.vectorCount == n else {
            throw NPYError(description: "expected a snapshot load, got \(stats.origin)")
        }
    }
    say("  load the snapshot on open: \(formatted(loads.min()!, 3)) s (best of \(loadCount): \(loads.map { formatted($0, 3) }.joined(separator: ", ")));"
        + " other procs busy cores \(loadMeter.stop().map { formatted($0, 2) } ?? "n/a")")
    json["snapshot_load_s"] = loads.min()!

    // The first query after open, with the snapshot (loaded by that query) and without it.
    do {
        let database = try Database(path: path)
        let docs = try await database.documents(named: "docs")
        let t0 = benchNow()
        _ = try await docs.search(Query().nearest(to: queries[0], in: "embedding").limit(10))
        let first = Double(benchNow() - t0) / 1e9
        let loaded = try await top10(docs)
        guard try await docs.indexStatistics(field: "embedding").origin == .snapshot, loaded == built else {
            throw NPYError(description: "the loaded graph does not answer as the one saved")
        }
        say("  first query after open, snapshot loaded: \(formatted(first, 3)) s; answers equal to the saved graph's: true")
        json["first_query_snapshot_s"] = first
    }
    do {
        let database = try Database(path: path)
        try await database.execute("DELETE FROM docs_index")
        let docs = try await database.documents(named: "docs")
        let meter = ContentionMeter()
        let t0 = benchNow()
        _ = try await docs.search(Query().nearest(to: queries[0], in: "embedding").limit(10))
        let first = Double(benchNow() - t0) / 1e9
        let other = meter.stop()
        guard case .rebuilt = try await docs.indexStatistics(field: "embedding").origin else {
            throw NPYError(description: "expected a rebuild without the snapshot")
        }
        say("  first query after open, no snapshot (rebuild on that query): \(formatted(first, 2)) s = "
            + "\(formatted(first / loads.min()!, 0))x the snapshot load; recall@10 \(recall(try await top10(docs)));"
            + " other procs busy cores \(other.map { formatted($0, 2) } ?? "n/a")")
        json["first_query_rebuild_s"] = first
        try await docs.saveIndex(field: "embedding")
    }

    // Changes after the snapshot: upserts while the index is not loaded (nothing saved), then a
    // load that replays them from the change log.
    do {
        let database = try Database(path: path)
        let docs = try await database.documents(named: "docs")
        let moved = (0..<changes).map { i in document(i * (n / max(changes, 1)), vector: base.row((i * 7_919) % n)) }
        try await docs.upsert(moved)
    }
    do {
        let database = try Database(path: path)
        let docs = try await database.documents(named: "docs")
        let t0 = benchNow()
        let stats = try await docs.loadIndex(field: "embedding")
        let wall = Double(benchNow() - t0) / 1e9
        guard stats.origin == .snapshot else { throw NPYError(description: "expected a snapshot load, got \(stats.origin)") }
        say("  load the snapshot + replay \(stats.replayedRows) changed rows: \(formatted(stats.loadSeconds, 3)) s"
            + " (loadIndex wall \(formatted(wall, 3)) s)")
        json["snapshot_load_replay_s"] = stats.loadSeconds
        json["replayed_rows"] = stats.replayedRows
    }

    if let out = options.values["json"] {
        let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: out))
        say("wrote \(out)")
    }
}
