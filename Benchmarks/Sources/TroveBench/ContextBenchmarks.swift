// trove-bench contexts: the grdb-peer record workload through a model context (reference
// models, identity map, change tracking), against Trove's value-model path and GRDB 7.8 records
// in the same run; memory per tracked model; a fetch of models with large lazy blobs vs eager.
import Foundation
import Observation
import Trove
import TroveSQLite

/// The workload's record as a reference model.
@Observable final class ItemRecord: ReferenceModel {
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

    enum CodingKeys: String, CodingKey {
        case _id = "id", _title = "title", _body = "body", _category = "category", _year = "year", _score = "score", _tags = "tags"
    }
    static var properties: [PartialKeyPath<ItemRecord>] { [\.title, \.body, \.category, \.year, \.score, \.tags] }
    static var collectionName: String { "item" }
    static var modelOptions: ModelOptions { ModelOptions().indexed(\ItemRecord.category, \ItemRecord.year) }
}

enum ItemsV1: VersionedSchema {
    static let versionIdentifier = "1"
    static let models: [any PersistentModel.Type] = [ItemRecord.self]
}

/// A model with a large blob, lazy or not.
@Observable final class LazyPhoto: ReferenceModel {
    var id: Int64
    var caption: String
    var pixels: LazyField<Data>
    init(id: Int64, caption: String, pixels: Data) { (self.id, self.caption, self.pixels) = (id, caption, LazyField(pixels)) }
    enum CodingKeys: String, CodingKey { case _id = "id", _caption = "caption", _pixels = "pixels" }
    static var properties: [PartialKeyPath<LazyPhoto>] { [\.caption, \.pixels] }
    static var collectionName: String { "photo" }
}

@Observable final class EagerPhoto: ReferenceModel {
    var id: Int64
    var caption: String
    var pixels: Data?
    init(id: Int64, caption: String, pixels: Data) { (self.id, self.caption, self.pixels) = (id, caption, pixels) }
    enum CodingKeys: String, CodingKey { case _id = "id", _caption = "caption", _pixels = "pixels" }
    static var properties: [PartialKeyPath<EagerPhoto>] { [\.caption, \.pixels] }
    static var collectionName: String { "photo" }
}

enum LazyPhotosV1: VersionedSchema {
    static let versionIdentifier = "1"
    static let models: [any PersistentModel.Type] = [LazyPhoto.self]
}

enum EagerPhotosV1: VersionedSchema {
    static let versionIdentifier = "1"
    static let models: [any PersistentModel.Type] = [EagerPhoto.self]
}

private func temporaryFile(_ name: String) throws -> (path: String, cleanup: () -> Void) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-\(name)-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return (dir.appendingPathComponent("db.trove").path, { try? FileManager.default.removeItem(at: dir) })
}

/// Wall seconds of `body`, on the main actor, where contexts' models live.
@MainActor
private func timed(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Runs `body` `passes` times; keeps the median wall time as `result[key + "_s"]` and the median
/// process CPU time (every thread: the context's, the reader's, the writer's; less moved by other
/// work on a shared machine than wall time) as `result[key + "_cpu_s"]`. `untimed` runs before
/// each pass, outside the timing.
@MainActor
private func measure(_ key: String, passes: Int, into result: inout [String: Double], untimed: () -> Void = {},
                     _ body: () async throws -> Void) async rethrows {
    var (walls, cpus): ([Double], [Double]) = ([], [])
    for _ in 0..<passes {
        untimed()
        let cpu = processCPUSeconds()
        walls.append(try await timed(body))
        cpus.append(processCPUSeconds() - cpu)
    }
    result[key + "_s"] = walls.sorted()[walls.count / 2]
    result[key + "_cpu_s"] = cpus.sorted()[cpus.count / 2]
}

/// One round: the value-model path, then the same through a context, each on its own file.
@MainActor
private func contextWorkload(rows: Int, passes: Int) async throws -> [String: Double] {
    let source = makeItems(rows)
    var result: [String: Double] = ["rows": Double(rows)]

    // Value models: insert in one transaction, fetch all, update 10% one by one in one transaction.
    do {
        let (path, cleanup) = try temporaryFile("values")
        defer { cleanup() }
        let database = try Database(path: path)
        let items = try await database.models(Item.self)
        try await measure("value_insert", passes: 1, into: &result) { try await items.insert(source) }
        var fetched: [Item] = []
        // The previous pass's values are released outside the timing, as the context path's
        // dropped contexts are.
        try await measure("value_fetch", passes: passes, into: &result, untimed: { fetched = [] }) { fetched = try await items.fetch() }
        precondition(fetched.count == rows)
        // The change is timed on both paths: here, copies of the fetched values changed and
        // written back; in the context, the tracked instances changed in place and saved.
        try await measure("value_update", passes: passes, into: &result) {
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
    }

    // Contexts: insert N new models and save; fetch all into a fresh context; change 10%, save.
    let (path, cleanup) = try temporaryFile("contexts")
    defer { cleanup() }
    let container = try await ModelContainer(ItemsV1.self, at: path)
    let records = source.map(ItemRecord.init)
    try await measure("context_insert", passes: 1, into: &result) {
        let context = container.mainContext
        for record in records { try context.insert(record) }
        try await context.save()
    }
    // `--passes`: earlier passes fetch into contexts that are then dropped (the median is kept);
    // the last one's context goes on to the update.
    var fetchResult: [String: Double] = [:]
    var walls: [Double] = [], cpus: [Double] = []
    var reader: ModelContext!
    var tracked: [ItemRecord] = []
    for pass in 0..<passes {
        (reader, tracked) = (nil, [])
        reader = try await ModelContainer(ItemsV1.self, database: container.database).mainContext
        let (before, heapBefore) = (residentMegabytes(), heapMegabytes())
        try await measure("context_fetch", passes: 1, into: &fetchResult) { tracked = try await reader.fetchAll(ItemRecord.self) }
        (walls, cpus) = (walls + [fetchResult["context_fetch_s"]!], cpus + [fetchResult["context_fetch_cpu_s"]!])
        precondition(tracked.count == rows)
        // Memory from the first pass only: later ones reuse what the dropped contexts freed.
        if pass == 0 {
            result["context_bytes_per_model"] = (residentMegabytes() - before) * 1_048_576 / Double(rows)
            result["context_heap_bytes_per_model"] = (heapMegabytes() - heapBefore) * 1_048_576 / Double(rows)
        }
    }
    result["context_fetch_s"] = walls.sorted()[walls.count / 2]
    result["context_fetch_cpu_s"] = cpus.sorted()[cpus.count / 2]
    try await measure("context_update", passes: passes, into: &result) {
        for record in tracked where record.id % 10 == 1 { record.score += 1 }
        try await reader.save()
        try await container.database.checkpoint()
    }
    let changed = try await container.database.query("SELECT count(*) AS n FROM item WHERE _version = \(1 + passes)").first?.int64("n")
    precondition(changed == Int64(rows / 10), "updated \(changed ?? -1)")
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
        let container = try await ModelContainer(LazyPhotosV1.self, at: path)
        // Saved 500 at a time: a save holds the rows it writes.
        for start in stride(from: 1, through: rows, by: 500) {
            try await container.backgroundContext().perform { context in
                for i in start...min(rows, start + 499) {
                    try context.insert(LazyPhoto(id: Int64(i), caption: "Photo \(i)", pixels: blob))
                }
                try await context.save()
            }
        }
        try await container.database.checkpoint()
    }
    for (name, schema, n) in [("lazy", LazyPhotosV1.self as any VersionedSchema.Type, rows), ("eager", EagerPhotosV1.self, eagerRows)] {
        let container = try await ModelContainer(schema, at: path)
        let before = residentMegabytes()
        var count = 0
        let s = try await timed {
            count = name == "lazy"
                ? try await container.mainContext.fetch(FetchDescriptor<LazyPhoto>(fetchLimit: n)).count
                : try await container.mainContext.fetch(FetchDescriptor<EagerPhoto>(fetchLimit: n)).count
        }
        precondition(count == n)
        result["\(name)_rows"] = Double(n)
        result["\(name)_fetch_s"] = s
        result["\(name)_rss_growth_mb"] = residentMegabytes() - before
    }
    return result
}

func runContextBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench contexts [--rows N] [--rounds R] [--passes P] [--grdb-peer BINARY] [--blob-rows M] [--eager-rows E] [--blob-bytes B]
              The grdb-peer workload (README in ../shared/bench/peers/grdb-peer) through a model context:
              insert N new reference models and save, fetch all into a fresh context, change 10% and save;
              each against Trove's value models (same round) and GRDB 7.8 records (its binary, --grdb-peer
              or GRDB_PEER, run after each round); fetch and change P times per round, medians kept (default 1).
              Memory per tracked model (RSS growth of the fetch / N).
              Then M models with a B-byte blob each fetched into a context with the blob lazy, and the
              first E of them with it eager (each eager model holds its blob: E x B bytes of memory)
              (defaults: N 100,000, M 10,000, E 2,000, B 1,000,000).
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
    print("contexts: rows \(rows), rounds \(rounds), passes \(passes), blobs \(blobRows) (eager \(eagerRows)) x \(blobBytes) bytes, \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(Connection.sqliteVersion)")
    let (runs, peerRuns, _) = try await alternatingRounds(rounds, rows: rows, peer: peer) {
        try await contextWorkload(rows: rows, passes: passes) as [String: Any]
    }
    func med(_ runs: [[String: Any]], _ key: String) -> Double {
        let values = runs.compactMap { ($0[key] as? NSNumber)?.doubleValue }.sorted()
        return values.isEmpty ? .nan : values[values.count / 2]
    }
    print("\n| step (N = \(rows)) | context rows/s | value models rows/s | GRDB records rows/s | context / GRDB | context time / value time | context CPU / value CPU |")
    print("|---|---|---|---|---|---|---|")
    for (step, contextKey, valueKey, grdbKey, n) in [
        ("insert N, save", "context_insert_s", "value_insert_s", "insert_rows_per_s", rows),
        ("fetch all", "context_fetch_s", "value_fetch_s", "fetch_all_records_per_s", rows),
        ("change 10%, save", "context_update_s", "value_update_s", "update_records_rows_per_s", rows / 10),
    ] {
        let (c, v) = (med(runs, contextKey), med(runs, valueKey))
        let (cc, vc) = (med(runs, contextKey.replacingOccurrences(of: "_s", with: "_cpu_s")), med(runs, valueKey.replacingOccurrences(of: "_s", with: "_cpu_s")))
        let grdb = peerRuns.isEmpty ? Double.nan : med(peerRuns, grdbKey)
        print(String(format: "| %@ | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.2fx |", step, Double(n) / c, Double(n) / v, grdb,
                     Double(n) / c / grdb, c / v, cc / vc))
    }
    print(String(format: "memory per tracked model: %.0f bytes on the heap (allocated bytes, mallinfo2), %.0f bytes of RSS (growth of the fetch into a context / N, medians)",
                 med(runs, "context_heap_bytes_per_model"), med(runs, "context_bytes_per_model")))
    let blobs = try await blobWorkload(rows: blobRows, eagerRows: eagerRows, bytes: blobBytes)
    print(String(format: "\nfetch into a context of models with a %d-byte blob: lazy %d models %.3f s, +%.0f MB RSS (%.0f bytes/model); eager %d models %.3f s, +%.0f MB RSS (%.2f MB/model)",
                 blobBytes, blobRows, blobs["lazy_fetch_s"]!, blobs["lazy_rss_growth_mb"]!,
                 blobs["lazy_rss_growth_mb"]! * 1_048_576 / Double(blobRows), eagerRows, blobs["eager_fetch_s"]!,
                 blobs["eager_rss_growth_mb"]!, blobs["eager_rss_growth_mb"]! / Double(eagerRows)))
}
