// The child process of the HNSW crash test (Tests/TroveTests/HNSWCrashTests.swift): writes batches
// into an HNSW collection until it is killed, printing "committed <rows>" after every batch, so
// the parent can SIGKILL it in the middle of a later batch (or of a snapshot save).
//
// usage: TroveANNCrashChild <database path> <seed>
import Foundation
import Trove

let arguments = CommandLine.arguments
guard arguments.count == 3, let seed = UInt64(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: TroveANNCrashChild <database path> <seed>\n".utf8))
    exit(2)
}

/// SplitMix64, so every run with the same seed writes the same vectors.
struct Generator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func vector(_ dimension: Int) -> [Float] {
        (0..<dimension).map { _ in Float(Double(next() >> 11) / Double(1 << 53)) * 2 - 1 }
    }
}

let dimension = 16
let database = try Database(path: arguments[1])
let items = try await SearchCollection(
    "items", in: database,
    configuration: CollectionConfiguration(
        dimension: dimension, index: .hnsw(m: 8, efConstruction: 40)))
// Load the index so batches are applied to it as they commit and snapshots get saved automatically.
try await items.loadIndex()
var generator = Generator(state: seed)
// Continue after the rows an earlier (killed) run left, so ids never collide.
let highest =
    try await database.query("SELECT coalesce(max(id), 0) FROM items").first?[0].int64Value ?? 0
var batch = Int(highest / 1_000) + 1
while true {
    batch += 1
    let entries = (0..<250).map { i in
        VectorEntry(
            id: .int(Int64(batch * 1_000 + i)), content: "batch \(batch) row \(i)",
            source: "s\(i % 4)",
            vector: generator.vector(dimension))
    }
    try await items.insert(entries)
    let replaced = (0..<10).map { i in
        VectorEntry(
            id: .int(Int64((batch - 1) * 1_000 + i)), content: "replaced", source: "r",
            vector: generator.vector(dimension))
    }
    try await items.upsert(replaced)
    // Some deletes too (one transaction each), so the log replays more than inserts.
    for i in stride(from: 20, to: 250, by: 10) {
        _ = try await items.delete(id: .int(Int64((batch - 1) * 1_000 + i)))
    }
    // Unbuffered, so the parent sees each line as soon as the batch is committed.
    FileHandle.standardOutput.write(Data("committed \(try await items.count())\n".utf8))
}
