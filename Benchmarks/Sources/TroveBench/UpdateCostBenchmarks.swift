// trove-bench update-cost: where the CPU time of "update 10% as records" goes. The peer
// workload's table is created through Trove, then the same 10,000-row update runs as Trove
// documents, as Trove models, and as raw SQL on copies of the table with parts of Trove's
// layout (checks, the version trigger, the change log's triggers, RETURNING, savepoints, the
// log-prune query) added one at a time, alternating, timed in CPU time of the writing thread
// (robust to other processes on a shared machine).
import Foundation
@_spi(Benchmarks) import Trove

func runUpdateCostBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    let rows = options.int("rows", 100_000)
    let rounds = options.int("rounds", 3)
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-update-cost-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("db.trove").path
    let database = try Database(path: path)
    let items = try await database.models(Item.self)
    let source = makeItems(rows)
    try await items.insert(source)
    let raw = try Connection(.file(path))
    try raw.execute(script: "PRAGMA cache_size = -16384")
    let itemSQL = try raw.query("SELECT sql FROM sqlite_master WHERE name = 'item'")[0].string(at: 0)!
    let triggers = try raw.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'item'")
        .map { ($0.string(at: 0)!, $0.string(at: 1)!) }
    let columns = "\"id\", \"_version\", \"title\", \"body\", \"category\", \"year\", \"score\", \"tags\""
    func copy(_ name: String, checks: Bool, triggerNames: [String]) throws {
        if checks {
            try raw.execute(script: itemSQL.replacingOccurrences(of: "CREATE TABLE \"item\"", with: "CREATE TABLE \"\(name)\""))
        } else {
            try raw.execute(script: "CREATE TABLE \(name)(id INTEGER PRIMARY KEY, _version INTEGER NOT NULL DEFAULT 1, title TEXT NOT NULL, body TEXT NOT NULL, category TEXT NOT NULL, year INTEGER NOT NULL, score REAL NOT NULL, tags TEXT NOT NULL)")
        }
        try raw.execute(script: "CREATE INDEX \(name)_cy ON \(name)(category, year); INSERT INTO \(name) SELECT \(columns) FROM item")
        for (trigger, sql) in triggers where triggerNames.contains(trigger) {
            try raw.execute(script: sql.replacingOccurrences(of: "\"\(trigger)\"", with: "\"\(name)_\(trigger)\"")
                .replacingOccurrences(of: "ON \"item\"", with: "ON \"\(name)\"")
                .replacingOccurrences(of: "UPDATE \"item\" SET", with: "UPDATE \"\(name)\" SET"))
        }
    }
    try copy("plain", checks: false, triggerNames: [])
    try copy("checks", checks: true, triggerNames: [])
    try copy("version", checks: true, triggerNames: ["item_version"])
    try copy("full", checks: true, triggerNames: ["item_version", "item_log_au"])
    // The change log's trigger writing to a log without AUTOINCREMENT; a trigger that writes
    // one row of another table; the checks with the log row written by a second statement.
    try copy("noautoincrement", checks: true, triggerNames: ["item_version"])
    try copy("counter", checks: true, triggerNames: [])
    try copy("twostatements", checks: true, triggerNames: [])
    try raw.execute(script: """
        CREATE TABLE plain_log(seq INTEGER PRIMARY KEY, rid INTEGER NOT NULL, op INTEGER NOT NULL);
        CREATE TRIGGER noautoincrement_au AFTER UPDATE ON noautoincrement BEGIN
            INSERT INTO plain_log(rid, op) SELECT old.id, 2 WHERE old.id != new.id;
            INSERT INTO plain_log(rid, op) VALUES (new.id, 1);
        END;
        CREATE TABLE counter_n(k INTEGER PRIMARY KEY, n INTEGER); INSERT INTO counter_n VALUES (1, 0);
        CREATE TRIGGER counter_au AFTER UPDATE ON counter BEGIN UPDATE counter_n SET n = n + 1 WHERE k = 1; END;
        """)

    let sets = "SET \"title\" = ?, \"body\" = ?, \"category\" = ?, \"year\" = ?, \"score\" = ?, \"tags\" = ?, \"_version\" = \"_version\" + 1"
    let pruneSQL = """
        SELECT coalesce((SELECT max(seq) FROM "item_log"), 0),
               coalesce((SELECT CAST(value AS INTEGER) FROM trove_meta WHERE key = ?), 0)
        """
    /// What the API adds around the UPDATE statement.
    enum Extras { case none, returningPruneSavepoint, versionReadPrune }
    var savepoints = 0
    func rawUpdate(_ table: String, _ extras: Extras = .none, round: Int) throws -> Double {
        let updated = source.filter { $0.id % 10 == 1 }
        return try raw.transaction(.immediate) {
            threadCPU {
                for item in updated {
                    var values: [SQLValue] = [
                        .text(item.title), .text(item.body), .text(item.category), .integer(Int64(item.year)),
                        .real(item.score + Double(round)), .text("[" + item.tags.map { "\"\($0)\"" }.joined(separator: ",") + "]"),
                        .integer(item.id),
                    ]
                    switch extras {
                    case .none:
                        try! raw.cachedStatement("UPDATE \(table) \(sets) WHERE \"id\" = ?").execute(values)
                    case .returningPruneSavepoint:
                        savepoints += 1
                        try! raw.execute(script: "SAVEPOINT sp\(savepoints)")
                        try! raw.cachedStatement("UPDATE \(table) \(sets) WHERE \"id\" = ? RETURNING \"_version\"").forEachRow(values) { _ = $0.int64(at: 0) }
                        try! raw.cachedStatement(pruneSQL).forEachRow([.text("log_floor.item")]) { _ = $0.int64(at: 0) }
                        try! raw.execute(script: "RELEASE sp\(savepoints)")
                    case .versionReadPrune:
                        var version: Int64 = 0
                        try! raw.cachedStatement("SELECT \"_version\" FROM \(table) WHERE \"id\" = ?").forEachRow([.integer(item.id)]) { version = $0.int64(at: 0) }
                        try! raw.cachedStatement(pruneSQL).forEachRow([.text("log_floor.item")]) { _ = $0.int64(at: 0) }
                        values.append(.integer(version))
                        try! raw.cachedStatement("UPDATE \(table) \(sets) WHERE \"id\" = ? AND \"_version\" = ?").execute(values)
                    }
                    if table == "twostatements" {
                        try! raw.cachedStatement("INSERT INTO plain_log(rid, op) VALUES (?, 1)").execute([.integer(item.id)])
                    }
                }
            } / Double(updated.count)
        }
    }
    let ladder: [(label: String, table: String, extras: Extras)] = [
        ("SQL: GRDB's table (no checks, no triggers)", "plain", .none),
        ("SQL: + Trove's CHECK constraints", "checks", .none),
        ("SQL: + the version trigger", "version", .none),
        ("SQL: + the change log's trigger (Trove's table)", "full", .none),
        ("SQL: Trove's table, log without AUTOINCREMENT", "noautoincrement", .none),
        ("SQL: checks + a trigger updating one row", "counter", .none),
        ("SQL: checks, log row by a second statement", "twostatements", .none),
        ("SQL: Trove's table + RETURNING, prune, savepoint", "full", .returningPruneSavepoint),
        ("SQL: Trove's table + version read, prune", "full", .versionReadPrune),
    ]
    var results: [String: [Double]] = [:]
    for round in 1...rounds {
        let models = source.filter { $0.id % 10 == 1 }.map { var m = $0; m.score += Double(round); return m }
        let documents = models.map(\.document)
        let modelCPU = try await database.write { tx in
            let t = try tx.models(Item.self)
            return threadCPU { try! updateEach(models, in: t) } / Double(models.count)
        }
        results["Trove models", default: []].append(modelCPU)
        let documentCPU = try await database.write { tx in
            let t = try tx.documents("item")
            return threadCPU { try! updateEach(documents, in: t) } / Double(documents.count)
        }
        results["Trove documents", default: []].append(documentCPU)
        try await database.checkpoint()
        for step in ladder { results[step.label, default: []].append(try rawUpdate(step.table, step.extras, round: round)) }
        try raw.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
    }
    print("update-cost: \(rows / 10) rows updated per round, \(rounds) rounds; CPU time of the writing thread per row, median (rounds)")
    for label in ladder.map(\.label) + ["Trove documents", "Trove models"] {
        let values = results[label]!
        let sorted = values.sorted()
        print("\(label.padding(toLength: 52, withPad: " ", startingAt: 0)) \(String(format: "%6.2f", sorted[sorted.count / 2] * 1e6)) µs"
              + "  (\(values.map { String(format: "%.2f", $0 * 1e6) }.joined(separator: " / ")))")
    }
}

/// CPU seconds of the calling thread spent in `body`.
private func threadCPU(_ body: () throws -> Void) rethrows -> Double {
    func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
    let start = now()
    try body()
    return now() - start
}
