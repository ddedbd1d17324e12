import Foundation
import TroveEmbeddings

/// A deterministic embedder for tests where the model is not the point: a hashed bag of
/// lowercased words (FNV-1a into `dimension` buckets, sign from the top hash bit),
/// L2-normalised. Texts sharing words get similar vectors. (The same construction as the
/// store's test embedder in Tests/TroveTests/Support, which this target cannot import.)
struct HashingEmbedder: Embedder {
    let manifest: EmbeddingManifest

    init(dimension: Int = 64, modelID: String = "test/hashing-bow") {
        manifest = EmbeddingManifest(
            modelID: modelID, checksum: "0000", dimension: dimension, pooling: "sum",
            normalized: true, maxSequenceLength: 512)
    }

    func embed(_ texts: [String]) async throws -> [[Float]] { texts.map(vector) }

    func vector(_ text: String) -> [Float] {
        var v = [Float](repeating: 0, count: manifest.dimension)
        for word in text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }) {
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
