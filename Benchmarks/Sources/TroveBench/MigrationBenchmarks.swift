// trove-bench migrations: what each migration step costs on a seeded collection, and the
// table-rebuild procedure against SQLite's own ALTER TABLE DROP COLUMN (measured in the same run).
import Foundation
@_spi(Benchmarks) import Trove

private let migrationSchema = DocumentSchema(
    fields: [.text("title"), .text("body"), .text("category"), .integer("year"), .real("score"), .json("tags")],
    indexes: [IndexDefinition([Field("category"), Field("year")])],
    fullText: FullTextDefinition(fields: ["title"]))

/// Seeds one file and returns its path; each measurement runs on a fresh copy of it.
private func seedMigrationFile(rows: Int, in dir: URL) async throws -> String {
    let path = dir.appendingPathComponent("seed.trove").path
    let database = try Database(path: path)
    let items = try await database.documents("item", schema: migrationSchema)
    var rng = BenchRandom(state: 7)
    let words = "alpha beta gamma delta river stone cloud paper garden window engine ticket lamp orbit maple"
        .split(separator: " ").map(String.init)
    var batch: [Document] = []
    for i in 0..<rows {
        batch.append(Document(id: .int(Int64(i + 1)), [
            "title": .string((0..<4).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")),
            "body": .string((0..<30).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")),
            "category": .string("c\(Int.random(in: 0..<50, using: &rng))"),
            "year": .int(Int64.random(in: 1990...2026, using: &rng)),
            "score": .double(Double.random(in: 0..<1, using: &rng)),
            "tags": .array([.string(words.randomElement(using: &rng)!)]),
        ]))
        if batch.count == 10_000 { try await items.insert(batch); batch.removeAll() }
    }
    if !batch.isEmpty { try await items.insert(batch) }
    let clean = dir.appendingPathComponent("clean.trove").path
    try await database.execute(script: "VACUUM INTO '\(clean)'")
    return clean
}

private func copy(_ seed: String, in dir: URL) throws -> String {
    let path = dir.appendingPathComponent("run-\(UUID().uuidString).trove").path
    try FileManager.default.copyItem(atPath: seed, toPath: path)
    return path
}

private func timed(_ body: () async throws -> Void) async throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func runMigrationBenchmarks(_ arguments: [String]) async throws {
    var rows = 100_000
    var repeats = 3
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--rows": rows = Int(iterator.next() ?? "") ?? rows
        case "--repeats": repeats = Int(iterator.next() ?? "") ?? repeats
        default: throw TroveError.invalidConfiguration("unknown option \(argument) (--rows N, --repeats N)")
        }
    }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-migrations-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    print("trove-bench migrations: \(rows) rows (title, body 30 words, category, year, score, tags; "
        + "compound index, FTS5 on title), median of \(repeats) runs, each on a fresh copy of the file")
    let seed = try await seedMigrationFile(rows: rows, in: dir)

    let cases: [(String, [MigrationStep]?, String?)] = [
        ("add optional field (ALTER TABLE ADD COLUMN)", [.addField(.text("note", optional: true), to: "item")], nil),
        ("add field, real default (table rebuild)", [.addField(.real("weight", default: 0.5), to: "item")], nil),
        ("rename field in an index (RENAME COLUMN + index)", [.renameField("category", to: "kind", in: "item")], nil),
        ("rename field in FTS5 (RENAME COLUMN + FTS rebuild)", [.renameField("title", to: "headline", in: "item")], nil),
        ("remove field (ALTER TABLE DROP COLUMN)", [.removeField("score", from: "item")], nil),
        ("  peer: raw ALTER TABLE DROP COLUMN score", nil, "ALTER TABLE item DROP COLUMN score"),
        ("change type with transform (row-by-row rebuild)",
         [.changeField("year", in: "item", to: .real("year")) { .double(Double($0.intValue ?? 0) + 0.5) }], nil),
        ("add B-tree index", [.addIndex(IndexDefinition([Field("score")]), to: "item")], nil),
        ("add unique index (duplicate check + index)", [.addIndex(IndexDefinition([Field("body")], unique: true), to: "item")], nil),
    ]
    print("step".padding(toLength: 52, withPad: " ", startingAt: 0) + "   seconds   rows/s")
    for (name, steps, sql) in cases {
        var times: [Double] = []
        for _ in 0..<repeats {
            let path = try copy(seed, in: dir)
            let database = try Database(path: path)
            if let steps {
                var migrator = Migrator()
                migrator.registerMigration(name, steps: steps)
                times.append(try await timed { try await migrator.migrate(database) })
                let count = try await database.documents(named: "item").count()
                precondition(count == rows, "the migration lost rows")
            } else if let sql {
                times.append(try await timed { try await database.execute(script: sql) })
            }
        }
        let median = times.sorted()[times.count / 2]
        print(name.padding(toLength: 52, withPad: " ", startingAt: 0)
            + String(format: " %9.3f %8.0f", median, Double(rows) / median))
    }
}
