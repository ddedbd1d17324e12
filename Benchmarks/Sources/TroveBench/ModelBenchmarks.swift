// trove-bench models: the typed-record workload of ../shared/bench/peers/grdb-peer through
// Trove's model layer (Codable models, #Predicate, SortDescriptor), with the same JSON keys,
// side by side with GRDB (its binary, when given), plus the cost of translating a predicate.
import Foundation
@_spi(Benchmarks) import Trove

extension Item: Model {
    static var collectionName: String { "item" }
    static var modelOptions: ModelOptions { ModelOptions().indexed(\Item.category, \Item.year) }
}

/// The filtered query of the workload, as a model fetch.
private func filtered(_ category: String, _ year: Int) -> FetchDescriptor<Item> {
    FetchDescriptor(predicate: #Predicate { $0.category == category && $0.year >= year },
                    sortBy: [SortDescriptor(\.score, order: .reverse)], fetchLimit: 20)
}

/// One run of the workload through models; the keys are grdb-peer's.
private func modelWorkload(rows: Int) async throws -> [String: Any] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-models-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let database = try Database(path: dir.appendingPathComponent("db.trove").path)
    let items = try await database.models(Item.self)
    let source = makeItems(rows)
    var result: [String: Any] = ["peer": "Trove models (Codable, #Predicate; reader pool, WAL, synchronous NORMAL)", "rows": rows]

    // Timed with its checkpoint, as in `documents` (GRDB's commit checkpoints).
    let insertS = try await seconds {
        try await items.insert(source)
        try await database.checkpoint()
    }
    result["insert_rows_per_s"] = Int(Double(rows) / insertS)

    var fetched = 0
    let fetchS = try await seconds { fetched = try await items.fetch().count }
    precondition(fetched == rows, "fetched \(fetched)")
    result["fetch_all_records_per_s"] = Int(Double(rows) / fetchS)

    // The peer's 1,000 queries (SplitMix64 seeded with 7), each built, translated and run.
    var rng = BenchRandom(state: 7)
    let queries = (0..<1000).map { _ in ("c\(Int.random(in: 0..<50, using: &rng))", Int.random(in: 1990...2026, using: &rng)) }
    var latencies: [Double] = []
    var matched = 0
    for (c, y) in queries {
        latencies.append(try await seconds { matched += try await items.fetch(filtered(c, y)).count } * 1000)
    }
    latencies.sort()
    result["filtered_fetch_p50_ms"] = latencies[latencies.count / 2]
    result["filtered_fetch_rows_returned"] = matched

    let updateS = try await seconds {
        try await database.execute("UPDATE item SET score = score + 1 WHERE id % 10 = 0")
    }
    result["update_sql_rows_per_s"] = Int(Double(rows / 10) / updateS)
    let updated = source.filter { $0.id % 10 == 1 }.map { item -> Item in
        var copy = item
        copy.score += 1
        return copy
    }
    let updateRecordsS = try await seconds {
        try await database.write { tx in
            try updateEach(updated, in: tx.models(Item.self))
        }
        // As in `documents`: GRDB checkpoints in its commit, so the update is timed with Trove's.
        try await database.checkpoint()
    }
    result["update_records_rows_per_s"] = Int(Double(updated.count) / updateRecordsS)

    var groups = 0
    let aggS = try await seconds {
        groups = try await items.documents.aggregate([.count("id"), .average("score")], groupBy: [Field("category")]).count
    }
    precondition(groups == 50)
    result["group_count_avg_ms"] = aggS * 1000

    // Translation alone: each of the 1,000 filtered descriptors (a predicate with two
    // comparisons and captured values, one sort key) into the engine's query, 20 times, after a
    // first call has cached the key paths. Building the #Predicate itself is the caller's code.
    let descriptors = queries.map { filtered($0.0, $0.1) }
    _ = try descriptors[0].query()
    let passes = 20
    var translated = 0
    let cpuStart = threadCPUSeconds()
    let translationS = try await seconds {
        for _ in 0..<passes { for descriptor in descriptors { translated += try descriptor.query().limit ?? 0 } }
    }
    let cpuS = threadCPUSeconds() - cpuStart
    precondition(translated == 20 * passes * descriptors.count)
    result["predicate_translation_us"] = translationS / Double(passes * descriptors.count) * 1e6
    // The loop never suspends, so it runs on one thread: its CPU time excludes waiting for a core.
    result["predicate_translation_cpu_us"] = cpuS / Double(passes * descriptors.count) * 1e6

    // Observation, as grdb-peer: an observed count of category c0 (a #Predicate), 200
    // single-model inserts, each timed from the start of the write to the delivery of the count.
    let initial = try await items.count(where: #Predicate { $0.category == "c0" })
    let observed = try await observeCommitToDelivery(
        items.observeCount(where: #Predicate { $0.category == "c0" }), commits: 200,
        write: { i in
            try await items.insert(Item(id: Int64(rows + 1 + i), title: "t", body: "b", category: "c0", year: 2026, score: 0.5, tags: []))
        },
        isDelivered: { count, i in count == initial + i + 1 })
    result["observe_commit_to_delivery_p50_ms"] = observed[observed.count / 2]
    return result
}

func runModelBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench models [--rows N] [--json FILE] [--grdb-peer BINARY] [--raw-peer BINARY] [--rounds R]
                               [--gate] [--gate-ratio X]
                               [--update-ab] [--translation-only]
              The grdb-peer workload (README in ../shared/bench/peers/grdb-peer) through Trove's model
              layer: Codable models, #Predicate filters, SortDescriptor orders. Insert N models in one
              transaction, fetch all, 1,000 filtered+ordered+limit-20 fetches, update 10% (models and
              SQL), group by with count and avg, and the time to translate the filtered fetch into a
              query. With --grdb-peer (or GRDB_PEER) the peer runs in the same invocation after each round;
              --raw-peer (or RAW_PEER): the bare C API peer too (see documents --help).
              --gate: exit status 3 when the median update as records is below --gate-ratio (default 1.5) x GRDB's.
              --update-ab: only the update, as models and as prebuilt documents, alternating on one file.
              --translation-only: only the translation, for a few seconds (for profiling).
              --fetch-only [--passes P]: insert once, then fetch all as models and as documents P times
              each, alternating (for profiling the decoding).
            """)
        return
    }
    if options.has("translation-only") {
        // For profiling: translate the filtered descriptor for a few seconds.
        let descriptors = (0..<1000).map { filtered("c\($0 % 50)", 1990 + $0 % 37) }
        var n = 0
        let cpuStart = threadCPUSeconds()
        let s = try await seconds { for _ in 0..<200 { for d in descriptors { n += try d.query().limit ?? 0 } } }
        let cpu = threadCPUSeconds() - cpuStart
        print("translation: \(String(format: "%.2f", s / 200_000 * 1e6)) µs wall, \(String(format: "%.2f", cpu / 200_000 * 1e6)) µs CPU (\(n / 20) queries)")
        return
    }
    if options.has("fetch-only") {
        try await fetchOnly(rows: options.int("rows", 100_000), passes: options.int("passes", 10))
        return
    }
    if options.has("update-ab") {
        try await updateAB(rows: options.int("rows", 100_000))
        return
    }
    let rows = options.int("rows", 100_000)
    let rounds = options.int("rounds", 1)
    let peer = options.values["grdb-peer"] ?? ProcessInfo.processInfo.environment["GRDB_PEER"]
    print("models: rows \(rows), rounds \(rounds), \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(Connection.sqliteVersion)")
    let (troveRuns, peerRuns, rawRuns) = try await alternatingRounds(rounds, rows: rows, peer: peer, rawPeer: rawPeer(options)) {
        try await modelWorkload(rows: rows)
    }
    printPeerComparison(troveRuns: troveRuns, peerRuns: peerRuns, rawRuns: rawRuns,
                        keys: grdbPeerKeys + ["observe_commit_to_delivery_p50_ms"])
    for key in ["predicate_translation_us", "predicate_translation_cpu_us"] {
        let values = troveRuns.compactMap { ($0[key] as? NSNumber)?.doubleValue }.sorted()
        print("\(key): \(String(format: "%.2f", values[values.count / 2])) µs per fetch descriptor (target < 20 µs)")
    }
    if let file = options.values["json"] { try writeLastRounds(troveRuns, peerRuns, to: file) }
    checkUpdateGate(options, troveRuns: troveRuns, peerRuns: peerRuns)
}

/// The timed loop of the model update (see the documents' `updateEach`).
@inline(never)
func updateEach(_ models: [Item], in writer: ModelWriter<Item>) throws {
    for model in models { try writer.update(model) }
}

/// CPU time of the calling thread (not counting time spent waiting for a core).
private func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The update of the workload as models and as prebuilt documents, alternating on one file:
/// what the model layer adds to an update.
private func updateAB(rows: Int) async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-models-ab-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let database = try Database(path: dir.appendingPathComponent("db.trove").path)
    let items = try await database.models(Item.self)
    let source = makeItems(rows)
    try await items.insert(source)
    for round in 1...3 {
        let models = source.filter { $0.id % 10 == 1 }.map { item -> Item in
            var copy = item
            copy.score += Double(round)
            return copy
        }
        let documents = models.map(\.document)
        let modelS = try await seconds {
            try await database.write { tx in
                try updateEach(models, in: tx.models(Item.self))
            }
            try await database.checkpoint()
        }
        let documentS = try await seconds {
            try await database.write { tx in
                try updateEach(documents, in: tx.documents("item"))
            }
            try await database.checkpoint()
        }
        print("round \(round): models \(Int(Double(models.count) / modelS)) rows/s, documents \(Int(Double(documents.count) / documentS)) rows/s")
    }
}

/// Fetch all, as models and as documents, alternating on one file: the decoding alone.
private func fetchOnly(rows: Int, passes: Int) async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-models-fetch-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let database = try Database(path: dir.appendingPathComponent("db.trove").path)
    let items = try await database.models(Item.self)
    try await items.insert(makeItems(rows))
    var modelRates: [Double] = []
    var documentRates: [Double] = []
    for _ in 0..<passes {
        var n = 0
        modelRates.append(Double(rows) / (try await seconds { n = try await items.fetch().count }))
        precondition(n == rows)
        documentRates.append(Double(rows) / (try await seconds { n = try await items.documents.fetch().count }))
        precondition(n == rows)
    }
    print("fetch all, records/s (median of \(passes)): models \(Int(modelRates.sorted()[passes / 2])), documents \(Int(documentRates.sorted()[passes / 2]))")
    print("  passes in order: models \(modelRates.map { Int($0) }), documents \(documentRates.map { Int($0) })")
}
