import Foundation
import Trove

/// Search latency of a search collection while its database writes: searches run on reader
/// connections, so they should not wait for a batch insert in progress.
func runStoreReaderBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench store-readers [--rows N] [--batch N] [--seconds S] [--writer-rate N] [--scaling-only]
              A search collection of N rows (default 20,000; 128-d, lexical search). Filtered exact
              top-10 vector searches and typed text searches from one task, p50/p99, first with no
              writer, then while one writer inserts batches of --batch rows (default 2,000)
              back to back for S seconds (default 6), and the writer's batch time.
              Then reader scaling on one collection (a fresh one of N rows): searches/s of 1 and of
              2 reader tasks (each alternating the two searches) while the writer inserts a batch
              and deletes the previous one, paced at --writer-rate batches/s (default 2) and flat
              out; S seconds each, alternating 1/2/1/2. --scaling-only: just this part.
            """)
        return
    }
    let rows = options.int("rows", 20_000)
    let batch = options.int("batch", 2_000)
    let seconds = Double(options.int("seconds", 6))
    let dimension = 128
    print("store-readers: rows \(rows), batch \(batch), \(Int(seconds)) s, \(dimension)-d, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-store-readers-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let database = try Database(path: dir.appendingPathComponent("r.trove").path)
    let items = try await SearchCollection("items", in: database, dimension: dimension)
    var rng = BenchRandom(state: 3)
    let words = ["river", "stone", "cloud", "paper", "garden", "window", "engine", "ticket", "lamp", "orbit"]
    func entries(_ ids: ClosedRange<Int>) -> [VectorEntry] {
        ids.map { id in
            VectorEntry(id: .int(Int64(id)), content: (0..<8).map { _ in words.randomElement(using: &rng)! }.joined(separator: " "),
                        source: "s\(id % 10)", vector: (0..<dimension).map { _ in Float.random(in: -1...1, using: &rng) })
        }
    }
    try await items.insert(entries(1...rows))
    var queryRNG = BenchRandom(state: 11)
    func search() async throws -> (vector: Double, text: Double) {
        let q = (0..<dimension).map { _ in Float.random(in: -1...1, using: &queryRNG) }
        let t0 = now()
        let hits = try await items.search(vector: q, where: .sql("source != ?", [.text("s3")]), limit: 10)
        let t1 = now()
        let text = try await items.search(Query().matching(.typed("garden lamp")).limit(10))
        let t2 = now()
        precondition(hits.count == 10 && text.count == 10)
        return ((t1 - t0) * 1000, (t2 - t1) * 1000)
    }
    _ = try await search()
    if !options.has("scaling-only") {
        func report(_ label: String, _ samples: [(vector: Double, text: Double)]) {
            let v = samples.map(\.vector), t = samples.map(\.text)
            print("  \(label): \(samples.count) searches; vector p50 \(format(percentile(v, 50), 3)) ms, p99 \(format(percentile(v, 99), 3)) ms; "
                  + "text p50 \(format(percentile(t, 50), 3)) ms, p99 \(format(percentile(t, 99), 3)) ms")
        }
        var idle: [(vector: Double, text: Double)] = []
        let idleEnd = now() + seconds / 2
        while now() < idleEnd { idle.append(try await search()) }
        report("no writer", idle)
        let deadline = now() + seconds
        let writer = Task { () -> [Double] in
            var next = rows + 1
            var times: [Double] = []
            while now() < deadline {
                var writerRNG = BenchRandom(state: UInt64(next))
                let batchEntries = (next...(next + batch - 1)).map { id in
                    VectorEntry(id: .int(Int64(id)), content: "new row \(id)", source: "s\(id % 10)",
                                vector: (0..<dimension).map { _ in Float.random(in: -1...1, using: &writerRNG) })
                }
                let t0 = now()
                try await items.insert(batchEntries)
                times.append((now() - t0) * 1000)
                next += batch
            }
            return times
        }
        var busy: [(vector: Double, text: Double)] = []
        while now() < deadline { busy.append(try await search()) }
        let batches = try await writer.value
        report("one writer inserting", busy)
        print("  writer: \(batches.count) batches of \(batch), p50 \(format(percentile(batches, 50), 1)) ms each")
    }

    // A fresh collection of the same rows, kept at about that size: each writer batch is inserted
    // and the one before it deleted, so every measurement sees the same index.
    let scaling = try await SearchCollection("scaling", in: database, dimension: dimension)
    rng = BenchRandom(state: 3)
    try await scaling.insert(entries(1...rows))
    _ = try await scaling.search(vector: [Float](repeating: 0.5, count: dimension), limit: 10)
    _ = try await scaling.search(Query().matching(.typed("garden lamp")).limit(10))
    var nextID = rows + 1_000_000
    for writerRate in [options.int("writer-rate", 2), 0] {
        print("readers on one collection of \(rows) rows, one writer inserting a batch of \(batch) and deleting the previous one "
              + (writerRate > 0 ? "\(writerRate) times a second" : "flat out") + ", \(Int(seconds)) s each:")
        var one: [Double] = [], two: [Double] = []
        for _ in 0..<2 {
            for readers in [1, 2] {
                let (perSecond, written) = try await sameCollectionScaling(
                    scaling, readers: readers, seconds: seconds, batch: batch, writerRate: writerRate,
                    dimension: dimension, firstID: nextID)
                nextID += written + batch
                print("  \(readers) reader\(readers == 1 ? "" : "s"): \(Int(perSecond)) searches/s (writer \(written / batch) batches)")
                if readers == 1 { one.append(perSecond) } else { two.append(perSecond) }
            }
        }
        print("  two readers / one: \(String(format: "%.2fx", percentile(two, 50) / percentile(one, 50)))")
    }
}

/// Searches per second of `readers` tasks, each alternating a filtered exact top-10 vector search
/// and a typed text search of `items`, while one writer inserts batches (paced at `writerRate`
/// batches a second, or flat out at 0). Returns the rows written too.
private func sameCollectionScaling(
    _ items: SearchCollection, readers: Int, seconds: Double, batch: Int, writerRate: Int, dimension: Int, firstID: Int
) async throws -> (searches: Double, written: Int) {
    let (perSecond, batches) = try await searchesBesideWriter(
        readers: readers, seconds: seconds, writerRate: writerRate, seed: 200,
        write: { k in
            let base = firstID + k * batch
            var rng = BenchRandom(state: UInt64(base))
            let entries = (base..<(base + batch)).map { id in
                VectorEntry(id: .int(Int64(id)), content: "new row \(id)", source: "batch\(base)",
                            vector: (0..<dimension).map { _ in Float.random(in: -1...1, using: &rng) })
            }
            try await items.insert(entries)
            if k > 0 { try await items.delete(where: .source("batch\(base - batch)")) }
        },
        search: { count, rng in
            if count % 2 == 0 {
                let q = (0..<dimension).map { _ in Float.random(in: -1...1, using: &rng) }
                let hits = try await items.search(vector: q, where: .sql("source != ?", [.text("s3")]), limit: 10)
                precondition(hits.count == 10)
            } else {
                let hits = try await items.search(Query().matching(.typed("garden lamp")).limit(10))
                precondition(hits.count == 10)
            }
        })
    let written = batches * batch
    if written > 0 { try await items.delete(where: .source("batch\(firstID + written - batch)")) }
    return (perSecond, written)
}

/// Searches per second of `readers` tasks, each calling `search(count, &rng)` back to back for
/// `seconds` (`rng` seeded `seed + reader`), while one writer task calls `write(k)` for k = 0, 1,
/// ..., paced at `writerRate` calls a second (0: flat out). Returns how many writes finished too.
/// Shared by `store-readers` and `documents`.
func searchesBesideWriter(
    readers: Int, seconds: Double, writerRate: Int, seed: UInt64,
    write: @escaping @Sendable (Int) async throws -> Void,
    search: @escaping @Sendable (_ count: Int, _ rng: inout BenchRandom) async throws -> Void
) async throws -> (searches: Double, writes: Int) {
    let deadline = now() + seconds
    let writer = Task { () -> Int in
        var writes = 0
        let start = now()
        while now() < deadline {
            if writerRate > 0 {
                // The wait read once: read twice, the clock could pass `due` in between.
                let wait = start + Double(writes) / Double(writerRate) - now()
                if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
                if now() >= deadline { break }
            }
            try await write(writes)
            writes += 1
        }
        return writes
    }
    let tasks = (0..<readers).map { r in
        Task { () -> Int in
            var rng = BenchRandom(state: seed + UInt64(r))
            var count = 0
            while now() < deadline {
                try await search(count, &rng)
                count += 1
            }
            return count
        }
    }
    var total = 0
    for task in tasks { total += try await task.value }
    return (Double(total) / seconds, try await writer.value)
}
