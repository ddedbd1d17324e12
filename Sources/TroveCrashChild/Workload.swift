import Foundation
import Trove

/// The deterministic ingest workload of the crash harness, shared by the child (which writes it)
/// and the tests (which check what survived a SIGKILL): batch `b` (1, 2, 3, ...) writes
/// ``size(of:)`` rows plus an update of the counter row (id 0) in ONE upsert transaction, so after
/// a crash a batch is either entirely present, with the counter naming it, or entirely absent.
public enum CrashWorkload {
    public static let collection = "crash"
    public static let dimension = 16
    public static let counterID: Int64 = 0
    static let maxBatchSize = 24

    public static var configuration: CollectionConfiguration {
        CollectionConfiguration(dimension: dimension, metric: .cosine, lexicalSearch: true)
    }

    /// Rows in batch `b` (1...24, varying so batches differ in size).
    public static func size(of batch: Int) -> Int { 1 + (batch &* 7919) % maxBatchSize }

    /// The batch a row id belongs to (0 for the counter row).
    public static func batch(ofRow id: Int64) -> Int { Int(id / 1000) }

    /// The word only batch `b`'s rows contain, for text-search checks.
    public static func tag(_ batch: Int) -> String { "batch\(batch)tag" }

    /// The rows of batch `b`, without the counter row.
    public static func rows(of batch: Int) -> [VectorEntry] {
        (0..<size(of: batch)).map { i in
            let id = Int64(batch) * 1000 + Int64(i) + 1
            var words = "\(tag(batch)) row \(i) of \(size(of: batch))"
            var state = UInt64(id) &* 0x9E37_79B9_7F4A_7C15
            // Filler text so pages fill up and WAL checkpoints happen during the run.
            for _ in 0..<(8 + i % 24) {
                state = splitMix(state)
                words += " w\(state % 997)"
            }
            return VectorEntry(
                id: .int(id), content: words, source: "s\(batch % 5)",
                metadata: "{\"batch\":\(batch),\"i\":\(i)}", vector: vector(seed: UInt64(id)))
        }
    }

    /// The counter row as batch `b` leaves it.
    public static func counter(after batch: Int) -> VectorEntry {
        VectorEntry(
            id: .int(counterID), content: "counter at \(batch)", source: "counter",
            metadata: "{\"batch\":\(batch)}",
            vector: vector(seed: UInt64(batch) &* 1_000_003 &+ 999_999_937))
    }

    /// A deterministic vector with components in -1...1 (never all zero).
    public static func vector(seed: UInt64) -> [Float] {
        var state = seed ^ 0x5EED_5EED
        return (0..<dimension).map { _ in
            state = splitMix(state)
            return Float(Double(state >> 11) / Double(1 << 53)) * 2 - 1
        }
    }

    static func splitMix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The document collections the live-query tests observe while the child's `documents` mode
/// writes them from another process.
public enum ObservedWorkload {
    public static let schema = DocumentSchema(
        fields: [.text("category")], indexes: [IndexDefinition([Field("category")])])
}
