// trove-bench documents-text: batch inserts into a document collection with full-text fields,
// the path a search collection's insertBatch also takes (DocumentStore+Write.swift).
import Foundation
@_spi(Benchmarks) import Trove

func runDocumentTextBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench documents-text [--rows N] [--batch B] [--rounds R] [--packages FILE]
              Inserts N Debian package descriptions (name, synopsis, body; full text over synopsis
              and body) into a fresh document collection in batches of B documents, R rounds; then
              one typed query to check they are searchable. Prints rows/s per round.
            """)
        return
    }
    let path = options.string("packages", benchCache + "/data/packages.jsonl")
    let rows = options.int("rows", 58_029)
    let batch = options.int("batch", 1_000)
    let rounds = options.int("rounds", 3)
    var documents: [Document] = []
    for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").prefix(rows) {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
        documents.append(Document(id: .int(Int64(documents.count + 1)), [
            "name": .string(object["name"] as? String ?? ""), "synopsis": .string(object["synopsis"] as? String ?? ""),
            "body": .string(object["body"] as? String ?? ""),
        ]))
    }
    print("documents-text: \(documents.count) documents, batches of \(batch), \(rounds) rounds, SQLite \(Connection.sqliteVersion)")
    let schema = DocumentSchema(
        fields: [.text("name", indexed: true), .text("synopsis"), .text("body")],
        fullText: FullTextDefinition(["synopsis": 2, "body": 1]))
    for round in 1...rounds {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-doctext-\(getpid())-\(round)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = try Database(path: dir.appendingPathComponent("d.trove").path)
        let packages = try await database.documents("packages", schema: schema)
        let start = Date()
        var offset = 0
        while offset < documents.count {
            try await packages.insert(Array(documents[offset..<min(documents.count, offset + batch)]))
            offset += batch
        }
        let elapsed = Date().timeIntervalSince(start)
        let hits = try await packages.search(Query().matching(.typed("real-time strategy game")).limit(3))
        let segments = try await database.query("SELECT count(*) FROM packages_fts_data")[0].int64(at: 0) ?? 0
        print("  round \(round): \(Int(Double(documents.count) / elapsed)) rows/s (\(String(format: "%.2f", elapsed)) s), "
              + "FTS5 data rows \(segments), first hit \(hits.first.map { "\($0.record["name"] ?? .null)" } ?? "none")")
    }
}
