import Foundation
import Trove

/// Search latency of a search collection while its database writes: searches run on reader
/// connections, so they should not wait for a batch insert in progress.
func runStoreReaderBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench store-readers [--rows N] [--batch N] [--seconds S]
              A search collection of N rows (default 20,000; 128-d, lexical search). Filtered exact
              top-10 vector searches and typed text searches from one task, p50/p99, first with no
              writer, then while one writer inserts batches of --batch rows (default 2,000)
              back to back for S seconds (default 6), and the writer's batch time.
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
    let items = try await database.collection("items", dimension: dimension)
    var rng = BenchRandom(state: 3)
    let words = ["river", "stone", "cloud", "paper", "garden", "window", "engine", "ticket", "lamp", "orbit"]
    func entries(_ ids: ClosedRange<Int>) -> [VectorEntry] {
        ids.map { id in
            VectorEntry(id: Int64(id), content: (0..<8).map { _ in words.randomElement(using: &rng)! }.joined(separator: " "),
                        source: "s\(id % 10)", vector: (0..<dimension).map { _ in Float.random(in: -1...1, using: &rng) })
        }
    }
    try await items.insertBatch(entries(1...rows))
    var queryRNG = BenchRandom(state: 11)
    func search() async throws -> (vector: Double, text: Double) {
        let q = (0..<dimension).map { _ in Float.random(in: -1...1, using: &queryRNG) }
        let t0 = now()
        let hits = try await items.search(vector: q, topK: 10, filter: SearchFilter(sql: "source != ?", bindings: [.text("s3")]))
        let t1 = now()
        let text = try await items.searchText(.typed("garden lamp"), topK: 10)
        let t2 = now()
        precondition(hits.count == 10 && text.count == 10)
        return ((t1 - t0) * 1000, (t2 - t1) * 1000)
    }
    _ = try await search()
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
                VectorEntry(id: Int64(id), content: "new row \(id)", source: "s\(id % 10)",
                            vector: (0..<dimension).map { _ in Float.random(in: -1...1, using: &writerRNG) })
            }
            let t0 = now()
            try await items.insertBatch(batchEntries)
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
