// trove-bench observe: live-query latency, from the start of a write to the delivery of the
// result it changed, as grdb-peer's `observe_commit_to_delivery_p50_ms` (an observed count of
// category c0 over the peer's records; 200 single-row inserts), side by side with GRDB.
import Foundation
@_spi(Benchmarks) import Trove

/// Commit-to-delivery latencies in milliseconds, sorted: for each of `commits` writes, the time
/// from the start of `write(i)` to the moment the observation delivers a value for which
/// `isDelivered(value, i)` holds. The observation is consumed on its own task, as an app's UI
/// would consume it. Reusable for any observation (the models benchmark passes a model query).
///
/// ```swift
/// let latencies = try await observeCommitToDelivery(
///     items.observeCount(Field("category") == "c0"), commits: 200,
///     write: { i in try await items.insert(newItem(i)) }, isDelivered: { count, i in count == start + i + 1 })
/// ```
func observeCommitToDelivery<Observation: AsyncSequence & Sendable>(
    _ observation: Observation, commits: Int,
    write: (Int) async throws -> Void,
    isDelivered: @escaping @Sendable (Observation.Element, Int) -> Bool
) async throws -> [Double] where Observation.Element: Sendable {
    let deliveries = AsyncStream<(Observation.Element, UInt64)>.makeStream()
    let consumer = Task {
        for try await value in observation { deliveries.continuation.yield((value, DispatchTime.now().uptimeNanoseconds)) }
        deliveries.continuation.finish()
    }
    defer { consumer.cancel() }
    var delivered = deliveries.stream.makeAsyncIterator()
    guard await delivered.next() != nil else { throw BenchError.observationEnded }
    var latencies: [Double] = []
    latencies.reserveCapacity(commits)
    for i in 0..<commits {
        let start = DispatchTime.now().uptimeNanoseconds
        try await write(i)
        while true {
            guard let (value, at) = await delivered.next() else { throw BenchError.observationEnded }
            if isDelivered(value, i) {
                latencies.append(Double(at - start) / 1e6)
                break
            }
        }
    }
    return latencies.sorted()
}

enum BenchError: Error { case observationEnded }

/// The peer's observation workload through Trove: `rows` records, then an observed count of c0
/// and 200 single-row inserts of category c0. Returns the p50 in ms (and, for context, the p90
/// and the p50 of the write alone, from its start until `insert` returns).
func troveObservationWorkload(rows: Int, commits: Int = 200) async throws -> (p50: Double, p90: Double, writeP50: Double) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-observe-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let database = try Database(path: dir.appendingPathComponent("db.trove").path)
    let items = try await database.documents("item", schema: peerRecordSchema)
    try await items.insert(peerRecordDocuments(rows))
    let initial = try await items.count(where: Field("category") == "c0")
    var writes: [Double] = []
    let latencies = try await observeCommitToDelivery(
        items.observeCount(where: Field("category") == "c0"), commits: commits,
        write: { i in
            let start = DispatchTime.now().uptimeNanoseconds
            try await items.insert(Document(id: .int(Int64(rows + 1 + i)), [
                "title": "t", "body": "b", "category": "c0", "year": 2026, "score": 0.5, "tags": [],
            ]))
            writes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        },
        isDelivered: { count, i in count == initial + i + 1 })
    writes.sort()
    return (latencies[latencies.count / 2], latencies[latencies.count * 9 / 10], writes[writes.count / 2])
}

func runObservationBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench observe [--rows N] [--rounds R] [--grdb-peer BINARY]
              Live-query latency: N grdb-peer records, an observed count of category c0, 200
              single-row inserts of c0, each timed from the start of the write to the delivery of
              the new count. Prints {"observe_commit_to_delivery_p50_ms": ...}. With --grdb-peer
              (or GRDB_PEER) the peer runs in the same run, alternating with Trove.
            """)
        return
    }
    let rows = options.int("rows", 100_000)
    let rounds = options.int("rounds", 1)
    let peer = options.values["grdb-peer"] ?? ProcessInfo.processInfo.environment["GRDB_PEER"]
    let key = "observe_commit_to_delivery_p50_ms"
    var trove: [Double] = []
    var grdb: [Double] = []
    for round in 1...rounds {
        let (p50, p90, writeP50) = try await troveObservationWorkload(rows: rows)
        trove.append(p50)
        var line = "round \(round): trove p50 \(String(format: "%.3f", p50)) ms (p90 \(String(format: "%.3f", p90)); "
            + "the write alone p50 \(String(format: "%.3f", writeP50)))"
        if let peer, let json = try runGRDBPeer(peer, rows: rows), let value = (json[key] as? NSNumber)?.doubleValue {
            grdb.append(value)
            line += ", grdb p50 \(String(format: "%.3f", value)) ms"
        }
        print(line)
    }
    let troveMedian = trove.sorted()[trove.count / 2]
    var json: [String: Any] = [key: troveMedian, "rows": rows, "rounds": rounds]
    if !grdb.isEmpty {
        let grdbMedian = grdb.sorted()[grdb.count / 2]
        json["grdb_" + key] = grdbMedian
        json["trove_over_grdb"] = troveMedian / grdbMedian
    }
    let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .prettyPrinted])
    print(String(decoding: data, as: UTF8.self))
}

