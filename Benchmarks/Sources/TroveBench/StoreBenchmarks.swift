// trove-bench store: batch insert rows/s with FTS on, index load, and vector / text / hybrid
// query latency, through the public Trove API, with raw-SQLite baselines measured in the same run.
import Foundation
@_spi(Benchmarks) import Trove

private struct StoreBenchOptions {
    var packages = benchCache + "/data/packages.jsonl"
    var vectors = sharedBenchDirectory + "/vectors"
    var texts = sharedBenchDirectory + "/texts/package_texts.jsonl"
    var batch = 1_000
    var queries = 300
    var rounds = 2
    var limit = Int.max
    /// Stop after the insert section (for profiling the write path).
    var insertOnly = false
    var baselines = true
    /// Which insert runs to time: FTS on, off, or both.
    var lexical: [Bool] = [true, false]
    /// Run the plaintext-vs-encrypted comparison instead (StoreEncryptionBenchmarks.swift).
    var encrypt = false
    /// With --encrypt: only the SQL script comparison (no store data needed).
    var scriptOnly = false
    /// Also time the first query after opening an HNSW copy of the collection (builds the graph).
    var hnsw = false

    init(_ arguments: [String]) throws {
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < arguments.count else { throw StoreBenchError("missing value for \(arguments[i - 1])") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--packages": packages = try value()
            case "--vectors": vectors = try value()
            case "--texts": texts = try value()
            case "--batch": batch = Int(try value()) ?? batch
            case "--queries": queries = Int(try value()) ?? queries
            case "--rounds": rounds = Int(try value()) ?? rounds
            case "--limit": limit = Int(try value()) ?? limit
            case "--insert-only": insertOnly = true
            case "--no-baselines": baselines = false
            case "--encrypt": encrypt = true
            case "--script-only": scriptOnly = true
            case "--hnsw": hnsw = true
            case "--fts":
                switch try value() {
                case "on": lexical = [true]
                case "off": lexical = [false]
                default: lexical = [true, false]
                }
            default: throw StoreBenchError("unknown option \(arguments[i]); options: --packages --vectors --texts --batch --queries --rounds --limit --insert-only --no-baselines --fts on|off|both --encrypt --script-only --hnsw")
            }
            i += 1
        }
    }
}

private struct StoreBenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads a JSON Lines file whose every line is an object (also used by TextDevEvaluation.swift).
func readJSONLines(_ path: String) throws -> [[String: Any]] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return try text.split(separator: "\n").map {
        guard let object = try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] else {
            throw StoreBenchError("\(path): a line is not a JSON object")
        }
        return object
    }
}

private struct LatencySummary: CustomStringConvertible {
    var samples: [Double]  // milliseconds
    var p50: Double { percentile(0.50) }
    var p99: Double { percentile(0.99) }
    var mean: Double { samples.reduce(0, +) / Double(max(1, samples.count)) }
    func percentile(_ p: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
    var description: String { String(format: "p50 %.3f ms  p99 %.3f ms  mean %.3f ms  (%d queries)", p50, p99, mean, samples.count) }
}

private func milliseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
}

private func measure<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let result = try await body()
    return (result, milliseconds(ContinuousClock.now - start))
}

/// CPU time used by this process so far, in milliseconds (user + system, all threads). Reported
/// next to wall time because the benchmark machine is shared: when other work competes for the
/// cores, wall time stretches but CPU time barely does.
private func processCPUMilliseconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
}

private func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "n/a"
}

func runStoreBenchmarks(_ arguments: [String]) async throws {
    let options = try StoreBenchOptions(arguments)
    if options.encrypt && options.scriptOnly {
        try runSQLScriptComparisonAlone(rounds: options.rounds)
        return
    }
    guard FileManager.default.fileExists(atPath: options.packages) else {
        throw StoreBenchError(
            "\(options.packages) is missing: build it with \(sharedBenchDirectory)/data/build_corpora.py (see ../shared/bench/RESULTS.md), or pass --packages")
    }
    // Setup (untimed): real package descriptions and their all-MiniLM-L6-v2 vectors.
    let base = try readNPY(options.vectors + "/base.f16.npy")
    let queryVectors = try readNPY(options.vectors + "/queries.f16.npy")
    // The vectors' rows by package name (ids.json): a packages file rebuilt from a newer
    // `apt-cache dumpavail` lists packages the vectors do not have.
    let names = try JSONDecoder().decode([String].self, from: Data(contentsOf: URL(fileURLWithPath: options.vectors + "/ids.json")))
    var byName: [String: [String: Any]] = [:]
    for package in try readJSONLines(options.packages) {
        if let name = package["name"] as? String, byName[name] == nil { byName[name] = package }
    }
    let packages = names.map { byName[$0] ?? ["name": $0] }
    let missing = names.count { byName[$0] == nil }
    guard names.count == base.rows, missing * 100 < names.count else {
        throw StoreBenchError("vectors (\(base.rows) rows, \(names.count) names) and packages (\(missing) of them missing) differ")
    }
    let n = min(base.rows, options.limit)
    let dimension = base.columns
    let entries: [VectorEntry] = (0..<n).map { i in
        let name = packages[i]["name"] as? String ?? "pkg\(i)"
        let body = packages[i]["body"] as? String ?? ""
        return VectorEntry(
            id: .int(Int64(i + 1)), content: body, source: name, metadata: "{\"package\":\"\(name)\",\"row\":\(i)}",
            vector: Array(base.floats[(i * dimension)..<((i + 1) * dimension)]))
    }
    let synopses = try readJSONLines(options.texts).filter { $0["kind"] as? String == "synopsis" }
        .compactMap { $0["text"] as? String }
    let queryCount = min(options.queries, synopses.count, queryVectors.rows)
    let queries: [(text: String, vector: [Float])] = (0..<queryCount).map { i in
        (synopses[i], Array(queryVectors.floats[(i * dimension)..<((i + 1) * dimension)]))
    }
    let words = entries.reduce(0) { $0 + $1.content.split(separator: " ").count }
    print("trove-bench store")
    if missing > 0 { print("  \(missing) of the vectors' \(names.count) packages are not in \(options.packages) (empty bodies)") }
    print("  rows \(n) × \(dimension)-d (real all-MiniLM-L6-v2 vectors of Debian package descriptions), "
        + String(format: "content %.1f words/row", Double(words) / Double(n)))
    print("  batch \(options.batch) rows per insertBatch (one transaction each), \(options.rounds) rounds, file database in a temp dir, WAL, synchronous=NORMAL")
    print("  queries \(queryCount): package synopses (text, ~7 words) + held-out synopsis vectors; top-10; one at a time, one thread")
    print("  SQLite \(Connection.sqliteVersion); load average at start \(loadAverage())")

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-bench-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    if options.encrypt {
        try await runEncryptedStoreComparison(
            entries: entries, queries: queries, dimension: dimension, batch: options.batch, rounds: options.rounds,
            directory: directory)
        return
    }

    // 1. Batch insert through Trove (text + vector + metadata + FTS5 + change log), FTS on and
    // off, and the raw SQLite baselines: each round runs every configuration in turn, so a
    // round's ratio compares runs made under the same load.
    print("\n## Batch insert (rows/s, best of \(options.rounds); each round a fresh file, the configurations in turn)")
    var storePath = ""
    struct InsertRuns {
        var label: String
        var rates: [Double] = []
        var figures: [String] = []
    }
    var trove = options.lexical.map { InsertRuns(label: "Trove insertBatch, FTS \($0 ? "on " : "off")") }
    // Each baseline commits every `perTransaction` rows: all of them, as the raw baselines always
    // did, and for FTS5 also every --batch rows, Trove's shape (FTS5 writes a segment per commit,
    // so the two shapes differ in FTS5's own work).
    let fts5Schema = "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61 remove_diacritics 2')"
    let fts5Insert = "INSERT INTO t(content) VALUES (?)"
    var baselines: [(label: String, schema: String, sql: String, bindVector: Bool, perTransaction: Int)] = []
    if options.baselines {
        baselines.append(("raw SQLite FTS5 table alone (text only), one transaction", fts5Schema, fts5Insert, false, n))
        if options.batch < n {
            baselines.append(("raw SQLite FTS5 table alone (text only), \(options.batch) rows per transaction", fts5Schema, fts5Insert, false, options.batch))
        }
        baselines.append(("raw SQLite table, text + blob, no FTS, one transaction",
                          "CREATE TABLE t(id INTEGER PRIMARY KEY, content TEXT, source TEXT, metadata TEXT, embedding BLOB)",
                          "INSERT INTO t(id, content, source, metadata, embedding) VALUES (?, ?, ?, ?, ?)", true, n))
    }
    var rawRuns = baselines.map { InsertRuns(label: $0.label) }
    for round in 0..<options.rounds {
        for (k, lexical) in options.lexical.enumerated() {
            let path = directory.appendingPathComponent("insert-\(lexical)-\(round).trove").path
            let database = try Database(path: path)
            let collection = try await SearchCollection("packages", in: database, dimension: dimension, metric: .cosine, lexicalSearch: lexical)
            let cpuStart = processCPUMilliseconds()
            let (_, ms) = try await measure {
                var start = 0
                while start < n {
                    let end = min(n, start + options.batch)
                    try await collection.insert(Array(entries[start..<end]))
                    start = end
                }
            }
            let cpuMs = processCPUMilliseconds() - cpuStart
            guard try await collection.count() == n else { throw StoreBenchError("insert lost rows") }
            let rate = Double(n) / (ms / 1e3)
            var figures = String(format: "%.0f wall, %.0f per CPU-second", rate, Double(n) / (cpuMs / 1e3))
            if lexical {
                // The FTS5 segment merging that Trove's background merger does once writes pause,
                // done here at once so its cost is on the record (and the queries below see the
                // merged index).
                let mergeCPUStart = processCPUMilliseconds()
                let (_, mergeMs) = try await measure { try await database.mergeTextIndexes() }
                let mergeCPUMs = processCPUMilliseconds() - mergeCPUStart
                figures += String(format: " + merge %.0f ms wall, %.0f ms CPU (insert + merge %.0f rows/s wall)",
                                  mergeMs, mergeCPUMs, Double(n) / ((ms + mergeMs) / 1e3))
            }
            trove[k].rates.append(rate)
            trove[k].figures.append(figures)
            if lexical && round == 0 { storePath = path }
        }
        // Baselines: raw SQLite through TroveSQLite, a cached statement, a transaction per
        // `perTransaction` rows.
        for (k, baseline) in baselines.enumerated() {
            let connection = try Connection(path: directory.appendingPathComponent("raw-\(k)-\(round).sqlite").path)
            try connection.execute(script: baseline.schema)
            let cpuStart = processCPUMilliseconds()
            let (_, ms) = try await measure {
                for start in stride(from: 0, to: n, by: baseline.perTransaction) {
                    try connection.transaction(.immediate) {
                        let statement = try connection.cachedStatement(baseline.sql)
                        for e in entries[start..<min(n, start + baseline.perTransaction)] {
                            statement.reset()
                            if baseline.bindVector {
                                try statement.bind(e.id.value.intValue!, at: 1)
                                try statement.bind(e.content, at: 2)
                                try statement.bind(e.source, at: 3)
                                try statement.bind(e.metadata!, at: 4)
                                try e.vector.withUnsafeBytes { try statement.bind(bytes: $0, at: 5) }
                            } else {
                                try statement.bind(e.content, at: 1)
                            }
                            while try statement.step() {}
                        }
                    }
                }
            }
            let cpuMs = processCPUMilliseconds() - cpuStart
            rawRuns[k].rates.append(Double(n) / (ms / 1e3))
            rawRuns[k].figures.append(String(format: "%.0f wall, %.0f per CPU-second", Double(n) / (ms / 1e3), Double(n) / (cpuMs / 1e3)))
        }
    }
    for runs in trove {
        print("  \(runs.label): \(String(format: "%8.0f", runs.rates.max() ?? 0)) rows/s  (rounds: \(runs.figures.joined(separator: ", ")))")
    }
    for runs in rawRuns {
        print("  \(runs.label): \(String(format: "%8.0f", runs.rates.max() ?? 0)) rows/s  (rounds: \(runs.figures.joined(separator: "; ")))")
    }
    if options.lexical.first == true {
        for (k, baseline) in baselines.enumerated() where baseline.schema == fts5Schema {
            let ratios = zip(trove[0].rates, rawRuns[k].rates).map { $0 / $1 }
            let shape = baseline.perTransaction >= n ? "one transaction" : "\(baseline.perTransaction) rows per transaction"
            print("  Trove FTS on / raw FTS5 (\(shape)), round by round: \(ratios.map { String(format: "%.2fx", $0) }.joined(separator: ", ")); "
                  + String(format: "best / best %.2fx", (trove[0].rates.max() ?? 0) / (rawRuns[k].rates.max() ?? 1)))
        }
    }

    if options.insertOnly { return }

    // 2. The first vector query after opening the file: without a snapshot (the matrix is read
    // back from the table row by row), then with the snapshot saved by saveIndexes(), warm (a
    // new Database in this process) and cold (a new process, see runFirstQuery).
    print("\n## Opening an existing file: the first vector query (loads the index), best of \(options.rounds)")
    try await firstQueries(
        label: "flat", path: storePath, collection: "packages", vectors: n, rounds: options.rounds,
        queries: options.vectors + "/queries.f16.npy", query: queries[0].vector)
    if options.hnsw {
        let hnswPath = directory.appendingPathComponent("hnsw.trove").path
        do {
            let database = try Database(path: hnswPath)
            let collection = try await SearchCollection("packages", in: database, dimension: dimension, metric: .cosine, lexicalSearch: false, index: .hnsw())
            var start = 0
            while start < n {
                let end = min(n, start + options.batch)
                try await collection.insert(Array(entries[start..<end]))
                start = end
            }
            let (_, buildMs) = try await measure { try await collection.loadIndex() }
            print(String(format: "  hnsw: graph built and saved in %.0f ms", buildMs))
        }
        try await firstQueries(
            label: "hnsw", path: hnswPath, collection: "packages", vectors: n, rounds: options.rounds,
            queries: options.vectors + "/queries.f16.npy", query: queries[0].vector)
    }
    let database = try Database(path: storePath)
    let collection = try await SearchCollection(named: "packages", in: database)
    print(String(format: "  file size: %.1f MiB", Double(database.fileSize()) / 1_048_576))

    // 3. Query latency through the public API.
    print("\n## Query latency (top-10, through SearchCollection; includes the change-log check and row hydration)")
    func latency(_ label: String, _ body: (Int) async throws -> Int) async throws {
        for i in 0..<min(10, queryCount) { _ = try await body(i) }  // warm-up
        var samples: [Double] = []
        var found = 0
        let cpuStart = processCPUMilliseconds()
        for i in 0..<queryCount {
            let (count, ms) = try await measure { try await body(i) }
            samples.append(ms)
            found += count
        }
        let cpuPerQuery = (processCPUMilliseconds() - cpuStart) / Double(queryCount)
        guard found > 0 else { throw StoreBenchError("\(label): no results at all") }
        print("  \(label.padding(toLength: 48, withPad: " ", startingAt: 0)) \(LatencySummary(samples: samples))"
            + String(format: "  CPU %.3f ms/query", cpuPerQuery))
    }
    try await latency("vector, exact (SIMD scan of all rows)") {
        try await collection.search(vector: queries[$0].vector, limit: 10).count
    }
    try await latency("vector, exact, filter 1% (where: id % 100 = 0)") {
        try await collection.search(vector: queries[$0].vector, where: .sql("id % 100 = 0", []), limit: 10).count
    }
    try await latency("text, typed (words OR-ed, BM25)") {
        try await collection.search(Query().matching(.typed(queries[$0].text)).limit(10)).count
    }
    try await latency("text, typed, with snippets") {
        try await collection.search(Query().matching(.typed(queries[$0].text)).limit(10).snippets(SnippetStyle())).count
    }
    try await latency("text, first word only (FTS5 syntax)") {
        let word = FTS5Pattern(typed: queries[$0].text)?.words.first ?? "a"
        return try await collection.search(Query().matching(.fts5(FTS5Pattern.quote(word))).limit(10)).count
    }
    try await latency("hybrid, RRF k=60 (legs 50 deep)") {
        try await collection.search(Query().nearest(to: queries[$0].vector, in: "embedding").matching(.typed(queries[$0].text)).limit(10)).count
    }
    // Baselines in the same run: the bare exact index (no SQLite), and the same OR query straight
    // to FTS5 (rowid + bm25 only).
    var bare = FlatIndex(dimension: dimension, metric: .cosine)
    bare.reserveCapacity(n)
    for e in entries { bare.upsert(id: e.id.value.intValue!, vector: e.vector) }
    try await latency("baseline: FlatIndex.search alone (no SQLite)") { bare.search(queries[$0].vector, k: 10).count }
    let raw = try Connection(path: storePath, options: .init(readOnly: true))
    defer { print("\n  load average at end \(loadAverage())") }
    try await latency("raw FTS5 MATCH, same OR query (rowids only)") {
        let expression = FTS5Pattern(typed: queries[$0].text)?.expression ?? "a"
        return try raw.query("SELECT rowid, rank FROM packages_fts WHERE packages_fts MATCH ? ORDER BY rank LIMIT 10", [.text(expression)]).count
    }
}

/// Times the first vector query after opening `path`: without a snapshot (a flat matrix read back
/// from the table; skipped for HNSW, whose rebuild store-ann measures), then with the snapshot
/// the first open saved, warm (a new Database in this process) and cold (a new process).
private func firstQueries(label: String, path: String, collection name: String, vectors: Int, rounds: Int, queries: String, query: [Float]) async throws {
    func once() async throws -> (ms: Double, cpu: Double, origin: IndexStatistics.Origin) {
        let database = try Database(path: path)
        let collection = try await SearchCollection(named: name, in: database)
        let cpu = processCPUMilliseconds()
        let (_, ms) = try await measure { try await collection.search(vector: query, limit: 10) }
        return (ms, processCPUMilliseconds() - cpu, try await collection.indexStatistics().origin)
    }
    func figures(_ runs: [(ms: Double, cpu: Double)]) -> String {
        String(format: "best %.1f ms wall, %.1f ms CPU (rounds, wall/CPU: %@)", runs.map(\.ms).min()!, runs.map(\.cpu).min()!,
               runs.map { String(format: "%.1f/%.1f", $0.ms, $0.cpu) }.joined(separator: ", "))
    }
    var results: [String: [Hit<VectorEntry>]] = [:]
    if label == "flat" {
        var times: [(ms: Double, cpu: Double)] = []
        for _ in 0..<rounds {
            do {
                let raw = try Connection(path: path)
                try raw.execute(script: "DROP TABLE IF EXISTS \"\(name)_index\"")
                raw.close()
            }
            let database = try Database(path: path)
            let collection = try await SearchCollection(named: name, in: database)
            let cpu = processCPUMilliseconds()
            let (found, ms) = try await measure { try await collection.search(vector: query, limit: 10) }
            times.append((ms, processCPUMilliseconds() - cpu))
            results["table"] = found
        }
        print("  \(label), no snapshot (read back from the table row by row, \(vectors) vectors): \(figures(times))")
        let database = try Database(path: path)
        let collection = try await SearchCollection(named: name, in: database)
        _ = try await collection.search(vector: query, limit: 10)
        try await database.saveIndexes()
        guard try await collection.indexStatistics().snapshotWatermark != nil else { throw StoreBenchError("the matrix was not saved") }
    }
    var warm: [(ms: Double, cpu: Double)] = []
    for _ in 0..<rounds {
        let (ms, cpu, origin) = try await once()
        guard origin == .snapshot else { throw StoreBenchError("\(label): first query did not load the snapshot: \(origin)") }
        warm.append((ms, cpu))
    }
    let database = try Database(path: path)
    results["snapshot"] = try await SearchCollection(named: name, in: database).search(vector: query, limit: 10)
    if let table = results["table"], table.map(\.id) != results["snapshot"]!.map(\.id) || table.map(\.score) != results["snapshot"]!.map(\.score) {
        throw StoreBenchError("results with and without the snapshot differ")
    }
    // A new process opens the file as a user's next launch would: after the last connection
    // closed and checkpointed. Read through an 89 MB write-ahead log instead, the same load
    // takes 3-4x longer (each page looked up in the log's index).
    do {
        let raw = try Connection(path: path)
        try raw.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        raw.close()
    }
    var cold: [(ms: Double, cpu: Double)] = []
    for _ in 0..<rounds {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = ["first-query", "--path", path, "--collection", name, "--queries", queries]
        let pipe = Pipe()
        child.standardOutput = pipe
        try child.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        let numbers = output.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard child.terminationStatus == 0, numbers.count == 2 else { throw StoreBenchError("first-query child failed: \(output)") }
        cold.append((numbers[0], numbers[1]))
    }
    print("  \(label), snapshot, warm (new Database, same process): \(figures(warm))")
    print("  \(label), snapshot, cold (new process): \(figures(cold))")
}

/// trove-bench first-query --path P --collection C --queries F.npy: opens the file in this new
/// process and prints the wall and CPU milliseconds of the first vector query (query row 0 of
/// F), which loads the index. The "cold" figure of `trove-bench store`.
///
/// `--create`: when P does not exist, first builds it as `store` does (the 58,029 shared vectors
/// in a search collection with full text; the texts are the packages' descriptions when
/// `packages.jsonl` is there, otherwise the shared descriptions in turn), saves the index and
/// checkpoints, then exits (`--hnsw`: an HNSW field without full text instead, as `store --hnsw`
/// builds it). `--warm N`: after the first query, N more, each after opening a new
/// `Database` on the file in this process, one "wall CPU" line each. `--resave`: first rebuild and
/// save the index in this process, without a checkpoint (as `store` before its warm figures).
func runFirstQuery(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    let path = options.string("path", "")
    let name = options.string("collection", "packages")
    if options.has("create"), !FileManager.default.fileExists(atPath: path) {
        try await createFirstQueryStore(path: path, collection: name, hnsw: options.has("hnsw"))
        return
    }
    let query = try readNPY(options.string("queries", sharedBenchDirectory + "/vectors/queries.f16.npy")).row(0)
    // As `store` does before its warm figures: the index rebuilt and saved by this process, its
    // Database kept open, the file not checkpointed by hand.
    var saver: Database?
    if options.has("resave") {
        saver = try Database(path: path)
        try await SearchCollection(named: name, in: saver!).rebuildIndex()
    }
    defer { _ = saver }
    func once() async throws {
        let database = try Database(path: path)
        let collection = try await SearchCollection(named: name, in: database)
        let cpu = processCPUMilliseconds()
        let (_, ms) = try await measure { try await collection.search(vector: query, limit: 10) }
        print(String(format: "%.3f %.3f", ms, processCPUMilliseconds() - cpu))
        let origin = try await collection.indexStatistics().origin
        guard origin == .snapshot else { throw StoreBenchError("the index was not loaded from its snapshot: \(origin)") }
    }
    try await once()
    for _ in 0..<options.int("warm", 0) { try await once() }
}

private func createFirstQueryStore(path: String, collection name: String, hnsw: Bool) async throws {
    let base = try readNPY(sharedBenchDirectory + "/vectors/base.f16.npy")
    let texts: [String]
    if FileManager.default.fileExists(atPath: benchCache + "/data/packages.jsonl") {
        texts = try readJSONLines(benchCache + "/data/packages.jsonl").map { $0["body"] as? String ?? "" }
    } else {
        let descriptions = try readJSONLines(sharedBenchDirectory + "/texts/package_texts.jsonl")
            .filter { $0["kind"] as? String == "description" }.compactMap { $0["text"] as? String }
        texts = (0..<base.rows).map { descriptions[$0 % descriptions.count] }
    }
    let dimension = base.columns
    let database = try Database(path: path)
    let collection = try await SearchCollection(name, in: database, dimension: dimension, metric: .cosine, lexicalSearch: !hnsw, index: hnsw ? .hnsw() : .flat)
    var start = 0
    while start < base.rows {
        let end = min(base.rows, start + 1_000)
        try await collection.insert((start..<end).map { i in
            VectorEntry(id: .int(Int64(i + 1)), content: texts[i], source: "pkg\(i)", metadata: "{\"row\":\(i)}",
                        vector: Array(base.floats[(i * dimension)..<((i + 1) * dimension)]))
        })
        start = end
    }
    if !hnsw { try await database.mergeTextIndexes() }
    try await collection.loadIndex()
    let raw = try Connection(path: path)
    try raw.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    print("created \(path): \(base.rows) × \(dimension)-d")
}
