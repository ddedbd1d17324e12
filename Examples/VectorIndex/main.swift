// Vector indexes of a document field: the exact scan (flat) against HNSW graphs walked over
// float32, int8 or binary codes, each measured by its recall against the exact answer; then the
// file is reopened and searched again.
// Run: swift run example-vector-index [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("vectors-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

/// A seeded generator (SplitMix64), so the vectors and the output are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
var random = SplitMix64(state: 42)
let vectors = (0..<2_000).map { _ in (0..<32).map { _ in Float.random(in: -1...1, using: &random) } }
let questions = (0..<50).map { _ in (0..<32).map { _ in Float.random(in: -1...1, using: &random) } }

// One collection per index kind, the same 2,000 vectors in each. The kind is part of the schema:
// `.flat` scans every vector exactly; `.hnsw` walks a graph (approximate, much faster on large
// collections), over float32 vectors, int8 codes (4x smaller) or sign bits (32x smaller); the
// quantized walks re-score their best candidates with float32 vectors.
let kinds: [(name: String, kind: IndexKind)] = [
    ("flat", .flat),
    ("hnsw", .hnsw()),
    ("hnsw_int8", .hnsw(quantization: .int8)),
    ("hnsw_binary", .hnsw(quantization: .binary)),
]
func schema(_ kind: IndexKind) -> DocumentSchema {
    DocumentSchema(fields: [.vector("embedding", dimension: 32)], vectorIndexes: ["embedding": kind])
}

/// The ids of the 10 nearest documents to each question.
func answers(_ collection: DocumentCollection) async throws -> [[DocumentID]] {
    var result: [[DocumentID]] = []
    for question in questions {
        result.append(try await collection.search(Query().nearest(to: question, in: "embedding").limit(10)).map(\.record.id))
    }
    return result
}

/// The share of the exact top 10 that an index found, averaged over the questions. Exact
/// searches print it; approximate ones print whether it reaches 0.9, since an HNSW graph built on
/// several threads differs slightly from run to run (here 0.97-1.00).
func recall(_ found: [[DocumentID]], exact: [[DocumentID]], approximate: Bool) -> String {
    let hits = zip(found, exact).map { Set($0).intersection($1).count }.reduce(0, +)
    let recall = Double(hits) / Double(exact.count * 10)
    return approximate && recall >= 0.9 ? ">= 0.90" : String(format: "%.2f", recall)
}

var exact: [[DocumentID]] = []
do {
    let database = try Database(path: path)
    for (name, kind) in kinds {
        let collection = try await database.documents(name, schema: schema(kind))
        try await collection.insert(vectors.enumerated().map { Document(id: .int(Int64($0.offset + 1)), ["embedding": .vector($0.element)]) })
        let found = try await answers(collection)
        if name == "flat" { exact = found }
        print(name.padding(toLength: 12, withPad: " ", startingAt: 0), kind, "recall@10", recall(found, exact: exact, approximate: kind.isApproximate))
        // Save the index (the flat matrix, or the graph) with the change-log position it
        // reflects, so the next open reads it back instead of rebuilding it (Trove also saves
        // after many writes, and on Database.saveIndexes()).
        _ = try await collection.saveIndex(field: "embedding")
    }
}

// Reopened: each index is read back from its snapshot (a missing, stale or damaged one is
// rebuilt from the table) and answers exactly as before.
let reopened = try Database(path: path)
for (name, kind) in kinds {
    let collection = try await reopened.documents(named: name)
    let found = try await answers(collection)
    let origin = try await collection.indexStatistics(field: "embedding").origin
    print("reopened", name.padding(toLength: 12, withPad: " ", startingAt: 0), "from", "\(origin)".padding(toLength: 8, withPad: " ", startingAt: 0),
          "recall@10", recall(found, exact: exact, approximate: kind.isApproximate))
}

// For more recall from an approximate index, raise efSearch (the walk's candidate list): in the
// schema (`.hnsw(efSearch: 128, quantization: .binary)`) or for one query.
let binary = try await reopened.documents(named: "hnsw_binary")
var wider: [[DocumentID]] = [], scanned: [[DocumentID]] = []
for question in questions {
    let query = Query().nearest(to: question, in: "embedding").limit(10)
    wider.append(try await binary.search(query.efSearch(400)).map(\.record.id))
    // `.exact()` scans every vector even where the field has an HNSW index.
    scanned.append(try await binary.search(query.exact()).map(\.record.id))
}
print("hnsw_binary .efSearch(400) recall@10", recall(wider, exact: exact, approximate: true))
print("hnsw_binary .exact()       recall@10", recall(scanned, exact: exact, approximate: false))
