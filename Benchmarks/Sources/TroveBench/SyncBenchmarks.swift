// trove-bench sync-apply: how fast a device applies pulled change sets, against a local batch
// insert of the same documents (the issue's target: at least 50%).
import Foundation
@_spi(Benchmarks) import Trove
import TroveSync

func runSyncBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench sync-apply [--documents N] [--dimension D] [--batch B] [--rounds R]
              N seeded notes (title, ~40-word body, rank, a D-dimensional vector; full text over
              title and body; flat vector index), R rounds, the order alternating each round:
                insert   a local batch insert (batches of B) into a fresh collection, no sync
                capture  the same insert into a synced collection (change capture on)
                seal     sealing and pushing those changes (in-process transport)
                apply    a second device pulling and applying them
              Prints documents/s per round and apply/insert per round and as the median.
            """)
        return
    }
    let count = options.int("documents", 20_000)
    let dimension = options.int("dimension", 384)
    let batch = options.int("batch", 500)
    let rounds = options.int("rounds", 3)
    print("sync-apply: \(count) documents, \(dimension)-d vectors, batches of \(batch), \(rounds) rounds, SQLite \(Connection.sqliteVersion)")
    var random = BenchRandom(state: 0x51ca991)
    let words = (0..<2_000).map { "w\($0)" }
    let documents: [Document] = (0..<count).map { i in
        let body = (0..<40).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }.joined(separator: " ")
        let vector = (0..<dimension).map { _ in Float.random(in: -1...1, using: &random) }
        return Document(id: .string("note-\(i)"), [
            "title": .string("note \(i) \(words[Int.random(in: 0..<words.count, using: &random)])"), "body": .string(body),
            "rank": .int(Int64(i)), "embedding": .vector(vector),
        ])
    }
    let schema = DocumentSchema(
        id: .string,
        fields: [.text("title"), .text("body"), .integer("rank"), .vector("embedding", dimension: dimension)],
        fullText: FullTextDefinition(fields: ["title", "body"]))
    var ratios: [Double] = []
    for round in 1...rounds {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-sync-bench-\(getpid())-\(round)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        func insertPlain() async throws -> Double {
            let database = try Database(path: dir.appendingPathComponent("plain.trove").path)
            let notes = try await database.documents("notes", schema: schema)
            let start = Date()
            for offset in stride(from: 0, to: documents.count, by: batch) {
                try await notes.insert(Array(documents[offset..<min(documents.count, offset + batch)]))
            }
            return Date().timeIntervalSince(start)
        }

        func synced() async throws -> (capture: Double, seal: Double, apply: Double) {
            let server = InProcessTransport()
            let key = try SyncKey.random()
            let a = try Database(path: dir.appendingPathComponent("a.trove").path)
            let b = try Database(path: dir.appendingPathComponent("b.trove").path)
            var spaces: [SyncSpace] = []
            for database in [a, b] {
                _ = try await database.documents("notes", schema: schema)
                spaces.append(try await SyncSpace(database: database, space: "bench", key: key, transport: server, collections: ["notes"]))
            }
            let notes = try await a.documents(named: "notes")
            var start = Date()
            for offset in stride(from: 0, to: documents.count, by: batch) {
                try await notes.insert(Array(documents[offset..<min(documents.count, offset + batch)]))
            }
            let capture = Date().timeIntervalSince(start)
            start = Date()
            try await spaces[0].push()
            let seal = Date().timeIntervalSince(start)
            start = Date()
            try await spaces[1].pull()
            let apply = Date().timeIntervalSince(start)
            let arrived = try await b.documents(named: "notes").count()
            let hits = try await b.documents(named: "notes").search(Query().matching(.typed("note 7")).limit(1))
            guard arrived == documents.count, !hits.isEmpty else {
                throw BenchFailure("apply: \(arrived) of \(documents.count) documents arrived, \(hits.count) text hits")
            }
            return (capture, seal, apply)
        }

        let plainFirst = round % 2 == 1
        var insert = 0.0
        if plainFirst { insert = try await insertPlain() }
        let sync = try await synced()
        if !plainFirst { insert = try await insertPlain() }
        let rate = { (seconds: Double) in Int(Double(documents.count) / seconds) }
        ratios.append(insert / sync.apply)
        print("  round \(round): insert \(rate(insert))/s, capture \(rate(sync.capture))/s, seal+push \(rate(sync.seal))/s, "
              + "apply \(rate(sync.apply))/s, apply/insert \(String(format: "%.2f", insert / sync.apply))")
    }
    print("  median apply/insert: \(String(format: "%.2f", ratios.sorted()[ratios.count / 2]))")
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

