import Foundation
import Trove

/// What `trove stats --json` prints and the MCP status tool returns: the database's size and
/// contents, its models (one vector field each), its collections, and when it was last indexed.
struct StatsResult: Codable, Equatable, Sendable {
    var database: String
    var fileBytes: Int64
    var records: Int
    var sources: Int
    var files: Int
    var dimension: Int
    var metric: String
    var index: String
    var lexicalSearch: Bool
    var tokenizer: String
    /// The first model (null when the database records none).
    var model: Model?
    /// One per model.
    var vectorFields: [VectorField]
    var collections: [String]
    /// The cipher, null for a plain database.
    var encryption: String?
    /// ISO 8601, UTC.
    var lastIndexed: Date?

    /// A model as the database records it.
    struct Model: Codable, Equatable, Sendable {
        var modelID: String
        var checksum: String
        var dimension: Int
        var pooling: String
        var normalized: Bool
        var maxSequenceLength: Int

        init(_ manifest: EmbeddingManifest) {
            (modelID, checksum, dimension) = (
                manifest.modelID, manifest.checksum, manifest.dimension
            )
            (pooling, normalized) = (manifest.pooling, manifest.normalized)
            maxSequenceLength = manifest.maxSequenceLength
        }

        enum CodingKeys: String, CodingKey {
            case modelID = "model_id"
            case checksum, dimension, pooling, normalized
            case maxSequenceLength = "max_sequence_length"
        }
    }

    struct VectorField: Codable, Equatable, Sendable {
        /// The model's short name.
        var model: String?
        var modelID: String?
        var dimension: Int
        var index: String

        enum CodingKeys: String, CodingKey {
            case model
            case modelID = "model_id"
            case dimension, index
        }
    }

    enum CodingKeys: String, CodingKey {
        case database
        case fileBytes = "file_bytes"
        case records, sources, files, dimension, metric, index
        case lexicalSearch = "lexical_search"
        case tokenizer, model
        case vectorFields = "vector_fields"
        case collections, encryption
        case lastIndexed = "last_indexed"
    }
}
