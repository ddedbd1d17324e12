// trove-bench documents: the typed-record workload of ../shared/bench/peers/grdb-peer, run through
// Trove's document API, with the same JSON keys, side by side with GRDB (its binary, when given)
// and with hand-written SQL through TroveSQLite on the same file and indexes.
import Foundation
@_spi(Benchmarks) import Trove

/// The peer's record, generated identically (SplitMix64, `BenchRandom`, seeded with 42, same field order).
/// Codable, so `trove-bench models` stores the same values as a model.
@MemberwiseCoding
struct Item: Codable, Sendable {
    var id: Int64
    var title: String
    var body: String
    var category: String
    var year: Int
    var score: Double
    var tags: [String]

    var document: Document {
        Document(id: .int(id), [
            "title": .string(title), "body": .string(body), "category": .string(category),
            "year": .int(Int64(year)), "score": .double(score), "tags": .array(tags.map(Value.string)),
        ])
    }

    init(id: Int64, title: String, body: String, category: String, year: Int, score: Double, tags: [String]) {
        (self.id, self.title, self.body, self.category, self.year, self.score, self.tags) = (id, title, body, category, year, score, tags)
    }

    init?(_ d: Document) {
        guard case .int(let id) = d.id, let title = d["title"]?.stringValue, let body = d["body"]?.stringValue,
            let category = d["category"]?.stringValue, let year = d["year"]?.intValue, let score = d["score"]?.doubleValue,
            let tags = d["tags"]?.arrayValue
        else { return nil }
        self.init(id: id, title: title, body: body, category: category, year: Int(year), score: score,
                  tags: tags.compactMap(\.stringValue))
    }
}

private let words = "alpha beta gamma delta river stone cloud paper garden window engine ticket lamp orbit maple"
    .split(separator: " ").map(String.init)

func makeItems(_ n: Int) -> [Item] {
    var rng = BenchRandom(state: 42)
    return (0..<n).map { i in
        Item(id: Int64(i + 1),
             title: (0..<4).map { _ in words.randomElement(using: &rng)! }.joined(separator: " "),
             body: (0..<30).map { _ in words.randomElement(using: &rng)! }.joined(separator: " "),
             category: "c\(Int.random(in: 0..<50, using: &rng))",
             year: Int.random(in: 1990...2026, using: &rng),
             score: Double.random(in: 0..<1, using: &rng),
             tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in words.randomElement(using: &rng)! })
    }
}

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

private let itemSchema = DocumentSchema(
    fields: [.text("title"), .text("body"), .text("category"), .integer("year"), .real("score"), .json("tags")],
    indexes: [IndexDefinition([Field("category"), Field("year")])])

/// One run of the workload through Trove; the keys are grdb-peer's.
private func troveWorkload(rows: Int) async throws -> [String: Any] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-documents-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("db.trove").path
    let database = try Database(path: path)
    let items = try await database.documents("item", schema: itemSchema)
    let source = makeItems(rows)
    var result: [String: Any] = ["peer": "Trove documents (reader pool, WAL, synchronous NORMAL)", "rows": rows]

    // The same work for the same result as the peer: its records are built before its timed
    // insert and its fetch ends with records, so here the documents (the document API's
    // records) are built before the insert and the fetch ends with documents. Turning them into
    // `Item`s, six lookups by name per row in the caller's code, is the check on a second fetch.
    let documents = source.map(\.document)
    // GRDB's commit checkpoints the WAL it grew (SQLite's automatic checkpoint, in the timing);
    // Trove checkpoints in the background, which otherwise runs beside the fetch below. Timed
    // with its checkpoint, as the update is.
    let insertS = try await seconds {
        try await items.insert(documents)
        try await database.checkpoint()
    }
    result["insert_rows_per_s"] = Int(Double(rows) / insertS)

    // Timed as the peer's: the fetched values are also released inside the timing.
    var fetched = 0
    let fetchS = try await seconds { fetched = try await items.fetch().count }
    precondition(fetched == rows, "fetched \(fetched)")
    // A fetched document decodes a field when it is read, so the fetch above leaves that work
    // to its caller: this is the fetch of a caller who reads every field (six by name a row).
    var read = 0
    let readS = try await seconds { read = try await items.fetch().compactMap(Item.init).count }
    precondition(read == rows, "read \(read)")
    result["fetch_all_then_read_records_per_s"] = Int(Double(rows) / readS)
    let decoded = try await items.fetch().compactMap(Item.init)
    precondition(decoded.map(\.id) == source.map(\.id) && decoded.map(\.tags) == source.map(\.tags), "fetched other rows")
    result["fetch_all_records_per_s"] = Int(Double(rows) / fetchS)

    // The same 1,000 queries as the peer (SplitMix64 seeded with 7), through the query value and
    // through hand-written SQL on a TroveSQLite connection to the same file, alternating.
    var rng = BenchRandom(state: 7)
    let queries = (0..<1000).map { _ in ("c\(Int.random(in: 0..<50, using: &rng))", Int.random(in: 1990...2026, using: &rng)) }
    let handConnection = try Connection(.file(path), options: .init(readOnly: true, walMode: false))
    try handConnection.execute(script: "PRAGMA cache_size = -16384; PRAGMA mmap_size = 1073741824")   // as Trove's readers
    let handSQL = "SELECT id, title, body, category, year, score, tags FROM item WHERE category = ? AND year >= ? ORDER BY score DESC LIMIT 20"
    var latencies: [Double] = []
    var handLatencies: [Double] = []
    var matched = 0
    var handMatched = 0
    // Which side runs first alternates per query: the second one runs on the caches the first
    // just warmed for the same rows.
    for (offset, (c, y)) in queries.enumerated() {
        let query = Query(Field("category") == .string(c) && Field("year") >= .int(Int64(y)))
            .sorted(by: .descending("score")).limit(20)
        func trove() async throws {
            latencies.append(try await seconds { matched += try await items.fetch(query).compactMap(Item.init).count } * 1000)
        }
        func hand() async throws {
            handLatencies.append(try await seconds {
                let statement = try handConnection.cachedStatement(handSQL)
                var decoded: [Item] = []
                try statement.forEachRow([.text(c), .integer(Int64(y))]) { row in
                    let tags = (try? JSONDecoder().decode([String].self, from: Data((row.string(at: 6) ?? "[]").utf8))) ?? []
                    decoded.append(Item(id: row.int64(at: 0), title: row.string(at: 1) ?? "", body: row.string(at: 2) ?? "",
                                        category: row.string(at: 3) ?? "", year: Int(row.int64(at: 4)), score: row.double(at: 5), tags: tags))
                }
                handMatched += decoded.count
            } * 1000)
        }
        if offset % 2 == 0 {
            try await trove()
            try await hand()
        } else {
            try await hand()
            try await trove()
        }
    }
    precondition(matched == handMatched, "query value and SQL disagree: \(matched) vs \(handMatched)")
    latencies.sort()
    handLatencies.sort()
    result["filtered_fetch_p50_ms"] = latencies[latencies.count / 2]
    result["filtered_fetch_rows_returned"] = matched
    result["filtered_fetch_sql_p50_ms"] = handLatencies[handLatencies.count / 2]

    let updateS = try await seconds {
        try await database.execute("UPDATE item SET score = score + 1 WHERE id % 10 = 0")
    }
    result["update_sql_rows_per_s"] = Int(Double(rows / 10) / updateS)
    let updated = source.filter { $0.id % 10 == 1 }.map { item -> Document in
        var copy = item
        copy.score += 1
        return copy.document
    }
    let updateRecordsS = try await seconds {
        try await database.write { tx in
            try updateEach(updated, in: tx.documents("item"))
        }
        // GRDB checkpoints in its commit; Trove in the background. Wait for it here, so the
        // update is timed with its checkpoint and the group-by below does not run beside it.
        try await database.checkpoint()
    }
    result["update_records_rows_per_s"] = Int(Double(updated.count) / updateRecordsS)

    var groups = 0
    let aggS = try await seconds {
        groups = try await items.aggregate([.count("id"), .average("score")], groupBy: [Field("category")]).count
    }
    precondition(groups == 50)
    result["group_count_avg_ms"] = aggS * 1000
    return result
}

/// Searches per second of `readers` tasks while one writer inserts continuously.
private func readerScaling(rows: Int, dimension: Int, seconds duration: Double, readers: Int, writerRate: Int, path: String) async throws -> (searches: Double, writes: Int) {
    let database = try Database(path: path)
    let docs = try await database.documents("vectors", schema: DocumentSchema(
        fields: [.integer("group", indexed: true), .vector("v", dimension: dimension)]))
    if try await docs.count() == 0 {
        var rng = BenchRandom(state: 5)
        func vector() -> [Float] { (0..<dimension).map { _ in Float.random(in: -1...1, using: &rng) } }
        try await docs.insert((1...rows).map { Document(id: .int(Int64($0)), ["group": .int(Int64($0 % 10)), "v": .vector(vector())]) })
    }
    _ = try await docs.search(Query().nearest(to: [Float](repeating: 0.5, count: dimension), in: "v").limit(10))
    // Paced (writerRate commits of an insert and a delete per second) or flat out (0).
    return try await searchesBesideWriter(
        readers: readers, seconds: duration, writerRate: writerRate, seed: 100,
        write: { n in
            var rng = BenchRandom(state: 9 &+ UInt64(n))
            let id = Int64(10_000_000 + n)
            try await docs.insert(Document(id: .int(id), ["group": 1, "v": .vector((0..<dimension).map { _ in Float.random(in: -1...1, using: &rng) })]))
            try await docs.delete(id: .int(id))
        },
        search: { _, rng in
            let q = (0..<dimension).map { _ in Float.random(in: -1...1, using: &rng) }
            let hits = try await docs.search(Query(Field("group") != 3).nearest(to: q, in: "v").limit(10))
            precondition(hits.count == 10)
        })
}

func runDocumentBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench documents [--rows N] [--json FILE] [--grdb-peer BINARY] [--raw-peer BINARY] [--rounds R]
                                  [--gate] [--gate-ratio X]
                                  [--readers-only] [--reader-rows N] [--reader-seconds S] [--writer-rate N]
              The grdb-peer workload (README in ../shared/bench/peers/grdb-peer) through Trove's document
              API: insert N records in one transaction, fetch all, 1,000 filtered+ordered+limit-20
              queries (also as hand-written SQL through TroveSQLite), update 10% (records and SQL),
              group by with count and avg. With --grdb-peer (or GRDB_PEER) the peer runs in the same
              run, alternating with Trove; --raw-peer (or RAW_PEER) runs the bare C API peer the same way
              (cc -O2 ../shared/bench/peers/raw-sqlite/raw_items.c -lsqlite3 -o BINARY); --gate then exits
              with status 3 when Trove's median update as records is below --gate-ratio (default 1.5)
              times GRDB's. Then: vector searches/s of 1 and 2 reader tasks while one
              writer inserts continuously, paced (--writer-rate commits/s, default 200) and flat out.
            """)
        return
    }
    let rows = options.int("rows", 100_000)
    let rounds = options.int("rounds", 1)
    let peer = options.values["grdb-peer"] ?? ProcessInfo.processInfo.environment["GRDB_PEER"]
    print("documents: rows \(rows), rounds \(rounds), \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(Connection.sqliteVersion)")
    if !options.has("readers-only") {
        let (troveRuns, peerRuns, rawRuns) = try await alternatingRounds(rounds, rows: rows, peer: peer, rawPeer: rawPeer(options)) {
            try await troveWorkload(rows: rows)
        }
        printPeerComparison(troveRuns: troveRuns, peerRuns: peerRuns, rawRuns: rawRuns)
        let sql = median(troveRuns.compactMap { ($0["filtered_fetch_sql_p50_ms"] as? NSNumber)?.doubleValue })
        let value = median(troveRuns.compactMap { ($0["filtered_fetch_p50_ms"] as? NSNumber)?.doubleValue })
        print("query value p50 \(format(value)) ms vs hand-written SQL \(format(sql)) ms: \(String(format: "%.2fx", value / sql))")
        let read = median(troveRuns.compactMap { ($0["fetch_all_then_read_records_per_s"] as? NSNumber)?.doubleValue })
        let grdbFetch = median(peerRuns.compactMap { ($0["fetch_all_records_per_s"] as? NSNumber)?.doubleValue })
        let rawFetch = median(rawRuns.compactMap { ($0["fetch_all_records_per_s"] as? NSNumber)?.doubleValue })
        print("fetch all then read every field: \(format(read)) records/s, \(String(format: "%.2fx", read / grdbFetch)) GRDB's fetch all, "
              + "\(String(format: "%.2fx", read / rawFetch)) the C API's")
        if let file = options.values["json"] { try writeLastRounds(troveRuns, peerRuns, to: file) }
        checkUpdateGate(options, troveRuns: troveRuns, peerRuns: peerRuns)
    }
    let readerRows = options.int("reader-rows", 20_000)
    let duration = Double(options.int("reader-seconds", 4))
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-readers-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("r.trove").path
    for writerRate in [options.int("writer-rate", 200), 0] {
        print("\nreaders: \(readerRows) documents, 128-d vectors, filtered exact top-10, one writer inserting and deleting "
              + (writerRate > 0 ? "\(writerRate) times a second" : "flat out") + ", \(Int(duration)) s each, alternating")
        var one: [Double] = []
        var two: [Double] = []
        for _ in 0..<2 {
            let a = try await readerScaling(rows: readerRows, dimension: 128, seconds: duration, readers: 1, writerRate: writerRate, path: path)
            let b = try await readerScaling(rows: readerRows, dimension: 128, seconds: duration, readers: 2, writerRate: writerRate, path: path)
            print("  1 reader: \(Int(a.searches)) searches/s (writer \(a.writes) commits); 2 readers: \(Int(b.searches)) searches/s (writer \(b.writes) commits)")
            one.append(a.searches)
            two.append(b.searches)
        }
        print("  two readers / one: \(String(format: "%.2fx", median(two) / median(one)))")
    }
}

/// The grdb-peer workload keys both Trove benchmarks report.
let grdbPeerKeys = ["insert_rows_per_s", "fetch_all_records_per_s", "filtered_fetch_p50_ms", "update_records_rows_per_s",
                    "update_sql_rows_per_s", "group_count_avg_ms"]

/// The bare C API peer's binary (`--raw-peer` or `RAW_PEER`), built from
/// `../shared/bench/peers/raw-sqlite/raw_items.c`.
func rawPeer(_ options: BenchOptions) -> String? {
    options.values["raw-peer"] ?? ProcessInfo.processInfo.environment["RAW_PEER"]
}

/// `rounds` rounds of a Trove workload, each followed by one run of the GRDB peer and one of the
/// bare C API peer (when given), printed as they finish.
/// - Returns: each side's JSON objects, in round order.
func alternatingRounds(
    _ rounds: Int, rows: Int, peer: String?, rawPeer: String? = nil, _ workload: () async throws -> [String: Any]
) async throws -> (trove: [[String: Any]], peer: [[String: Any]], raw: [[String: Any]]) {
    var troveRuns: [[String: Any]] = []
    var peerRuns: [[String: Any]] = []
    var rawRuns: [[String: Any]] = []
    for round in 1...rounds {
        let trove = try await workload()
        troveRuns.append(trove)
        print("round \(round) trove: \(describe(trove))")
        if let peer, let json = try runGRDBPeer(peer, rows: rows) {
            peerRuns.append(json)
            print("round \(round) grdb:  \(describe(json))")
        }
        if let rawPeer, let json = try runGRDBPeer(rawPeer, rows: rows, argumentName: nil) {
            rawRuns.append(json)
            print("round \(round) C API: \(describe(json))")
        }
    }
    return (troveRuns, peerRuns, rawRuns)
}

/// `--gate`: fails the run (exit status 3) when Trove's median "update 10% as records" is below
/// `--gate-ratio` (default 1.5) times GRDB's median over the same alternating rounds, so the
/// key cannot fall behind the peer unseen. Needs the peer (`--grdb-peer` or `GRDB_PEER`).
func checkUpdateGate(_ options: BenchOptions, troveRuns: [[String: Any]], peerRuns: [[String: Any]]) {
    guard options.has("gate") else { return }
    let key = "update_records_rows_per_s"
    let minimum = Double(options.string("gate-ratio", "1.5")) ?? 1.5
    func values(_ runs: [[String: Any]]) -> [Double] { runs.compactMap { ($0[key] as? NSNumber)?.doubleValue } }
    let (trove, grdb) = (values(troveRuns), values(peerRuns))
    guard !grdb.isEmpty, grdb.count == trove.count else {
        FileHandle.standardError.write(Data("gate: \(key) needs the GRDB peer's figures (--grdb-peer BINARY)\n".utf8))
        exit(2)
    }
    let ratio = median(trove) / median(grdb)
    let rounds = zip(trove, grdb).map { String(format: "%.2fx", $0 / $1) }.joined(separator: ", ")
    let pass = ratio >= minimum
    print("gate: \(key) Trove / GRDB \(String(format: "%.2fx", ratio)) (medians; rounds \(rounds)), minimum \(String(format: "%.2fx", minimum)): \(pass ? "pass" : "FAIL")")
    if !pass { exit(3) }
}

/// Writes the last Trove round's JSON with the last peer round under "grdb".
func writeLastRounds(_ troveRuns: [[String: Any]], _ peerRuns: [[String: Any]], to file: String) throws {
    var out = troveRuns.last ?? [:]
    if let last = peerRuns.last { out["grdb"] = last }
    let data = try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys, .prettyPrinted])
    try data.write(to: URL(fileURLWithPath: file))
    print("wrote \(file)")
}

/// The timed loop of "update 10% as records", one function so a profiler can collect it alone
/// (`valgrind --tool=callgrind --toggle-collect='*updateEach*'`).
@inline(never)
func updateEach(_ documents: [Document], in writer: DocumentWriter) throws {
    for document in documents { try writer.update(document) }
}

/// One run of a peer binary (GRDB's takes `--rows N`, the C API's the bare count): its JSON object.
func runGRDBPeer(_ peer: String, rows: Int, argumentName: String? = "--rows") throws -> [String: Any]? {
    let output = Process()
    output.executableURL = URL(fileURLWithPath: peer)
    output.arguments = (argumentName.map { [$0] } ?? []) + [String(rows)]
    let pipe = Pipe()
    output.standardOutput = pipe
    try output.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    output.waitUntilExit()
    return try JSONSerialization.jsonObject(with: data) as? [String: Any]
}

/// The medians of each key, Trove against GRDB and the bare C API, as a Markdown table.
func printPeerComparison(troveRuns: [[String: Any]], peerRuns: [[String: Any]], rawRuns: [[String: Any]] = [],
                         keys: [String] = grdbPeerKeys) {
    print("\n| key | C API | GRDB 7.8 | Trove | Trove / GRDB | Trove / C API |\n|---|---|---|---|---|---|")
    func cell(_ v: Double) -> String { v.isNaN ? "-" : format(v) }
    func ratio(_ a: Double, _ b: Double) -> String { a.isNaN || b.isNaN ? "-" : String(format: "%.2fx", a / b) }
    for key in keys {
        let t = median(troveRuns.compactMap { ($0[key] as? NSNumber)?.doubleValue })
        let g = median(peerRuns.compactMap { ($0[key] as? NSNumber)?.doubleValue })
        let r = median(rawRuns.compactMap { ($0[key] as? NSNumber)?.doubleValue })
        print("| \(key) | \(cell(r)) | \(cell(g)) | \(cell(t)) | \(ratio(t, g)) | \(ratio(t, r)) |")
    }
}

private func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func format(_ value: Double) -> String {
    value >= 100 ? String(Int(value.rounded())) : String(format: "%.3f", value)
}

func describe(_ json: [String: Any]) -> String {
    json.keys.sorted().filter { $0 != "peer" && $0 != "grdb" }.map { "\($0)=\(json[$0]!)" }.joined(separator: " ")
}

/// The peer's records as documents, and their schema, for other benchmarks (the observation
/// benchmark loads the same 100,000 rows).
func peerRecordDocuments(_ n: Int) -> [Document] { makeItems(n).map(\.document) }
let peerRecordSchema = itemSchema
