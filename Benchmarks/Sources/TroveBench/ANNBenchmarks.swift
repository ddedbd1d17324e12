// trove-bench ann: HNSWIndex build time (1 and 2 threads), memory per mode, recall@10 vs QPS
// over efSearch, QPS at recall 0.90/0.95/0.99, delete/repair recall, filtered search; then the
// Python peers (hnswlib, faiss IndexHNSWFlat, usearch) on the same vectors in the same run.
// See BENCHMARKS.md "Approximate search (HNSW)".
import Foundation
@_spi(Benchmarks) import Trove

private struct SweepPoint {
    var ef: Int
    var recall: Double
    var qps: Double
    var meanMs: Double
    var p50Ms: Double
    var json: [String: Any] {
        ["ef": ef, "recall_at_10": recall, "qps": qps, "lat_ms_mean": meanMs, "lat_ms_p50": p50Ms]
    }
}

/// Recall@k of `results` against the first k ids of each ground-truth row.
private func recallAtK(_ results: [[Neighbor]], truth: [[Int64]], k: Int) -> Double {
    var hits = 0
    for (r, t) in zip(results, truth) {
        let set = Set(t.prefix(k))
        hits += r.prefix(k).filter { set.contains($0.id) }.count
    }
    return Double(hits) / Double(results.count * k)
}

/// Single-threaded queries, each issued alone; `passes` passes, fastest kept (as the peers).
private func timedSearches(
    _ queries: [[Float]], passes: Int, _ search: ([Float]) -> [Neighbor]
) -> (results: [[Neighbor]], total: Double, latencies: [Double]) {
    for q in queries.prefix(10) { _ = search(q) }
    var best: (results: [[Neighbor]], total: Double, latencies: [Double])?
    for _ in 0..<max(1, passes) {
        var results: [[Neighbor]] = []
        results.reserveCapacity(queries.count)
        var latencies: [Double] = []
        latencies.reserveCapacity(queries.count)
        let t0 = benchNow()
        for q in queries {
            let s = benchNow()
            results.append(search(q))
            latencies.append(Double(benchNow() - s) / 1e6)
        }
        let total = Double(benchNow() - t0) / 1e9
        if best == nil || total < best!.total { best = (results, total, latencies) }
    }
    return best!
}

private func sweep(
    _ index: HNSWIndex, queries: [[Float]], truth: [[Int64]], efs: [Int], passes: Int, label: String,
    source: ((Int64) -> [Float]?)? = nil
) -> [SweepPoint] {
    var points: [SweepPoint] = []
    for ef in efs {
        let c0 = processCPUSeconds()
        defer { say("    CPU \(formatted((processCPUSeconds() - c0) * 1000 / Double(queries.count * max(1, passes)), 4)) ms/query") }
        let (results, total, latencies) = timedSearches(queries, passes: passes) {
            index.search($0, k: 10, efSearch: ef, rescoringWith: source)
        }
        let p = SweepPoint(
            ef: ef, recall: recallAtK(results, truth: truth, k: 10), qps: Double(queries.count) / total,
            meanMs: latencies.reduce(0, +) / Double(latencies.count), p50Ms: percentile(latencies, 50))
        say("  \(label) ef=\(ef) recall@10=\(formatted(p.recall, 4)) qps=\(formatted(p.qps, 0)) p50=\(formatted(p.p50Ms))ms")
        points.append(p)
    }
    return points
}

/// The QPS at the smallest efSearch reaching each recall target (the peers' rule).
private func qpsAtTargets(_ points: [SweepPoint]) -> [String: Any] {
    var out: [String: Any] = [:]
    for target in [0.90, 0.95, 0.99] {
        let key = String(format: "%.2f", target)
        if let p = points.filter({ $0.recall >= target }).min(by: { $0.ef < $1.ef }) {
            out[key] = ["qps": p.qps, "ef": p.ef, "recall_at_10": p.recall]
        } else {
            out[key] = NSNull()
        }
    }
    return out
}

private func describeTargets(_ t: [String: Any]) -> String {
    ["0.90", "0.95", "0.99"].map { key in
        if let p = t[key] as? [String: Any], let qps = p["qps"] as? Double, let ef = p["ef"] as? Int {
            return "\(key): \(formatted(qps, 0)) QPS (ef \(ef))"
        }
        return "\(key): not reached"
    }.joined(separator: ", ")
}

func runANNBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        say("""
            trove-bench ann [--base F.npy] [--queries F.npy] [--gt F.npy] [--limit-queries N]
                            [--m 16] [--ef-construction 200] [--threads 1,2] [--ef 10,16,...]
                            [--modes none,int8,binary,int8-codes] [--passes 2] [--skip-deletes] [--no-peers]
                            [--peer-dataset shared|union] [--peer-libs hnswlib,faiss,...]
                            [--skip-filtered] [--graph FILE] [--json FILE]
            Base/query files: .npy float16 or float32 (N x d); --gt: int32 top-k ids per query (else exact
            ground truth is computed). Metric cosine. Peers: peers/vector.py --dataset shared --sections ann.
            """)
        return
    }
    let vectorsDir = "\(sharedBenchDirectory)/vectors"
    let basePath = options.string("base", "\(vectorsDir)/base.f16.npy")
    let queryPath = options.string("queries", "\(vectorsDir)/queries.f16.npy")
    let usingSharedData = options.values["base"] == nil
    let usingSharedGT = usingSharedData && options.values["limit-base"] == nil
    let gtPath = options.string("gt", usingSharedGT ? "\(vectorsDir)/gt_top100.i32.npy" : "")
    let limit = options.int("limit-queries", 1000)
    let m = options.int("m", 16), efConstruction = options.int("ef-construction", 200)
    let threadCounts = options.string("threads", "1,2").split(separator: ",").compactMap { Int($0) }
    let efs = options.string("ef", "10,16,24,32,48,64,96,128,192,256,400").split(separator: ",").compactMap { Int($0) }
    let modeNames = options.string("modes", "none,int8,binary,int8-codes").split(separator: ",").map(String.init)
    let modes = modeNames.compactMap { HNSWQuantization(rawValue: $0) }
    let passes = options.int("passes", 2)

    let base = try readNPY(basePath)
    let queryMatrix = try readNPY(queryPath)
    let queries = (0..<min(limit, queryMatrix.rows)).map { queryMatrix.row($0) }
    let n = min(base.rows, options.int("limit-base", base.rows)), d = base.columns
    say("trove-bench ann: n=\(n) dim=\(d) queries=\(queries.count) metric=cosine M=\(m) efConstruction=\(efConstruction)"
        + " k=10, single-threaded queries (\(passes) passes, fastest kept); plain swift build -c release")
    let items = (0..<n).map { (id: Int64($0), vector: base.row($0)) }

    // Ground truth: the shared file when given, otherwise the exact scan.
    var truth: [[Int64]] = []
    if !gtPath.isEmpty, FileManager.default.fileExists(atPath: gtPath) {
        let gt = try readNPY(gtPath)
        truth = (0..<queries.count).map { q in (0..<min(10, gt.columns)).map { Int64(gt.ints[q * gt.columns + $0]) } }
    } else {
        var flat = FlatIndex(dimension: d, metric: .cosine)
        for item in items { flat.upsert(id: item.id, vector: item.vector) }
        truth = queries.map { flat.search($0, k: 10).map(\.id) }
    }

    var json: [String: Any] = ["n": n, "dim": d, "queries": queries.count, "M": m, "efConstruction": efConstruction]
    let configuration = HNSWConfiguration(m: m, efConstruction: efConstruction)
    var index: HNSWIndex?
    var builds: [[String: Any]] = []
    let reuseGraph = options.values["graph"].map { FileManager.default.fileExists(atPath: $0) } ?? false
    for threads in threadCounts where !reuseGraph {
        let candidate = try HNSWIndex(dimension: d, metric: .cosine, configuration: configuration)
        let meter = ContentionMeter()
        let t0 = benchNow(), c0 = processCPUSeconds()
        candidate.insert(contentsOf: items, threads: threads)
        let seconds = Double(benchNow() - t0) / 1e9, cpu = processCPUSeconds() - c0
        let other = meter.stop()
        say("  build threads=\(threads): \(formatted(seconds, 2)) s (\(formatted(Double(n) / seconds, 0)) vectors/s),"
            + " CPU \(formatted(cpu, 2)) s, other procs busy cores \(other.map { formatted($0, 2) } ?? "n/a")")
        builds.append(["threads": threads, "build_s": seconds, "cpu_s": cpu, "other_procs_busy_cores": other ?? NSNull()])
        index = candidate
    }
    json["builds"] = builds
    // --graph FILE: reuse a saved float32 graph (skips the builds when FILE exists, saves the
    // last build otherwise), for quick search-side experiments on the same graph.
    if let path = options.values["graph"] {
        if FileManager.default.fileExists(atPath: path), index == nil {
            index = try HNSWIndex(snapshot: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            say("  graph loaded from \(path)")
        } else if let built = index {
            try Data(built.snapshot()).write(to: URL(fileURLWithPath: path))
            say("  graph saved to \(path)")
        }
    }
    guard let graph = index else { return }
    let problems = graph.checkInvariants()
    say("  invariants: \(problems.isEmpty ? "ok" : problems.joined(separator: "; "))")

    var modeResults: [String: Any] = [:]
    for mode in modes {
        let walked = mode == .none ? graph : try graph.converted(to: mode, rescoreFactor: mode == .binary ? 10 : 4)
        let usage = walked.memoryUsage
        say("  mode \(mode.rawValue): \(formatted(usage.bytesPerVector, 0)) bytes/vector in all,"
            + " \(formatted(usage.walkedBytesPerVector, 0)) walked (graph \(usage.graphBytes / max(1, usage.vectors)),"
            + " vectors \(usage.walkedVectorBytes / max(1, usage.vectors)), float32 re-scoring copy \(usage.fullPrecisionBytes / max(1, usage.vectors)))")
        let points = sweep(walked, queries: queries, truth: truth, efs: efs, passes: passes, label: "trove-\(mode.rawValue)")
        let targets = qpsAtTargets(points)
        say("  trove-\(mode.rawValue) QPS at recall@10 \(describeTargets(targets))")
        modeResults[mode.rawValue] = [
            "bytes_per_vector": usage.bytesPerVector, "walked_bytes_per_vector": usage.walkedBytesPerVector,
            "curve": points.map(\.json), "qps_at_recall": targets,
        ]
    }
    // int8-codes: an index that keeps only the int8 codes (no float32 copy), built from code
    // distances, re-scoring with float32 vectors the caller supplies (here the benchmark's own
    // copy of the base vectors, as a store would read them from its table).
    if modeNames.contains("int8-codes") {
        var config = configuration
        config.quantization = .int8
        config.storesFullPrecision = false
        let codes = try HNSWIndex(dimension: d, metric: .cosine, configuration: config)
        let threads = threadCounts.max() ?? 2
        let t0 = benchNow(), c0 = processCPUSeconds()
        codes.insert(contentsOf: items, threads: threads)
        let seconds = Double(benchNow() - t0) / 1e9, cpu = processCPUSeconds() - c0
        let usage = codes.memoryUsage
        let floatBytes = graph.memoryUsage.bytesPerVector
        say("  mode int8-codes: build threads=\(threads) \(formatted(seconds, 2)) s (CPU \(formatted(cpu, 2)) s),"
            + " invariants \(codes.checkInvariants().isEmpty ? "ok" : "BROKEN"); \(formatted(usage.bytesPerVector, 0)) bytes/vector"
            + " resident (graph \(usage.graphBytes / max(1, usage.vectors)), codes \(usage.walkedVectorBytes / max(1, usage.vectors)),"
            + " no float32 copy) = \(formatted(usage.bytesPerVector / floatBytes, 3))x the float32 index")
        let source: (Int64) -> [Float]? = { base.row(Int($0)) }
        let points = sweep(codes, queries: queries, truth: truth, efs: efs, passes: passes, label: "trove-int8-codes", source: source)
        let targets = qpsAtTargets(points)
        say("  trove-int8-codes QPS at recall@10 \(describeTargets(targets))")
        modeResults["int8-codes"] = [
            "bytes_per_vector": usage.bytesPerVector, "walked_bytes_per_vector": usage.walkedBytesPerVector,
            "ratio_to_float32": usage.bytesPerVector / floatBytes, "build_s": seconds, "build_cpu_s": cpu,
            "curve": points.map(\.json), "qps_at_recall": targets,
        ]
    }
    json["modes"] = modeResults

    // Filtered search at 1% selectivity vs an unfiltered exact scan.
    if !options.has("skip-filtered") {
        var flat = FlatIndex(dimension: d, metric: .cosine)
        for item in items { flat.upsert(id: item.id, vector: item.vector) }
        var rng = BenchRandom(state: 11)
        var allowed = Set<Int64>()
        for i in 0..<n where rng.next() % 100 == 0 { allowed.insert(Int64(i)) }
        let exact = timedSearches(queries, passes: 1) { flat.search($0, k: 10) }
        var plan: HNSWFilterPlan?
        let filtered = timedSearches(queries, passes: 1) {
            let r = graph.search($0, k: 10, candidates: allowed)
            plan = r.plan
            return r.results
        }
        let filteredTruth = queries.map { flat.search($0, k: 10, among: allowed).map(\.id) }
        let recall = recallAtK(filtered.results, truth: filteredTruth, k: 10)
        let exactMs = exact.total * 1000 / Double(queries.count), filteredMs = filtered.total * 1000 / Double(queries.count)
        say("  filtered 1% (\(allowed.count) ids): \(formatted(filteredMs)) ms/query, recall@10 \(formatted(recall, 4)),"
            + " unfiltered exact scan \(formatted(exactMs)) ms/query -> \(formatted(exactMs / filteredMs, 1))x faster; plan: \(plan.map { "\($0)" } ?? "-")")
        json["filtered_1pct"] = ["ms": filteredMs, "recall_at_10": recall, "exact_unfiltered_ms": exactMs]
    }

    // Deleting 30%: tombstones only vs repaired links (ground truth over the survivors).
    if !options.has("skip-deletes") {
        var config = configuration
        config.repairFraction = 0
        let deletable = try HNSWIndex(snapshot: graph.snapshot())
        var rng = BenchRandom(state: 5)
        var removed = Set<Int64>()
        for i in 0..<n where rng.next() % 10 < 3 { removed.insert(Int64(i)) }
        // A copy that never auto-repairs, so the tombstoned state can be measured.
        let tombstoned = try HNSWIndex(dimension: d, metric: .cosine, configuration: config)
        tombstoned.insert(contentsOf: items, threads: threadCounts.max() ?? 2)
        for id in removed { tombstoned.remove(id: id) }
        for id in removed { deletable.remove(id: id) }
        deletable.repairDeletions()
        var flat = FlatIndex(dimension: d, metric: .cosine)
        for item in items where !removed.contains(item.id) { flat.upsert(id: item.id, vector: item.vector) }
        let survivorsTruth = queries.map { flat.search($0, k: 10).map(\.id) }
        let ef = 64
        let a = timedSearches(queries, passes: 1) { tombstoned.search($0, k: 10, efSearch: ef) }
        let t0 = benchNow()
        tombstoned.repairDeletions()
        let repairSeconds = Double(benchNow() - t0) / 1e9
        let b = timedSearches(queries, passes: 1) { deletable.search($0, k: 10, efSearch: ef) }
        let ra = recallAtK(a.results, truth: survivorsTruth, k: 10), rb = recallAtK(b.results, truth: survivorsTruth, k: 10)
        say("  after deleting 30% (ef=\(ef)): tombstones only recall@10 \(formatted(ra, 4)) (\(formatted(Double(queries.count) / a.total, 0)) QPS),"
            + " repaired recall@10 \(formatted(rb, 4)) (\(formatted(Double(queries.count) / b.total, 0)) QPS); repair took \(formatted(repairSeconds, 2)) s")
        json["delete_30pct"] = ["ef": ef, "tombstones_recall": ra, "repaired_recall": rb, "repair_s": repairSeconds]
    }

    // Peers, back to back in the same run.
    // Other base files need the peers' matching dataset (`--peer-dataset union`: the 172,067
    // vectors built by Benchmarks/union/build.sh).
    let peerDataset = options.string("peer-dataset", usingSharedData ? "shared" : "")
    if !options.has("no-peers") && !peerDataset.isEmpty {
        for threads in threadCounts {
            var args = ["\(sharedBenchDirectory)/peers/vector.py", "--dataset", peerDataset, "--sections", "ann",
                        "--queries", String(queries.count), "--build-threads", String(threads)]
            if threads != 1 {
                args += ["--libs", "hnswlib"]
            } else if let libs = options.values["peer-libs"] {
                args += ["--libs", libs]
            }
            say("peers: \(peerPython) \(args.joined(separator: " "))")
            _ = runPeer(args)
        }
        if let peers = peerResults(dataset: peerDataset), let ann = peers["ann"] as? [String: Any] {
            say("\nside by side (M=\(m), efConstruction=\(efConstruction), recall@10, single-threaded queries):")
            for (name, value) in ann.sorted(by: { $0.key < $1.key }) {
                guard let v = value as? [String: Any] else { continue }
                let build = (v["build_s"] as? Double).map { formatted($0, 1) } ?? "?"
                let bytes = (v["index_bytes"] as? Int).map { formatted(Double($0) / Double(n), 0) } ?? "?"
                say("  \(name): build \(build) s, index \(bytes) bytes/vector, QPS at " + describeTargets(v["qps_at_recall"] as? [String: Any] ?? [:]))
            }
            for (mode, value) in modeResults.sorted(by: { $0.key < $1.key }) {
                if let v = value as? [String: Any] {
                    say("  trove-\(mode): QPS at " + describeTargets(v["qps_at_recall"] as? [String: Any] ?? [:]))
                }
            }
            for b in builds { say("  trove build threads=\(b["threads"]!): \(formatted(b["build_s"] as? Double ?? .nan, 1)) s") }
            json["peers"] = ann
        }
    }
    if let path = options.values["json"] {
        let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
        say("wrote \(path)")
    }
}
