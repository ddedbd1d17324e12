// trove-bench admin: dump and load throughput and dump size for the 58,029 package records with
// vectors, backup time while inserts continue, purge of 100,000 expired records. Peers measured
// in the same run: the API's own bulk insert (for load) and an idle backup (for the busy one).
import Foundation
@_spi(Benchmarks) import Trove

func runAdminBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench admin [--packages FILE] [--vectors DIR] [--rounds R] [--purge N] [--json FILE]
              A document collection of the Debian package records (name, body with FTS5, 384-d
              all-MiniLM-L6-v2 vector): dump (records/s, MB, bytes/record), load into a new file
              (records/s; peer: insert of the same documents through the API), re-dump
              byte-compared; backup while a writer inserts continuously (peer: idle backup);
              purge of N expired records (default 100,000).
            """)
        return
    }
    let packagesPath = options.string("packages", benchCache + "/data/packages.jsonl")
    let vectorsPath = options.string("vectors", sharedBenchDirectory + "/vectors")
    let rounds = options.int("rounds", 3)
    let purgeCount = options.int("purge", 100_000)
    guard FileManager.default.fileExists(atPath: packagesPath) else {
        throw AdminBenchError("\(packagesPath) is missing: build it with \(sharedBenchDirectory)/data/build_corpora.py, or pass --packages")
    }
    // Setup (untimed): the records and their vectors.
    let packages = try readJSONLines(packagesPath)
    let base = try readNPY(vectorsPath + "/base.f16.npy")
    guard packages.count == base.rows else { throw AdminBenchError("packages (\(packages.count)) and vectors (\(base.rows)) differ") }
    let dimension = base.columns
    let documents: [Document] = (0..<base.rows).map { i in
        let vector = Array(base.floats[(i * dimension)..<((i + 1) * dimension)])
        return Document(id: .int(Int64(i + 1)), [
            "name": .string(packages[i]["name"] as? String ?? "pkg\(i)"),
            "body": .string(packages[i]["body"] as? String ?? ""),
            "embedding": .vector(vector),
        ])
    }
    let schema = DocumentSchema(
        fields: [.text("name", indexed: true), .text("body"), .vector("embedding", dimension: dimension)],
        fullText: FullTextDefinition(fields: ["body"]))
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-bench-admin-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
    func remove(_ path: String) { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

    print("trove-bench admin")
    print("  records \(documents.count) × \(dimension)-d (Debian package descriptions + all-MiniLM-L6-v2 vectors), FTS5 on body")
    print("  rounds \(rounds) (alternating load and its peer), \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(Connection.sqliteVersion)")

    let source = try Database(path: file("source.trove"))
    try await source.documents("packages", schema: schema).insert(documents)
    try await source.checkpoint()
    let sourceBytes = source.fileSize()
    print("  source file \(String(format: "%.1f", Double(sourceBytes) / 1e6)) MB")

    var dumpSeconds: [Double] = [], loadSeconds: [Double] = [], insertSeconds: [Double] = []
    var dumpBytes = 0
    var identical = true
    for round in 0..<rounds {
        let path = file("packages.dump")
        try? FileManager.default.removeItem(atPath: path)
        let start = ContinuousClock.now
        let report = try await source.dump(to: path)
        dumpSeconds.append(seconds(ContinuousClock.now - start))
        dumpBytes = report.bytes
        guard report.records["packages"] == documents.count else { throw AdminBenchError("dump wrote \(report.records)") }

        let target = file("loaded-\(round).trove")
        let loadStart = ContinuousClock.now
        let loaded = try Database(path: target)
        let result = try await loaded.load(from: path)
        loadSeconds.append(seconds(ContinuousClock.now - loadStart))
        guard result.records["packages"] == documents.count, result.problems.isEmpty else {
            throw AdminBenchError("load: \(result.records) \(result.problems)")
        }
        if round == 0 {
            try await loaded.dump(to: file("redump"))
            identical = FileManager.default.contentsEqual(atPath: path, andPath: file("redump"))
        }
        remove(target)

        let peerPath = file("inserted-\(round).trove")
        let insertStart = ContinuousClock.now
        let peer = try Database(path: peerPath)
        try await peer.documents("packages", schema: schema).insert(documents)
        insertSeconds.append(seconds(ContinuousClock.now - insertStart))
        remove(peerPath)
        print(String(format: "  round %d: dump %.2f s, load %.2f s (verify included), API insert %.2f s",
                     round + 1, dumpSeconds.last!, loadSeconds.last!, insertSeconds.last!))
    }
    let n = Double(documents.count)
    print("\n## Dump and load (\(documents.count) records; best of \(rounds))")
    print("| operation | records/s | seconds | notes |\n|---|---:|---:|---|")
    print(String(format: "| dump | %.0f | %.2f | %.1f MB, %.0f bytes/record, %.1f MB/s |", n / dumpSeconds.min()!, dumpSeconds.min()!,
                 Double(dumpBytes) / 1e6, Double(dumpBytes) / n, Double(dumpBytes) / 1e6 / dumpSeconds.min()!))
    print(String(format: "| load (+ verify) | %.0f | %.2f | re-dump byte-identical: %@ |", n / loadSeconds.min()!, loadSeconds.min()!,
                 identical ? "yes" : "NO"))
    print(String(format: "| peer: insert through the API | %.0f | %.2f | load / insert: %.2fx the time |", n / insertSeconds.min()!,
                 insertSeconds.min()!, loadSeconds.min()! / insertSeconds.min()!))

    // Backup: idle, and while a writer inserts batches of 100 continuously.
    var idle: [Double] = [], busy: [Double] = [], insertedDuring: [Int] = []
    let live = try await source.documents(named: "packages")
    var nextID = Int64(documents.count + 1)
    for round in 0..<rounds {
        let idlePath = file("idle-\(round).trove")
        let idleStart = ContinuousClock.now
        try await source.backup(to: idlePath)
        idle.append(seconds(ContinuousClock.now - idleStart))
        remove(idlePath)

        let firstID = nextID
        let stop = StopFlag()
        let writer = Task {
            var id = firstID
            var batches = 0
            while !stop.isSet {
                let batch = (0..<100).map { j in
                    Document(id: .int(id + Int64(j)), ["name": "new", "body": "inserted during the backup",
                                                      "embedding": documents[j].fields["embedding"]!])
                }
                try await live.insert(batch)
                id += 100
                batches += 1
            }
            return (id, batches)
        }
        try await Task.sleep(for: .milliseconds(100))
        let busyPath = file("busy-\(round).trove")
        let busyStart = ContinuousClock.now
        let before = try await live.count()
        try await source.backup(to: busyPath)
        busy.append(seconds(ContinuousClock.now - busyStart))
        let after = try await live.count()
        stop.set()
        let (last, _) = try await writer.value
        nextID = last
        insertedDuring.append(after - before)
        let copy = try Database(path: busyPath)
        let copied = try await copy.documents(named: "packages").count()
        guard copied >= before, copied <= after else { throw AdminBenchError("backup holds \(copied), not within \(before)...\(after)") }
        remove(busyPath)
        print(String(format: "  round %d: idle backup %.2f s, backup under inserts %.2f s (%d records inserted meanwhile)",
                     round + 1, idle.last!, busy.last!, insertedDuring.last!))
    }
    print("\n## Backup (\(String(format: "%.1f", Double(source.fileSize()) / 1e6)) MB file; best of \(rounds))")
    print("| backup | seconds | notes |\n|---|---:|---|")
    print(String(format: "| idle | %.2f | |", idle.min()!))
    print(String(format: "| while a writer inserts batches of 100 | %.2f | %.2fx idle; median %d records committed during it |",
                 busy.min()!, busy.min()! / idle.min()!, insertedDuring.sorted()[insertedDuring.count / 2]))

    // Purge: N expired documents (short text with FTS5, an indexed integer).
    let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))
    var purgeSeconds: [Double] = [], batchedSeconds: [Double] = []
    for round in 0..<rounds {
        for batched in [false, true] {
            let path = file("purge-\(round)-\(batched).trove")
            clock.set(Date(timeIntervalSince1970: 1_700_000_000))
            let db = try Database(path: path, clock: clock)
            let sessions = try await db.documents("sessions", schema: DocumentSchema(
                fields: [.text("user"), .integer("n", indexed: true)], fullText: FullTextDefinition(fields: ["user"]),
                allowsExpiry: true))
            let rows = (1...purgeCount).map { Document(id: .int(Int64($0)), ["user": .string("user \($0 % 977)"), "n": .int(Int64($0))]) }
            try await sessions.insert(rows, expiry: .after(.seconds(60)))
            try await sessions.insert([Document(id: .int(Int64(purgeCount + 1)), ["user": "stays", "n": 0])])
            clock.advance(by: .seconds(61))
            let start = ContinuousClock.now
            let purged = batched ? try await db.purgeExpired(batchSize: 1_000) : try await sessions.purgeExpired()
            if batched { batchedSeconds.append(seconds(ContinuousClock.now - start)) } else { purgeSeconds.append(seconds(ContinuousClock.now - start)) }
            guard purged == purgeCount, try await sessions.count() == 1 else { throw AdminBenchError("purged \(purged)") }
            remove(path)
        }
        print(String(format: "  round %d: purge %.2f s in one transaction, %.2f s in batches of 1,000", round + 1,
                     purgeSeconds.last!, batchedSeconds.last!))
    }
    print("\n## Purge of \(purgeCount) expired records (FTS5 + B-tree + change log; best of \(rounds))")
    print("| purge | records/s | seconds |\n|---|---:|---:|")
    print(String(format: "| one transaction (collection.purgeExpired()) | %.0f | %.2f |", Double(purgeCount) / purgeSeconds.min()!, purgeSeconds.min()!))
    print(String(format: "| batches of 1,000 (database.purgeExpired()) | %.0f | %.2f |", Double(purgeCount) / batchedSeconds.min()!, batchedSeconds.min()!))

    if let path = options.values["json"] {
        let out: [String: Any] = [
            "records": documents.count, "dimension": dimension, "rounds": rounds,
            "dump_seconds": dumpSeconds, "dump_records_per_s": n / dumpSeconds.min()!, "dump_bytes": dumpBytes,
            "load_seconds": loadSeconds, "load_records_per_s": n / loadSeconds.min()!, "redump_identical": identical,
            "peer_insert_seconds": insertSeconds, "peer_insert_records_per_s": n / insertSeconds.min()!,
            "backup_idle_seconds": idle, "backup_busy_seconds": busy, "backup_inserted_during": insertedDuring,
            "purge_records": purgeCount, "purge_seconds": purgeSeconds, "purge_batched_seconds": batchedSeconds,
            "purge_records_per_s": Double(purgeCount) / purgeSeconds.min()!,
        ]
        let data = try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys, .prettyPrinted])
        try data.write(to: URL(fileURLWithPath: path))
        print("wrote \(path)")
    }
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

private struct AdminBenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Tells the writer task to stop.
private final class StopFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
