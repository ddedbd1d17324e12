// trove-bench contexts: the grdb-peer record workload through a model context (reference
// models, identity map, change tracking), against Trove's value-model path and GRDB 7.8 records
// in the same run; memory per tracked model; a fetch of models with large lazy blobs vs eager.
import Foundation
import Observation
@_spi(Benchmarks) import Trove

/// The workload's record as a reference model.
@Model final class ItemRecord {
    var id: Int64
    var title: String
    var body: String
    var category: String
    var year: Int
    var score: Double
    var tags: [String]

    init(_ item: Item) {
        (id, title, body, category, year, score, tags) = (item.id, item.title, item.body, item.category, item.year, item.score, item.tags)
    }

    static var collectionName: String { "item" }
    static var modelOptions: ModelOptions { ModelOptions().indexed(\ItemRecord.category, \ItemRecord.year) }
}

enum ItemsV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [ItemRecord.self]
}

/// A model with a large blob, lazy or not.
@Model final class LazyPhoto {
    var id: Int64
    var caption: String
    var pixels: LazyField<Data>
    init(id: Int64, caption: String, pixels: Data) { (self.id, self.caption, self.pixels) = (id, caption, LazyField(pixels)) }
    static var collectionName: String { "photo" }
}

@Model final class EagerPhoto {
    var id: Int64
    var caption: String
    var pixels: Data?
    init(id: Int64, caption: String, pixels: Data) { (self.id, self.caption, self.pixels) = (id, caption, pixels) }
    static var collectionName: String { "photo" }
}

enum LazyPhotosV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [LazyPhoto.self]
}

enum EagerPhotosV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [EagerPhoto.self]
}

private func temporaryFile(_ name: String) throws -> (path: String, cleanup: () -> Void) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-\(name)-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return (dir.appendingPathComponent("db.trove").path, { try? FileManager.default.removeItem(at: dir) })
}

/// A container of one version's models in the file at `path`.
private func openContainer(_ version: any VersionedSchema.Type, at path: String) throws -> ModelContainer {
    try ModelContainer(for: Schema(versionedSchema: version), configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
}

/// Wall seconds of `body`, on the main actor, where contexts' models live.
@MainActor
private func timed(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// One round: the value-model path and the same through a context, each on its own file, in
/// pairs: each fetch and each change runs right after its counterpart on the other path (value,
/// then context, `passes` times), so both halves of a pair see the machine alike; the ratios
/// kept are the medians of the pairs' ratios.
@MainActor
private func contextWorkload(rows: Int, passes: Int) async throws -> [String: Double] {
    let source = makeItems(rows)
    var result: [String: Double] = ["rows": Double(rows)]
    var samples: [String: [(wall: Double, cpu: Double)]] = [:]
    func sample(_ key: String, _ body: () async throws -> Void) async throws {
        let cpu = processCPUSeconds()
        let wall = try await timed(body)
        samples[key, default: []].append((wall, processCPUSeconds() - cpu))
    }

    // Value models: insert in one transaction. Contexts: insert N new models and save. Each
    // pass on new files; the last pass's go on to the fetches and changes.
    var cleanups: [() -> Void] = []
    defer { for cleanup in cleanups { cleanup() } }
    var database: Database!
    var items: ModelCollection<Item>!
    var container: ModelContainer!
    for _ in 0..<passes {
        let (valuePath, valueCleanup) = try temporaryFile("values")
        let (contextPath, contextCleanup) = try temporaryFile("contexts")
        cleanups += [valueCleanup, contextCleanup]
        (items, database, container) = (nil, nil, nil)
        database = try Database(path: valuePath)
        items = try await database.models(Item.self)
        container = try openContainer(ItemsV1.self, at: contextPath)
        let records = source.map(ItemRecord.init)
        try await sample("value_insert") { try await items.insert(source) }
        try await sample("context_insert") {
            let context = container.mainContext
            context.autosaveEnabled = false  // the save is what is timed
            for record in records { context.insert(record) }
            try context.save()
        }
    }

    // Fetch all: values (the previous pass's released outside the timing), then into a fresh
    // context (the previous one dropped outside the timing); the last pass's go on to the change.
    var fetched: [Item] = []
    var reader: ModelContext!
    var tracked: [ItemRecord] = []
    for pass in 0..<passes {
        fetched = []
        try await sample("value_fetch") { fetched = try await items.fetch() }
        precondition(fetched.count == rows)
        (reader, tracked) = (nil, [])
        reader = ModelContext(container)
        let (before, heapBefore) = (residentMegabytes(), heapMegabytes())
        try await sample("context_fetch") { tracked = try reader.fetch(FetchDescriptor<ItemRecord>()) }
        precondition(tracked.count == rows)
        // Memory from the first pass only: later ones reuse what the dropped contexts freed.
        if pass == 0 {
            result["context_bytes_per_model"] = (residentMegabytes() - before) * 1_048_576 / Double(rows)
            result["context_heap_bytes_per_model"] = (heapMegabytes() - heapBefore) * 1_048_576 / Double(rows)
        }
    }

    // Change 10%: copies of the fetched values changed and written back, then the tracked
    // instances changed in place and saved.
    for _ in 0..<passes {
        try await sample("value_update") {
            var updated: [Item] = []
            for item in fetched where item.id % 10 == 1 {
                var copy = item
                copy.score += 1
                updated.append(copy)
            }
            let changed = updated
            try await database.write { tx in try updateEach(changed, in: tx.models(Item.self)) }
            try await database.checkpoint()
        }
        try await sample("context_update") {
            for record in tracked where record.id % 10 == 1 { record.score += 1 }
            try reader.save()
            try await container.database.checkpoint()
        }
    }
    let changed = try await container.database.query("SELECT count(*) AS n FROM item WHERE _version = \(1 + passes)").first?.int64("n")
    precondition(changed == Int64(rows / 10), "updated \(changed ?? -1)")

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    for (key, values) in samples {
        result[key + "_s"] = median(values.map(\.wall))
        result[key + "_cpu_s"] = median(values.map(\.cpu))
    }
    for step in ["insert", "fetch", "update"] {
        let pairs = zip(samples["context_" + step]!, samples["value_" + step]!)
        result[step + "_time_ratio"] = median(pairs.map { $0.wall / $1.wall })
        result[step + "_cpu_ratio"] = median(pairs.map { $0.cpu / $1.cpu })
    }
    return result
}

/// A fetch of `rows` models with a blob of `bytes` each into a context with the blob lazy, and
/// of the first `eagerRows` of them with it eager (each eager model holds its blob in memory).
@MainActor
private func blobWorkload(rows: Int, eagerRows: Int, bytes: Int) async throws -> [String: Double] {
    var result: [String: Double] = [:]
    let blob = Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let (path, cleanup) = try temporaryFile("blobs")
    defer { cleanup() }
    do {
        let container = try openContainer(LazyPhotosV1.self, at: path)
        // Saved 500 at a time, each by a fresh context: a save holds the rows it writes.
        for start in stride(from: 1, through: rows, by: 500) {
            let context = ModelContext(container)
            for i in start...min(rows, start + 499) {
                context.insert(LazyPhoto(id: Int64(i), caption: "Photo \(i)", pixels: blob))
            }
            try context.save()
        }
        try await container.database.checkpoint()
    }
    for (name, schema, n) in [("lazy", LazyPhotosV1.self as any VersionedSchema.Type, rows), ("eager", EagerPhotosV1.self, eagerRows)] {
        let container = try openContainer(schema, at: path)
        // A context of its own: the fetch alone is timed (the main context's autosave would
        // also watch each model it hands out).
        let context = ModelContext(container)
        let before = residentMegabytes()
        var count = 0
        let s = try await timed {
            count = name == "lazy"
                ? try context.fetch(FetchDescriptor<LazyPhoto>(fetchLimit: n)).count
                : try context.fetch(FetchDescriptor<EagerPhoto>(fetchLimit: n)).count
        }
        precondition(count == n)
        result["\(name)_rows"] = Double(n)
        result["\(name)_fetch_s"] = s
        result["\(name)_rss_growth_mb"] = residentMegabytes() - before
    }
    return result
}

/// A one-model save on the main context of a file of `rows` models: `saves` times, one model
/// changed (a tracked model's field) and saved, then `saves` times one new model inserted and
/// saved; each save timed alone. The context tracks only the models it changes (a save visits
/// the models changed since the last one). Returns the sorted latencies in seconds.
@MainActor
private func oneModelSaveWorkload(rows: Int, saves: Int) async throws -> (update: [Double], insert: [Double]) {
    let (path, cleanup) = try temporaryFile("one-save")
    defer { cleanup() }
    let container = try openContainer(ItemsV1.self, at: path)
    do {
        // Setup, untimed: the file's rows, written by a context of their own.
        let loader = ModelContext(container)
        for item in makeItems(rows) { loader.insert(ItemRecord(item)) }
        try loader.save()
    }
    try await container.database.checkpoint()
    let context = container.mainContext
    context.autosaveEnabled = false  // each save is called and timed by hand
    var random = BenchRandom(state: 42)
    var ids = (0..<saves).map { _ in Int64(random.next() % UInt64(rows)) + 1 }
    ids = Array(Set(ids)).sorted()
    let models = try ids.map { try context.model(ItemRecord.self, id: $0)! }
    var update: [Double] = []
    for model in models {
        model.score += 1
        let start = DispatchTime.now().uptimeNanoseconds
        try context.save()
        update.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    var insert: [Double] = []
    var template = makeItems(1)[0]
    for i in 0..<saves {
        template.id = Int64(rows + 1 + i)
        context.insert(ItemRecord(template))
        let start = DispatchTime.now().uptimeNanoseconds
        try context.save()
        insert.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    // Check the work was done: every changed model is one version on, every insert is stored.
    let last = Int64(rows)
    let moved = try ModelContext(container).fetchCount(FetchDescriptor<ItemRecord>(predicate: #Predicate { $0.id > last }))
    precondition(moved == saves, "inserted \(moved)")
    let bumped = try await container.database.query("SELECT count(*) AS n FROM item WHERE _version = 2").first?.int64("n")
    precondition(bumped == Int64(models.count), "updated \(bumped ?? -1)")
    return (update.sorted(), insert.sorted())
}

func runContextBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench contexts [--rows N] [--rounds R] [--passes P] [--grdb-peer BINARY] [--blob-rows M] [--eager-rows E] [--blob-bytes B] [--saves S] [--only one-save]
              The grdb-peer workload (README in ../shared/bench/peers/grdb-peer) through a model context:
              insert N new reference models and save, fetch all into a fresh context, change 10% and save;
              each against Trove's value models (same round) and GRDB 7.8 records (its binary, --grdb-peer
              or GRDB_PEER, run after each round); insert (on new files), fetch and change P times per round, each value pass
              right before its context pass; medians kept, ratios as medians of the pairs' (default P 1).
              Memory per tracked model: heap bytes (mallinfo2) and RSS growth of the first fetch / N.
              Then M models with a B-byte blob each fetched into a context with the blob lazy, and the
              first E of them with it eager (each eager model holds its blob: E x B bytes of memory)
              Then a one-model save on the main context of an N-model file: S saves of one changed
              model, S saves of one new model, each timed alone (p50, p90, p99; target p50 <= 0.5 ms)
              (defaults: N 100,000, M 10,000, E 2,000, B 1,000,000, S 1,000). --only one-save runs
              just that part.
            """)
        return
    }
    let rows = options.int("rows", 100_000)
    let rounds = options.int("rounds", 3)
    let passes = max(1, options.int("passes", 1))
    let blobRows = options.int("blob-rows", 10_000)
    let blobBytes = options.int("blob-bytes", 1_000_000)
    let eagerRows = min(blobRows, options.int("eager-rows", 2_000))
    let peer = options.values["grdb-peer"] ?? ProcessInfo.processInfo.environment["GRDB_PEER"]
    let saves = options.int("saves", 1_000)
    if options.values["only"] == "one-save" {
        try await reportOneModelSave(rows: rows, saves: saves)
        return
    }
    print("contexts: rows \(rows), rounds \(rounds), passes \(passes), blobs \(blobRows) (eager \(eagerRows)) x \(blobBytes) bytes, \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(Connection.sqliteVersion)")
    let (runs, peerRuns, _) = try await alternatingRounds(rounds, rows: rows, peer: peer) {
        try await contextWorkload(rows: rows, passes: passes) as [String: Any]
    }
    func med(_ runs: [[String: Any]], _ key: String) -> Double {
        let values = runs.compactMap { ($0[key] as? NSNumber)?.doubleValue }.sorted()
        return values.isEmpty ? .nan : values[values.count / 2]
    }
    print("\n| step (N = \(rows)) | context rows/s | value models rows/s | GRDB records rows/s | context / GRDB | context time / value time (median of pairs) | context CPU / value CPU (median of pairs) |")
    print("|---|---|---|---|---|---|---|")
    for (step, key, grdbKey, n) in [
        ("insert N, save", "insert", "insert_rows_per_s", rows),
        ("fetch all", "fetch", "fetch_all_records_per_s", rows),
        ("change 10%, save", "update", "update_records_rows_per_s", rows / 10),
    ] {
        let (c, v) = (med(runs, "context_\(key)_s"), med(runs, "value_\(key)_s"))
        let grdb = peerRuns.isEmpty ? Double.nan : med(peerRuns, grdbKey)
        print(String(format: "| %@ | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.2fx |", step, Double(n) / c, Double(n) / v, grdb,
                     Double(n) / c / grdb, med(runs, key + "_time_ratio"), med(runs, key + "_cpu_ratio")))
    }
    print(String(format: "memory per tracked model: %.0f bytes on the heap (allocated bytes, mallinfo2), %.0f bytes of RSS (growth of the fetch into a context / N, medians)",
                 med(runs, "context_heap_bytes_per_model"), med(runs, "context_bytes_per_model")))
    let blobs = try await blobWorkload(rows: blobRows, eagerRows: eagerRows, bytes: blobBytes)
    print(String(format: "\nfetch into a context of models with a %d-byte blob: lazy %d models %.3f s, +%.0f MB RSS (%.0f bytes/model); eager %d models %.3f s, +%.0f MB RSS (%.2f MB/model)",
                 blobBytes, blobRows, blobs["lazy_fetch_s"]!, blobs["lazy_rss_growth_mb"]!,
                 blobs["lazy_rss_growth_mb"]! * 1_048_576 / Double(blobRows), eagerRows, blobs["eager_fetch_s"]!,
                 blobs["eager_rss_growth_mb"]!, blobs["eager_rss_growth_mb"]! / Double(eagerRows)))
    try await reportOneModelSave(rows: rows, saves: saves)
}

private func reportOneModelSave(rows: Int, saves: Int) async throws {
    print("one-model save on a main context: rows \(rows), saves \(saves), SQLite \(Connection.sqliteVersion)")
    let (update, insert) = try await oneModelSaveWorkload(rows: rows, saves: saves)
    for (name, values) in [("change one model, save", update), ("insert one model, save", insert)] {
        print(String(format: "%@: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms (%d saves)", name, percentile(values, 50) * 1e3,
                     percentile(values, 90) * 1e3, percentile(values, 99) * 1e3, values.count))
    }
}
