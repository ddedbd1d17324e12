// trove-bench store --encrypt: the store figures on a plaintext and an encrypted file side by
// side in one run (rounds alternate plain, encrypted, plain, ...), so machine load hits both alike.
import Foundation
@_spi(Benchmarks) import Trove

/// One run of the store figures on one file.
private struct StoreFigures {
    var insertRowsPerSecond = 0.0
    var insertCPURowsPerSecond = 0.0
    var firstQueryMs = 0.0
    var firstQueryCPUMs = 0.0
    var exactP50 = 0.0
    var textP50 = 0.0
    var hybridP50 = 0.0
    var fileBytes: Int64 = 0
    // Pages the VFS sealed during the insert and opened during the first query (encrypted only).
    var insertPagesSealed: UInt64 = 0
    var insertPagesOpened: UInt64 = 0
    var firstQueryPagesOpened: UInt64 = 0
    // Of those, served by decrypt-ahead, and pages its worker decrypted (EncryptionReadAhead).
    var firstQueryReadAheadHits: UInt64 = 0
    var firstQueryReadAheadDecrypted: UInt64 = 0
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

private func cpuMilliseconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
}

private func elapsedMilliseconds(since start: ContinuousClock.Instant) -> Double {
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
}

/// Raw key for the benchmark's encrypted files (the cipher's cost does not depend on the key; a
/// passphrase would add one PBKDF2 derivation per open, reported separately).
private let benchKey = Encryption.key(Data((0..<32).map { UInt8($0) }))

/// Fresh opens timed for "first query after open" in each round.
private let firstQueryOpens = 5

/// For profiling (`perf record`): TROVE_BENCH_PROFILE_FIRST_QUERY=plaintext|encrypted builds that
/// file once, then only opens it and runs the first query this many times.
private let profiledFirstQueryOpens = 30

private func runOnce(
    encrypted: Bool, path: String, entries: [VectorEntry], queries: [(text: String, vector: [Float])],
    dimension: Int, batch: Int, profiling: Bool = false
) async throws -> StoreFigures {
    var figures = StoreFigures()
    func open() throws -> Database {
        encrypted ? try Database(path: path, encryption: benchKey) : try Database(path: path)
    }
    do {
        let database = try open()
        let collection = try await SearchCollection("packages", in: database, dimension: dimension, metric: .cosine)
        let cpuStart = cpuMilliseconds()
        let sealedBefore = EncryptionStatistics.current.pagesSealed
        let openedBefore = EncryptionStatistics.current.pagesOpened
        let start = ContinuousClock.now
        var index = 0
        while index < entries.count {
            let end = min(entries.count, index + batch)
            try await collection.insert(Array(entries[index..<end]))
            index = end
        }
        let ms = elapsedMilliseconds(since: start)
        figures.insertRowsPerSecond = Double(entries.count) / (ms / 1e3)
        figures.insertCPURowsPerSecond = Double(entries.count) / ((cpuMilliseconds() - cpuStart) / 1e3)
        figures.insertPagesSealed = EncryptionStatistics.current.pagesSealed - sealedBefore
        figures.insertPagesOpened = EncryptionStatistics.current.pagesOpened - openedBefore
        guard try await collection.count() == entries.count else { throw BenchCheckError("insert lost rows") }
        try await database.mergeTextIndexes()
        try await database.checkpoint()
    }
    // The first query after open, on \(firstQueryOpens) fresh opens of the file (median): one
    // sample per round was at the mercy of whatever else ran on the machine in that second.
    var firstWall: [Double] = [], firstCPU: [Double] = []
    for _ in 0..<firstQueryOpens - 1 {
        let database = try open()
        let collection = try await SearchCollection(named: "packages", in: database)
        let cpuStart = cpuMilliseconds()
        let start = ContinuousClock.now
        _ = try await collection.search(vector: queries[0].vector, limit: 10)
        firstWall.append(elapsedMilliseconds(since: start))
        firstCPU.append(cpuMilliseconds() - cpuStart)
    }
    let database = try open()
    let collection = try await SearchCollection(named: "packages", in: database)
    let before = EncryptionStatistics.current
    let openedBefore = before.pagesOpened
    let cpuStart = cpuMilliseconds()
    let firstStart = ContinuousClock.now
    _ = try await collection.search(vector: queries[0].vector, limit: 10)
    firstWall.append(elapsedMilliseconds(since: firstStart))
    firstCPU.append(cpuMilliseconds() - cpuStart)
    let after = EncryptionStatistics.current
    figures.firstQueryPagesOpened = after.pagesOpened - openedBefore
    figures.firstQueryReadAheadHits = after.readAheadHits - before.readAheadHits
    figures.firstQueryReadAheadDecrypted = after.readAheadPagesOpened - before.readAheadPagesOpened
    figures.firstQueryMs = median(firstWall)
    figures.firstQueryCPUMs = median(firstCPU)
    if profiling {
        for _ in 0..<profiledFirstQueryOpens {
            let database = try open()
            let collection = try await SearchCollection(named: "packages", in: database)
            let cpuStart = cpuMilliseconds()
            let start = ContinuousClock.now
            _ = try await collection.search(vector: queries[0].vector, limit: 10)
            firstWall.append(elapsedMilliseconds(since: start))
            firstCPU.append(cpuMilliseconds() - cpuStart)
        }
        figures.firstQueryMs = median(firstWall)
        figures.firstQueryCPUMs = median(firstCPU)
        return figures
    }
    figures.fileBytes = database.fileSize()
    func p50(_ body: (Int) async throws -> Int) async throws -> Double {
        for i in 0..<min(10, queries.count) { _ = try await body(i) }
        var samples: [Double] = []
        var found = 0
        for i in 0..<queries.count {
            let start = ContinuousClock.now
            found += try await body(i)
            samples.append(elapsedMilliseconds(since: start))
        }
        guard found > 0 else { throw BenchCheckError("no results") }
        return median(samples)
    }
    figures.exactP50 = try await p50 { try await collection.search(vector: queries[$0].vector, limit: 10).count }
    figures.textP50 = try await p50 { try await collection.search(Query().matching(.typed(queries[$0].text)).limit(10)).count }
    figures.hybridP50 = try await p50 {
        try await collection.search(Query().nearest(to: queries[$0].vector, in: "embedding").matching(.typed(queries[$0].text)).limit(10)).count
    }
    return figures
}

struct BenchCheckError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs plain and encrypted rounds alternately and prints the medians side by side.
func runEncryptedStoreComparison(
    entries: [VectorEntry], queries: [(text: String, vector: [Float])], dimension: Int, batch: Int, rounds: Int,
    directory: URL
) async throws {
    print("\n## Encryption at rest: plaintext vs encrypted (AES-256-GCM per page), \(rounds) rounds each, alternating")
    print("  raw 32-byte key (no PBKDF2 on open); FTS on; batch \(batch); medians over rounds; \(queries.count) queries")
    if let opens = ProcessInfo.processInfo.environment["TROVE_BENCH_FIRST_QUERY_AB"].flatMap({ Int($0) }) {
        try await runFirstQueryAB(
            entries: entries, queries: queries, dimension: dimension, batch: batch, opens: opens, directory: directory)
        return
    }
    if let kind = ProcessInfo.processInfo.environment["TROVE_BENCH_PROFILE_FIRST_QUERY"] {
        let path = directory.appendingPathComponent("profile.trove").path
        let figures = try await runOnce(
            encrypted: kind == "encrypted", path: path, entries: entries, queries: queries, dimension: dimension,
            batch: batch, profiling: true)
        print(String(format: "  profiled %@: insert %.0f rows/s (%.0f per CPU-s); first query %.0f ms (%.0f CPU ms), medians of %d opens",
                     kind, figures.insertRowsPerSecond, figures.insertCPURowsPerSecond, figures.firstQueryMs,
                     figures.firstQueryCPUMs, firstQueryOpens + profiledFirstQueryOpens)
              + "; insert sealed \(figures.insertPagesSealed) and opened \(figures.insertPagesOpened) pages"
              + "; last open: \(figures.firstQueryPagesOpened) pages opened, decrypt-ahead served \(figures.firstQueryReadAheadHits)"
              + " and decrypted \(figures.firstQueryReadAheadDecrypted)")
        return
    }
    var plain: [StoreFigures] = []
    var sealed: [StoreFigures] = []
    for round in 0..<rounds {
        for encrypted in [false, true] {
            let path = directory.appendingPathComponent("cipher-\(encrypted)-\(round).trove").path
            let figures = try await runOnce(
                encrypted: encrypted, path: path, entries: entries, queries: queries, dimension: dimension, batch: batch)
            if encrypted { sealed.append(figures) } else { plain.append(figures) }
            print(String(format: "  round %d %@: insert %.0f rows/s (%.0f per CPU-s), first query %.0f ms (%.0f CPU ms; median of %d opens), exact %.3f, text %.3f, hybrid %.3f ms, %.1f MiB",
                         round, encrypted ? "encrypted" : "plaintext", figures.insertRowsPerSecond, figures.insertCPURowsPerSecond,
                         figures.firstQueryMs, figures.firstQueryCPUMs, firstQueryOpens, figures.exactP50, figures.textP50, figures.hybridP50,
                         Double(figures.fileBytes) / 1_048_576)
                + (encrypted ? "; pages sealed by the insert \(figures.insertPagesSealed) (opened \(figures.insertPagesOpened)), opened by the first query \(figures.firstQueryPagesOpened)"
                    + " (decrypt-ahead: \(figures.firstQueryReadAheadHits) served, \(figures.firstQueryReadAheadDecrypted) decrypted)" : ""))
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-wal")
            try? FileManager.default.removeItem(atPath: path + "-shm")
        }
    }
    func row(_ label: String, _ unit: String, higherIsBetter: Bool, _ value: (StoreFigures) -> Double, format: String = "%.3f") {
        let p = median(plain.map(value)), e = median(sealed.map(value))
        let overhead = higherIsBetter ? (p / e - 1) * 100 : (e / p - 1) * 100
        print("| \(label) | \(String(format: format, p)) \(unit) | \(String(format: format, e)) \(unit) | \(String(format: "%+.1f%%", overhead)) |")
    }
    print("\n| figure | plaintext | encrypted | encrypted cost |")
    print("| --- | ---: | ---: | ---: |")
    row("batch insert", "rows/s", higherIsBetter: true, { $0.insertRowsPerSecond }, format: "%.0f")
    row("batch insert per CPU-second", "rows/s", higherIsBetter: true, { $0.insertCPURowsPerSecond }, format: "%.0f")
    row("first query after open", "ms", higherIsBetter: false, { $0.firstQueryMs }, format: "%.0f")
    row("first query after open, CPU time", "ms", higherIsBetter: false, { $0.firstQueryCPUMs }, format: "%.0f")
    row("exact vector p50", "ms", higherIsBetter: false, { $0.exactP50 })
    row("text p50", "ms", higherIsBetter: false, { $0.textP50 })
    row("hybrid p50", "ms", higherIsBetter: false, { $0.hybridP50 })
    row("file size", "MiB", higherIsBetter: false, { Double($0.fileBytes) / 1_048_576 }, format: "%.1f")
    try runSQLScriptComparison(rounds: rounds, directory: directory)
}

/// The SQL of `Benchmarks/sqlcipher/` (200,000 inserted rows, then three scans on a fresh open)
/// through TroveSQLite on a plaintext and an encrypted file: the VFS's cost on the same work that
/// `Benchmarks/sqlcipher/run.sh` gives sqlite3 and Debian's sqlcipher.
func runSQLScriptComparison(rounds: Int, directory: URL) throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("sqlcipher")
    let workload = try String(contentsOf: folder.appendingPathComponent("workload.sql"), encoding: .utf8)
    let query = try String(contentsOf: folder.appendingPathComponent("query.sql"), encoding: .utf8)
    print("\n## The sqlcipher/ SQL script through TroveSQLite (4 KB pages, WAL), \(rounds) rounds, alternating")
    var insert: [Bool: [Double]] = [:], scan: [Bool: [Double]] = [:]
    for round in 0..<rounds {
        for encrypted in [false, true] {
            let path = directory.appendingPathComponent("script-\(encrypted)-\(round).sqlite").path
            let key = encrypted ? try EncryptionKey(path: path, encryption: benchKey) : nil
            var start = ContinuousClock.now
            do {
                let connection = try Connection(.file(path), options: .init(foreignKeys: false, encryption: key))
                try connection.execute(script: workload)
            }
            let insertMs = elapsedMilliseconds(since: start)
            let openedBefore = EncryptionStatistics.current.pagesOpened
            let cpuStart = cpuMilliseconds()
            start = ContinuousClock.now
            do {
                let connection = try Connection(.file(path), options: .init(foreignKeys: false, encryption: key))
                try connection.execute(script: query)
                guard try connection.scalar("SELECT count(*) FROM t") == .integer(200_000) else {
                    throw BenchCheckError("script lost rows")
                }
            }
            let scanMs = elapsedMilliseconds(since: start)
            let scanCPUMs = cpuMilliseconds() - cpuStart
            let opened = EncryptionStatistics.current.pagesOpened - openedBefore
            insert[encrypted, default: []].append(insertMs)
            scan[encrypted, default: []].append(scanMs)
            print(String(format: "  round %d %@: insert 200000 rows %.2f s, open + 3 scans %.2f s (%.2f CPU s)", round,
                         encrypted ? "encrypted" : "plaintext", insertMs / 1e3, scanMs / 1e3, scanCPUMs / 1e3)
                + (encrypted ? "; pages opened by the scans \(opened)" : ""))
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }
    let pi = median(insert[false]!), ei = median(insert[true]!), ps = median(scan[false]!), es = median(scan[true]!)
    print(String(format: "  medians: insert %.2f s vs %.2f s (%+.1f%%), open + scans %.2f s vs %.2f s (%+.1f%%)",
                 pi / 1e3, ei / 1e3, (ei / pi - 1) * 100, ps / 1e3, es / 1e3, (es / ps - 1) * 100))
}

/// `trove-bench store --encrypt --script-only`: the SQL script comparison alone.
func runSQLScriptComparisonAlone(rounds: Int) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-bench-script-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try runSQLScriptComparison(rounds: rounds, directory: directory)
}

/// TROVE_BENCH_FIRST_QUERY_AB=<n>: `n` rounds, each inserting all rows into a fresh plaintext and
/// a fresh encrypted file, then timing the first query after open on the plaintext file, the
/// encrypted file without decrypt-ahead and with it (`.always`), all interleaved in one process so
/// the machine's load hits every variant alike. CPU time is the whole process's (the background
/// checkpointer and decrypt-ahead's worker included).
private func runFirstQueryAB(
    entries: [VectorEntry], queries: [(text: String, vector: [Float])], dimension: Int, batch: Int, opens: Int,
    directory: URL
) async throws {
    var insertWall = [[Double]](repeating: [], count: 2), insertCPU = [[Double]](repeating: [], count: 2)
    let kinds = ["plaintext", "encrypted, no decrypt-ahead", "encrypted, decrypt-ahead"]
    var wall = [[Double]](repeating: [], count: 3), cpu = [[Double]](repeating: [], count: 3)
    var served: UInt64 = 0, opened: UInt64 = 0
    let policy = EncryptionReadAhead.policy
    defer { EncryptionReadAhead.policy = policy }
    for round in 0..<opens {
        let plainPath = directory.appendingPathComponent("ab-plain-\(round).trove").path
        let sealedPath = directory.appendingPathComponent("ab-encrypted-\(round).trove").path
        for (kind, path) in [plainPath, sealedPath].enumerated() {
            let database = kind == 1 ? try Database(path: path, encryption: benchKey) : try Database(path: path)
            let collection = try await SearchCollection("packages", in: database, dimension: dimension, metric: .cosine)
            let cpuStart = cpuMilliseconds()
            let start = ContinuousClock.now
            var index = 0
            while index < entries.count {
                let end = min(entries.count, index + batch)
                try await collection.insert(Array(entries[index..<end]))
                index = end
            }
            insertWall[kind].append(elapsedMilliseconds(since: start))
            insertCPU[kind].append(cpuMilliseconds() - cpuStart)
            try await database.mergeTextIndexes()
            try await database.checkpoint()
        }
        for kind in 0..<3 {
            EncryptionReadAhead.policy = kind == 2 ? .always : .off
            let database = kind == 0 ? try Database(path: plainPath) : try Database(path: sealedPath, encryption: benchKey)
            let collection = try await SearchCollection(named: "packages", in: database)
            let before = EncryptionStatistics.current
            let cpuStart = cpuMilliseconds()
            let start = ContinuousClock.now
            _ = try await collection.search(vector: queries[0].vector, limit: 10)
            wall[kind].append(elapsedMilliseconds(since: start))
            cpu[kind].append(cpuMilliseconds() - cpuStart)
            if kind == 2 {
                let after = EncryptionStatistics.current
                served += after.readAheadHits - before.readAheadHits
                opened += after.pagesOpened - before.pagesOpened
            }
        }
        for path in [plainPath, sealedPath] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }
    func cost(_ value: Double, _ base: Double, higherIsBetter: Bool) -> String {
        String(format: "%+.1f%%", higherIsBetter ? (base / value - 1) * 100 : (value / base - 1) * 100)
    }
    print("  \(opens) rounds, interleaved; medians (wall / process CPU):")
    let rows = Double(entries.count)
    let insertRates = (0..<2).map { (rows / (median(insertWall[$0]) / 1e3), rows / (median(insertCPU[$0]) / 1e3)) }
    print(String(format: "    batch insert, plaintext: %.0f rows/s / %.0f per CPU-s", insertRates[0].0, insertRates[0].1))
    print(String(format: "    batch insert, encrypted: %.0f rows/s / %.0f per CPU-s", insertRates[1].0, insertRates[1].1)
          + " (\(cost(insertRates[1].0, insertRates[0].0, higherIsBetter: true)) / \(cost(insertRates[1].1, insertRates[0].1, higherIsBetter: true)))")
    for kind in 0..<3 {
        let w = median(wall[kind]), c = median(cpu[kind])
        let versus = kind == 0 ? "" : " (\(cost(w, median(wall[0]), higherIsBetter: false)) / \(cost(c, median(cpu[0]), higherIsBetter: false)))"
        print(String(format: "    first query, %@: %.0f ms / %.0f ms", kinds[kind], w, c) + versus)
    }
    print("    decrypt-ahead served \(served) of the \(opened) pages its first queries opened")
}
