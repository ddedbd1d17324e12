// trove-bench vectors: exact top-10 search (FlatIndex) over the shared real vectors and over
// seeded random unit vectors, with the Python peers (numpy, faiss, usearch, sqlite-vec) run
// back to back in the same invocation. See BENCHMARKS.md "Exact vector search".
import Foundation
@_spi(Benchmarks) import Trove

// MARK: - Shared helpers (also used by ANNBenchmarks.swift)

/// A 2-D array read from a NumPy `.npy` file (float16, float32 or int32, C order, little endian).
struct NPYMatrix {
    var rows: Int
    var columns: Int
    /// Row-major values converted to Float (int32 files: exact for |x| < 2^24).
    var floats: [Float]
    /// Row-major values for int32 files.
    var ints: [Int32]

    func row(_ i: Int) -> [Float] { Array(floats[i * columns..<(i + 1) * columns]) }
}

struct NPYError: Error, CustomStringConvertible {
    var description: String
}

/// Reads a 1-D or 2-D `.npy` file with dtype `<f2`, `<f4` or `<i4`.
func readNPY(_ path: String) throws -> NPYMatrix {
    let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    let bytes = [UInt8](data.prefix(12))
    guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1...5]) == Array("NUMPY".utf8) else {
        throw NPYError(description: "\(path): not a .npy file")
    }
    let major = bytes[6]
    let headerLength: Int
    let headerStart: Int
    if major == 1 {
        headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
        headerStart = 10
    } else {
        headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
        headerStart = 12
    }
    guard let header = String(data: data.subdata(in: headerStart..<headerStart + headerLength), encoding: .ascii)
    else { throw NPYError(description: "\(path): unreadable header") }
    func field(_ key: String) -> String? {
        guard let r = header.range(of: "'\(key)':") else { return nil }
        return String(header[r.upperBound...]).trimmingCharacters(in: .whitespaces)
    }
    guard let descr = field("descr")?.split(separator: "'").first.map(String.init),
        let shapeText = field("shape"), let open = shapeText.firstIndex(of: "("),
        let close = shapeText.firstIndex(of: ")")
    else { throw NPYError(description: "\(path): header without descr/shape: \(header)") }
    if field("fortran_order")?.hasPrefix("True") == true {
        throw NPYError(description: "\(path): Fortran order is not supported")
    }
    let shape = shapeText[shapeText.index(after: open)..<close].split(separator: ",")
        .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    guard shape.count == 1 || shape.count == 2 else { throw NPYError(description: "\(path): shape \(shape)") }
    let rows = shape[0], columns = shape.count == 2 ? shape[1] : 1
    let n = rows * columns
    let offset = headerStart + headerLength
    var result = NPYMatrix(rows: rows, columns: columns, floats: [], ints: [])
    try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
        let body = UnsafeRawBufferPointer(rebasing: raw[offset...])
        switch descr {
        case "<f2":
            guard body.count >= 2 * n else { throw NPYError(description: "\(path): truncated") }
            result.floats = [Float](unsafeUninitializedCapacity: n) { out, count in
                for i in 0..<n { out[i] = halfToFloat(body.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)) }
                count = n
            }
        case "<f4":
            guard body.count >= 4 * n else { throw NPYError(description: "\(path): truncated") }
            result.floats = [Float](unsafeUninitializedCapacity: n) { out, count in
                for i in 0..<n { out[i] = body.loadUnaligned(fromByteOffset: 4 * i, as: Float.self) }
                count = n
            }
        case "<i4":
            guard body.count >= 4 * n else { throw NPYError(description: "\(path): truncated") }
            result.ints = [Int32](unsafeUninitializedCapacity: n) { out, count in
                for i in 0..<n { out[i] = body.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self) }
                count = n
            }
            result.floats = result.ints.map(Float.init)
        default:
            throw NPYError(description: "\(path): dtype \(descr) not supported (use <f2, <f4 or <i4)")
        }
    }
    return result
}

/// IEEE 754 binary16 → binary32, written out so it works where `Float16` is unavailable.
func halfToFloat(_ h: UInt16) -> Float {
    let sign = UInt32(h & 0x8000) << 16
    let exponent = UInt32(h >> 10) & 0x1F
    var mantissa = UInt32(h & 0x3FF)
    if exponent == 0 {
        if mantissa == 0 { return Float(bitPattern: sign) }
        // Subnormal half: renormalise.
        var e: UInt32 = 113
        while mantissa & 0x400 == 0 { mantissa <<= 1; e -= 1 }
        mantissa &= 0x3FF
        return Float(bitPattern: sign | e << 23 | mantissa << 13)
    }
    if exponent == 31 { return Float(bitPattern: sign | 0x7F80_0000 | mantissa << 13) }
    return Float(bitPattern: sign | (exponent + 112) << 23 | mantissa << 13)
}

/// Monotonic nanoseconds.
@inline(__always) func benchNow() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// CPU seconds used by this process (all threads) so far.
func processCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Percentile of already collected samples (nearest rank).
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((p / 100) * Double(sorted.count - 1) + 0.5))]
}

/// How many cores other processes kept busy during a window (from /proc/stat), like the peers'
/// machine.py, so a disturbed measurement can be recognised. nil where /proc is absent.
struct ContentionMeter {
    private var start: (system: Int, own: Int, time: UInt64)?

    init() { start = Self.sample() }

    private static func sample() -> (system: Int, own: Int, time: UInt64)? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let selfStat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let cpu = stat.split(separator: "\n").first
        else { return nil }
        let f = cpu.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard f.count >= 7 else { return nil }
        let busy = f[0] + f[1] + f[2] + f[5] + f[6] + (f.count > 7 ? f[7] : 0)
        guard let paren = selfStat.lastIndex(of: ")") else { return nil }
        let g = selfStat[selfStat.index(after: paren)...].split(separator: " ")
        guard g.count > 12, let u = Int(g[11]), let s = Int(g[12]) else { return nil }
        return (busy, u + s, benchNow())
    }

    /// Cores busy with other work since `init` (0 = idle machine, 1 = one core taken).
    func stop() -> Double? {
        guard let a = start, let b = Self.sample() else { return nil }
        let seconds = Double(b.time - a.time) / 1e9
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let other = Double((b.system - a.system) - (b.own - a.own))
        return seconds > 0 ? max(0, (other / ticks / seconds * 1000).rounded() / 1000) : nil
    }
}

/// Command-line options as `--name value` pairs and bare `--flag`s.
struct BenchOptions {
    var values: [String: String] = [:]
    var flags: Set<String> = []

    init(_ arguments: [String]) {
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a.hasPrefix("--") {
                let name = String(a.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    values[String(name[..<eq])] = String(name[name.index(after: eq)...])
                } else if i + 1 < arguments.count, !arguments[i + 1].hasPrefix("--") {
                    values[name] = arguments[i + 1]
                    i += 1
                } else {
                    flags.insert(name)
                }
            }
            i += 1
        }
    }

    func string(_ name: String, _ fallback: String) -> String { values[name] ?? fallback }
    func int(_ name: String, _ fallback: Int) -> Int { values[name].flatMap(Int.init) ?? fallback }
    func has(_ name: String) -> Bool { flags.contains(name) }
}

let sharedBenchDirectory = sharedDirectory + "/bench"
let peerPython = benchCache + "/venv/bin/python"

/// Runs a peer script with the venv's Python, echoing its output; returns the exit status.
func runPeer(_ arguments: [String]) -> Int32 {
    guard FileManager.default.isExecutableFile(atPath: peerPython) else {
        say("peers: \(peerPython) not found (run \(sharedBenchDirectory)/setup.sh); skipped")
        return -1
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: peerPython)
    process.arguments = arguments
    do {
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    } catch {
        say("peers: could not start: \(error)")
        return -1
    }
}

/// The peers' merged results file for a dataset.
func peerResults(dataset: String) -> [String: Any]? {
    let cache = benchCache
    let path = "\(cache)/results/vector_\(dataset).json"
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
}

func formatted(_ x: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", x) }

// MARK: - Exact search

struct ExactRun {
    var name: String
    var count: Int
    var dimension: Int
    var queries: Int
    var meanMs: Double
    var p50Ms: Double
    var p99Ms: Double
    // The fastest single query: on a shared machine the least disturbed, closest to idle.
    var minMs: Double
    // Process CPU time per query over the kept pass (excludes time spent descheduled).
    var cpuMs: Double
    var gbPerSecond: Double
    var recall: Double
    var buildSeconds: Double
    var otherBusyCores: Double?

    var json: [String: Any] {
        var j: [String: Any] = [
            "name": name, "n": count, "dim": dimension, "queries": queries, "lat_ms_mean": meanMs,
            "lat_ms_p50": p50Ms, "lat_ms_p99": p99Ms, "lat_ms_min": minMs, "cpu_ms_per_query": cpuMs, "gb_per_s": gbPerSecond, "recall_at_10": recall,
            "build_s": buildSeconds,
        ]
        if let o = otherBusyCores { j["other_procs_busy_cores"] = o }
        return j
    }
}

/// Times `queries` searches alone, `passes` times, keeping the fastest pass (least disturbed).
func timeExact(
    _ index: FlatIndex, queries: [[Float]], k: Int, passes: Int
) -> (results: [[Neighbor]], latencies: [Double], other: Double?, cpuMs: Double) {
    timeSearches(queries: queries, passes: passes) { index.search($0, k: k) }
}

/// Times `search` over `queries`, one at a time, `passes` times, keeping the fastest pass.
func timeSearches(
    queries: [[Float]], passes: Int, _ search: ([Float]) -> [Neighbor]
) -> (results: [[Neighbor]], latencies: [Double], other: Double?, cpuMs: Double) {
    for q in queries.prefix(10) { _ = search(q) }  // warm-up
    var best: (total: Double, results: [[Neighbor]], latencies: [Double], other: Double?, cpuMs: Double)?
    for _ in 0..<max(1, passes) {
        var results: [[Neighbor]] = []
        results.reserveCapacity(queries.count)
        var latencies: [Double] = []
        latencies.reserveCapacity(queries.count)
        let meter = ContentionMeter()
        let cpu0 = processCPUSeconds()
        let t0 = benchNow()
        for q in queries {
            let s = benchNow()
            results.append(search(q))
            latencies.append(Double(benchNow() - s) / 1e6)
        }
        let total = Double(benchNow() - t0)
        let cpuMs = (processCPUSeconds() - cpu0) * 1000 / Double(max(1, queries.count))
        let other = meter.stop()
        if best == nil || total < best!.total { best = (total, results, latencies, other, cpuMs) }
    }
    return (best!.results, best!.latencies, best!.other, best!.cpuMs)
}

func summarize(
    name: String, index: FlatIndex, queries: Int, latencies: [Double], recall: Double,
    build: Double, other: Double?, cpuMs: Double
) -> ExactRun {
    let mean = latencies.reduce(0, +) / Double(latencies.count)
    let bytes = Double(index.count * index.dimension * 4)
    return ExactRun(
        name: name, count: index.count, dimension: index.dimension, queries: queries, meanMs: mean,
        p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99),
        minMs: latencies.min() ?? .nan, cpuMs: cpuMs, gbPerSecond: bytes / (mean / 1000) / 1e9, recall: recall, buildSeconds: build, otherBusyCores: other)
}

func printExact(_ r: ExactRun) {
    let other = r.otherBusyCores.map { formatted($0, 2) } ?? "n/a"
    say("  \(r.name): n=\(r.count) dim=\(r.dimension) queries=\(r.queries) top-10 mean \(formatted(r.meanMs)) ms"
        + " p50 \(formatted(r.p50Ms)) ms p99 \(formatted(r.p99Ms)) ms min \(formatted(r.minMs)) ms"
        + " cpu \(formatted(r.cpuMs)) ms/query, \(formatted(r.gbPerSecond, 1)) GB/s,"
        + " recall@10 \(formatted(r.recall, 4)), build \(formatted(r.buildSeconds, 2)) s, other procs busy cores \(other)")
}

/// Seeded SplitMix64 for reproducible random data sets.
struct BenchRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    mutating func nextSigned() -> Float { Float(next() >> 40) * (2 / Float(1 << 24)) - 1 }

    mutating func unitVector(_ d: Int) -> [Float] {
        var v = (0..<d).map { _ in nextSigned() }
        DistanceKernels.normalize(&v)
        return v
    }
}

func runVectorBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        say("""
            trove-bench vectors [--base F] [--queries F] [--gt F] [--limit-queries N] [--passes N]
                                [--random 100000,1000000] [--random-queries N] [--filtered 0.01,0.1,0.5]
                                [--no-peers] [--json FILE]
            Exact top-10 (FlatIndex, cosine) over the shared real vectors and seeded random unit vectors;
            then runs peers/vector.py --dataset shared --sections exact,sqlite in the same run.
            """)
        return
    }
    let vectorsDir = "\(sharedBenchDirectory)/vectors"
    let basePath = options.string("base", "\(vectorsDir)/base.f16.npy")
    let queryPath = options.string("queries", "\(vectorsDir)/queries.f16.npy")
    let gtPath = options.string("gt", "\(vectorsDir)/gt_top100.i32.npy")
    let limit = options.int("limit-queries", 1000)
    let passes = options.int("passes", 2)
    let randomSizes = options.string("random", "100000,1000000").split(separator: ",").compactMap { Int($0) }
    let randomQueries = options.int("random-queries", 100)
    let filteredShares = options.string("filtered", "0.01,0.1,0.5").split(separator: ",").compactMap { Double($0) }
    let k = 10
    say("trove-bench vectors: exact top-\(k), FlatIndex metric=cosine, 1 thread, \(passes) passes (fastest kept)")
    say("  build: plain swift build -c release (no extra flags)")
    var runs: [ExactRun] = []

    // Real vectors.
    let base = try readNPY(basePath)
    let queryMatrix = try readNPY(queryPath)
    let gt = FileManager.default.fileExists(atPath: gtPath) ? try readNPY(gtPath) : nil
    var index = FlatIndex(dimension: base.columns, metric: .cosine)
    index.reserveCapacity(base.rows)
    let b0 = benchNow()
    for i in 0..<base.rows { index.upsert(id: Int64(i), vector: base.row(i)) }
    let build = Double(benchNow() - b0) / 1e9
    let queries = (0..<min(limit, queryMatrix.rows)).map { queryMatrix.row($0) }
    let (results, latencies, other, cpuMs) = timeExact(index, queries: queries, k: k, passes: passes)
    var recall = Double.nan
    if let gt {
        var hits = 0
        for (i, r) in results.enumerated() {
            let truth = Set((0..<k).map { Int64(gt.ints[i * gt.columns + $0]) })
            hits += r.filter { truth.contains($0.id) }.count
        }
        recall = Double(hits) / Double(results.count * k)
    }
    let real = summarize(
        name: "trove FlatIndex (shared real vectors)", index: index, queries: queries.count,
        latencies: latencies, recall: recall, build: build, other: other, cpuMs: cpuMs)
    printExact(real)
    runs.append(real)

    // Filtered exact search: only a pseudo-random share of the ids compete (`among:`), the path
    // a store query with a filter takes. Checked against a naive scalar scan of the candidates.
    for share in filteredShares {
        let threshold = UInt64(share * 1000)
        let candidates = (0..<Int64(base.rows)).filter { (UInt64($0) &* 2_654_435_761) % 1000 < threshold }
        let fq = Array(queries.prefix(300))
        let (res, lat, other, cpu) = timeSearches(queries: fq, passes: passes) {
            index.search($0, k: k, among: candidates)
        }
        var hits = 0, checked = 0
        for (qi, q) in fq.prefix(3).enumerated() {
            var qn = q
            DistanceKernels.normalize(&qn)
            var top = TopK(k: k)
            for id in candidates {
                let v = index.vector(for: id)!
                var dot: Float = 0
                for j in 0..<v.count { dot += qn[j] * v[j] }
                top.insert(id: id, distance: 1 - dot)
            }
            let truth = Set(top.sortedResults().map(\.id))
            hits += res[qi].filter { truth.contains($0.id) }.count
            checked += k
        }
        var r = summarize(
            name: "trove FlatIndex filtered \(formatted(share * 100, 0))% (\(candidates.count) candidates)",
            index: index, queries: fq.count, latencies: lat, recall: Double(hits) / Double(checked), build: 0,
            other: other, cpuMs: cpu)
        r.gbPerSecond *= Double(candidates.count) / Double(base.rows)
        printExact(r)
        runs.append(r)
    }
    index.removeAll()

    // Seeded random unit vectors.
    for n in randomSizes {
        let d = 384
        var rng = BenchRandom(state: UInt64(n))
        var random = FlatIndex(dimension: d, metric: .cosine)
        random.reserveCapacity(n)
        let t0 = benchNow()
        for i in 0..<n { random.upsert(id: Int64(i), vector: rng.unitVector(d)) }
        let build = Double(benchNow() - t0) / 1e9
        let qs = (0..<randomQueries).map { _ in rng.unitVector(d) }
        let (res, lat, other, cpu) = timeExact(random, queries: qs, k: k, passes: passes)
        // The check that the work was done: the first queries again by a naive scalar scan.
        var hits = 0, checked = 0
        for (qi, q) in qs.prefix(3).enumerated() {
            var top = TopK(k: k)
            random.matrix.withUnsafeRows { rows in
                for slot in 0..<n {
                    var dot: Float = 0
                    for j in 0..<d { dot += q[j] * rows[slot * d + j] }
                    top.insert(id: random.matrix.id(at: UInt32(slot)), distance: 1 - dot)
                }
            }
            let truth = Set(top.sortedResults().map(\.id))
            hits += res[qi].filter { truth.contains($0.id) }.count
            checked += k
        }
        let r = summarize(
            name: "trove FlatIndex (random unit vectors)", index: random, queries: qs.count,
            latencies: lat, recall: Double(hits) / Double(checked), build: build, other: other, cpuMs: cpu)
        printExact(r)
        runs.append(r)
    }

    // Peers, back to back in the same run.
    var peerSummary: [String: Any] = [:]
    if !options.has("no-peers") {
        say("peers: \(peerPython) \(sharedBenchDirectory)/peers/vector.py --dataset shared --sections exact,sqlite")
        let status = runPeer([
            "\(sharedBenchDirectory)/peers/vector.py", "--dataset", "shared", "--sections", "exact,sqlite",
            "--queries", String(limit),
        ])
        if status == 0, let peers = peerResults(dataset: "shared") {
            let exact = peers["exact"] as? [String: Any] ?? [:]
            let sqlite = (peers["sqlite_vec"] as? [String: Any])?["knn"] as? [String: Any]
            say("\nside by side (shared real vectors, \(base.rows) x \(base.columns), top-\(k), 1 thread, ms/query):")
            say("  trove FlatIndex       mean \(formatted(real.meanMs)) p50 \(formatted(real.p50Ms)) recall \(formatted(real.recall, 4))")
            var peerMeans: [String: Double] = [:]
            for name in ["faiss_IndexFlatIP", "numpy_dot", "usearch_exact"] {
                if let s = exact[name] as? [String: Any], let mean = s["lat_ms_mean"] as? Double {
                    peerMeans[name] = mean
                    say("  \(name.padding(toLength: 21, withPad: " ", startingAt: 0)) mean \(formatted(mean)) p50 \(formatted(s["lat_ms_p50"] as? Double ?? .nan)) recall \(s["recall_at_10"] ?? "?")")
                }
            }
            if let sqlite, let mean = sqlite["lat_ms_mean"] as? Double {
                peerMeans["sqlite_vec_vec0"] = mean
                say("  sqlite-vec vec0       mean \(formatted(mean)) p50 \(formatted(sqlite["lat_ms_p50"] as? Double ?? .nan)) recall \(sqlite["recall_at_10"] ?? "?")")
            }
            if let f = peerMeans["faiss_IndexFlatIP"] {
                say("  trove / faiss IndexFlatIP latency: \(formatted(real.meanMs / f, 2))x (target <= 1.2x)")
            }
            if let s = peerMeans["sqlite_vec_vec0"] {
                say("  sqlite-vec / trove latency: \(formatted(s / real.meanMs, 1))x faster (target >= 10x)")
            }
            peerSummary = ["exact": exact, "sqlite_vec_knn": sqlite ?? [:]]
        }
    }
    if let path = options.values["json"] {
        let out: [String: Any] = ["trove": runs.map(\.json), "peers": peerSummary]
        let data = try JSONSerialization.data(withJSONObject: out, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
        say("wrote \(path)")
    }
}

/// Prints and flushes at once, so progress shows when output goes to a file.
func say(_ line: String) {
    print(line)
    fflush(nil)
}
