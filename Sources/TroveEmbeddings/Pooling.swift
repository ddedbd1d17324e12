import Foundation

/// How token vectors become one text vector, read from a sentence-transformers
/// `1_Pooling/config.json`. Only mean pooling is implemented (what all-MiniLM-L6-v2 uses).
public struct PoolingConfiguration: Codable, Sendable, Equatable {
    /// Width of the token vectors.
    public var wordEmbeddingDimension: Int
    /// Average of the token vectors, padding excluded.
    public var meanTokens: Bool
    /// The `[CLS]` token's vector.
    public var clsToken: Bool
    /// Component-wise maximum.
    public var maxTokens: Bool
    /// Sum divided by the square root of the length.
    public var meanSqrtLenTokens: Bool

    enum CodingKeys: String, CodingKey {
        case wordEmbeddingDimension = "word_embedding_dimension"
        case meanTokens = "pooling_mode_mean_tokens"
        case clsToken = "pooling_mode_cls_token"
        case maxTokens = "pooling_mode_max_tokens"
        case meanSqrtLenTokens = "pooling_mode_mean_sqrt_len_tokens"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        wordEmbeddingDimension = try container.decode(Int.self, forKey: .wordEmbeddingDimension)
        meanTokens = try container.decodeIfPresent(Bool.self, forKey: .meanTokens) ?? false
        clsToken = try container.decodeIfPresent(Bool.self, forKey: .clsToken) ?? false
        maxTokens = try container.decodeIfPresent(Bool.self, forKey: .maxTokens) ?? false
        meanSqrtLenTokens =
            try container.decodeIfPresent(Bool.self, forKey: .meanSqrtLenTokens) ?? false
    }
}

enum Pooling {
    /// Mean of `rows` consecutive rows of width `width` starting at `source`, written to `out`.
    static func mean(
        _ source: UnsafePointer<Float>, rows: Int, width: Int, into out: UnsafeMutablePointer<Float>
    ) {
        out.initialize(repeating: 0, count: width)
        for r in 0..<rows {
            let row = source + r * width
            for j in 0..<width { out[j] += row[j] }
        }
        let scale = 1 / Float(max(rows, 1))
        for j in 0..<width { out[j] *= scale }
    }

    /// Scales `vector` to unit L2 norm; the reference divides by max(norm, 1e-12).
    static func normalize(_ vector: inout [Float]) {
        var sum: Float = 0
        for x in vector { sum += x * x }
        let norm = max(sum.squareRoot(), 1e-12)
        for i in vector.indices { vector[i] /= norm }
    }
}
