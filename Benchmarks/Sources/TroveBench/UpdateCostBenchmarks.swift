// trove-bench update-cost: where the CPU time of "update 10% as records" goes. The peer
// workload's table is created through Trove, then the same 10,000-row update runs as Trove
// documents, as Trove models, and as raw SQL on copies of the table with parts of Trove's
// layout (checks, the version trigger, the change log's triggers, RETURNING, savepoints, the
// log-prune query) added one at a time, alternating, timed in CPU time of the writing thread
// (robust to other processes on a shared machine).
import Foundation
import Trove
import TroveSQLite

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
    try copy("logged", checks: true, triggerNames: ["item_log_au"])
    try copy("full", checks: true, triggerNames: ["item_version", "item_log_au"])
    // The log trigger's parts: one INSERT ... VALUES into the AUTOINCREMENT log; the same into a
    // log without AUTOINCREMENT; the INSERT ... SELECT ... WHERE old != new alone.
    try copy("logvalues", checks: true, triggerNames: [])
    try raw.execute(script: """
        CREATE TRIGGER logvalues_au AFTER UPDATE ON logvalues BEGIN INSERT INTO item_log(rid, op) VALUES (new.id, 1); END;
        CREATE TABLE plainlog(seq INTEGER PRIMARY KEY, rid INTEGER NOT NULL, op INTEGER NOT NULL);
        """)
    try copy("lognoauto", checks: true, triggerNames: [])
    try raw.execute(script: """
        CREATE TRIGGER lognoauto_au AFTER UPDATE ON lognoauto BEGIN
            INSERT INTO plainlog(rid, op) SELECT old.id, 2 WHERE old.id != new.id;
            INSERT INTO plainlog(rid, op) VALUES (new.id, 1);
        END;
        """)
    try copy("logselect", checks: true, triggerNames: [])
    try raw.execute(script: """
        CREATE TRIGGER logselect_au AFTER UPDATE ON logselect BEGIN INSERT INTO item_log(rid, op) SELECT old.id, 2 WHERE old.id != new.id; END;
        """)
    try copy("counter", checks: true, triggerNames: [])
    try raw.execute(script: """
        CREATE TABLE counter_n(k INTEGER PRIMARY KEY, n INTEGER); INSERT INTO counter_n VALUES (1, 0);
        CREATE TRIGGER counter_au AFTER UPDATE ON counter BEGIN UPDATE counter_n SET n = n + 1 WHERE k = 1; END;
        """)
    try copy("twostmt", checks: true, triggerNames: [])
    try copy("logof", checks: true, triggerNames: [])
    try raw.execute(script: """
        CREATE TRIGGER logof_au AFTER UPDATE ON logof BEGIN INSERT INTO item_log(rid, op) VALUES (new.id, 1); END;
        CREATE TRIGGER logof_aurid AFTER UPDATE OF id ON logof WHEN old.id != new.id BEGIN INSERT INTO item_log(rid, op) VALUES (old.id, 2); END;
        """)

    func setSQL(_ table: String, returning: Bool) -> String {
        (table.hasSuffix(" fail") ? "UPDATE OR FAIL \(table.dropLast(5)) SET" : "UPDATE \(table) SET") + " \"title\" = ?, \"body\" = ?, \"category\" = ?, \"year\" = ?, \"score\" = ?, \"tags\" = ?, \"_version\" = \"_version\" + 1 WHERE \"id\" = ?"
            + (returning ? " RETURNING \"_version\"" : "")
    }
    let pruneSQL = """
        SELECT coalesce((SELECT max(seq) FROM "item_log"), 0),
               coalesce((SELECT CAST(value AS INTEGER) FROM trove_meta WHERE key = ?), 0)
        """
    var savepoints = 0
    func rawUpdate(_ table: String, returning: Bool = false, savepoint: Bool = false, prune: Bool = false, round: Int) throws -> Double {
        let updated = source.filter { $0.id % 10 == 1 }
        return try raw.transaction(.immediate) {
            threadCPU {
                for item in updated {
                    if savepoint { savepoints += 1; try! raw.execute(script: "SAVEPOINT sp\(savepoints)") }
                    let statement = try! raw.cachedStatement(setSQL(table, returning: returning))
                    try! statement.forEachRow([
                        .text(item.title), .text(item.body), .text(item.category), .integer(Int64(item.year)),
                        .real(item.score + Double(round)), .text("[" + item.tags.map { "\"\($0)\"" }.joined(separator: ",") + "]"),
                        .integer(item.id),
                    ]) { _ = $0.int64(at: 0) }
                    if table == "twostmt" { try! raw.cachedStatement("INSERT INTO plainlog(rid, op) VALUES (?, 1)").execute([.integer(item.id)]) }
                    if prune { try! raw.cachedStatement(pruneSQL).forEachRow([.text("log_floor.item")]) { _ = $0.int64(at: 0) } }
                    if savepoint { try! raw.execute(script: "RELEASE sp\(savepoints)") }
                }
            } / Double(updated.count)
        }
    }
    var results: [String: [Double]] = [:]
    for round in 1...rounds {
        let models = source.filter { $0.id % 10 == 1 }.map { var m = $0; m.score += Double(round); return m }
        let documents = models.map(\.document)
        let modelCPU = try await database.write { tx in
            let t = try tx.models(Item.self)
            return threadCPU { try! updateEach(models, in: t) } / Double(models.count)
        }
        results["trove models", default: []].append(modelCPU)
        let documentCPU = try await database.write { tx in
            let t = try tx.documents("item")
            return threadCPU { try! updateEach(documents, in: t) } / Double(documents.count)
        }
        results["trove documents", default: []].append(documentCPU)
        try await database.checkpoint()
        for (label, table, returning, savepoint, prune) in [
            ("raw plain (GRDB's table)", "plain", false, false, false),
            ("raw + checks", "checks", false, false, false),
            ("raw + checks + version trigger", "version", false, false, false),
            ("raw + checks + log trigger", "logged", false, false, false),
            ("raw item (all triggers)", "full", false, false, false),
            ("raw item (all triggers), OR FAIL", "full fail", false, false, false),
            ("raw item + RETURNING + prune + savepoint, OR FAIL", "full fail", true, true, true),
            ("raw + checks + log trigger, OR FAIL", "logged fail", false, false, false),
            ("raw + checks + log VALUES only", "logvalues", false, false, false),
            ("raw + checks + log trigger, no AUTOINCREMENT", "lognoauto", false, false, false),
            ("raw + checks + log SELECT-WHERE only", "logselect", false, false, false),
            ("raw + checks + log VALUES + UPDATE OF id trigger", "logof", false, false, false),
            ("raw + checks + trigger updating a 1-row table", "counter", false, false, false),
            ("raw + checks, then INSERT log from Swift", "twostmt", false, false, false),
            ("raw item + RETURNING", "full", true, false, false),
            ("raw item + RETURNING + prune query", "full", true, false, true),
            ("raw item + RETURNING + prune + savepoint", "full", true, true, true),
        ] {
            results[label, default: []].append(try rawUpdate(table, returning: returning, savepoint: savepoint, prune: prune, round: round))
        }
        try raw.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        print("round \(round) done")
    }
    for (label, values) in results.sorted(by: { $0.value.sorted()[$0.value.count / 2] < $1.value.sorted()[$1.value.count / 2] }) {
        let sorted = values.sorted()
        print("\(label.padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%6.2f", sorted[sorted.count / 2] * 1e6)) µs CPU/row  (\(values.map { String(format: "%.2f", $0 * 1e6) }.joined(separator: " / ")))")
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
