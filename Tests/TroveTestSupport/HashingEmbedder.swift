import Foundation
import TroveEmbeddings

/// A deterministic fake embedder for tests: a hashed bag of lowercased words (FNV-1a into
/// `dimension` buckets, sign from another hash bit), L2-normalised. Texts sharing words get
/// similar vectors; texts with no words get a fixed unit vector. Shared by the store and CLI tests.
///
/// ```swift
/// let embedder = HashingEmbedder(dimension: 32)
/// let vectors = try await embedder.embed(["oat milk", "milk and bread"])
/// ```
public struct HashingEmbedder: Embedder {
    public let manifest: EmbeddingManifest

    public init(
        dimension: Int = 64, modelID: String = "test/hashing-bow", checksum: String = "0000"
    ) {
        manifest = EmbeddingManifest(
            modelID: modelID, checksum: checksum, dimension: dimension, pooling: "sum",
            normalized: true,
            maxSequenceLength: 512)
    }

    public func embed(_ texts: [String]) async throws -> [[Float]] {
        texts.map(vector)
    }

    public func vector(_ text: String) -> [Float] {
        var v = [Float](repeating: 0, count: manifest.dimension)
        let words = text.lowercased().split { !$0.isLetter && !$0.isNumber }
        for word in words {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in word.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            v[Int(hash % UInt64(manifest.dimension))] += (hash >> 63) == 0 ? 1 : -1
        }
        let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        if norm == 0 {
            v[0] = 1
            return v
        }
        return v.map { $0 / norm }
    }
}
