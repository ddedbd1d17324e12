// A stand-in for BERTEmbedder so the example runs anywhere and prints the same every time:
// a hashed bag of lowercased words, L2-normalised (texts sharing words get similar vectors).
import Foundation
import TroveEmbeddings

struct ToyEmbedder: Embedder {
    let manifest = EmbeddingManifest(modelID: "example/toy-bag-of-words", checksum: "0", dimension: 16, pooling: "sum",
                                     normalized: true, maxSequenceLength: 512)

    func embed(_ texts: [String]) async throws -> [[Float]] {
        texts.map { text in
            var v = [Float](repeating: 0, count: 16)
            for word in text.lowercased().split(whereSeparator: { !$0.isLetter }) {
                let hash = word.unicodeScalars.reduce(UInt32(2166136261)) { ($0 ^ $1.value) &* 16777619 }
                v[Int(hash % 16)] += 1
            }
            let norm = max(v.reduce(0) { $0 + $1 * $1 }.squareRoot(), 1e-6)
            return v.map { $0 / norm }
        }
    }
}
