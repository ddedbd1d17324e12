import Foundation
import TroveEmbeddings

/// Where a vector field's vectors come from: a text field of the same document, embedded by the
/// model the manifest describes. Recorded in the schema (``DocumentSchema/embeddingSources``), so
/// opening the collection with another model is a schema mismatch, and a migration that changes
/// the model (``MigrationStep/changeEmbeddingModel(of:in:from:to:batchSize:progress:)``) records
/// the new one after re-embedding every row.
///
/// ```swift
/// let schema = DocumentSchema(
///     fields: [.text("body"), .vector("embedding", dimension: embedder.dimension)],
///     embeddingSources: ["embedding": EmbeddingSource(textField: "body", manifest: embedder.manifest)])
/// ```
public struct EmbeddingSource: Hashable, Sendable, Codable {
    /// The text field whose value is embedded.
    public var textField: String
    /// The model that produced the stored vectors.
    public var manifest: EmbeddingManifest

    public init(textField: String, manifest: EmbeddingManifest) {
        self.textField = textField
        self.manifest = manifest
    }
}

extension DocumentSchema {
    /// Checks each embedding source against the declared fields.
    func validateEmbeddingSources() throws {
        for (vectorField, source) in embeddingSources {
            guard let dimension = field(vectorField)?.type.vectorDimension else {
                throw TroveError.invalidConfiguration(
                    "embeddingSources names \(vectorField), which is not a vector field")
            }
            guard field(source.textField)?.type == .text else {
                throw TroveError.invalidConfiguration(
                    "the embedding source of \(vectorField) must be a declared text field, not \(source.textField)"
                )
            }
            guard source.manifest.dimension == dimension else {
                throw TroveError.dimensionMismatch(
                    expected: dimension, actual: source.manifest.dimension)
            }
        }
    }
}
