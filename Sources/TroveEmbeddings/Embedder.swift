import Foundation

/// Something that turns texts into unit-length vectors.
///
/// Vectors from two different models are not comparable, so every embedder describes itself
/// with an ``EmbeddingManifest`` that a store records when a collection is created and compares
/// on every open.
///
/// ```swift
/// let embedder = try BERTEmbedder(modelDirectory: BERTEmbedder.defaultModelDirectory)
/// let vectors = try await embedder.embed(["groceries for sunday", "dentist on tuesday"])
/// ```
public protocol Embedder: Sendable {
    /// What model produced the vectors; recorded by the store and compared on open.
    var manifest: EmbeddingManifest { get }

    /// Embeds a batch of texts. Each result has ``dimension`` components and unit L2 norm.
    ///
    /// Implementations check for task cancellation between internal batches.
    /// - Throws: `EmbeddingError`, or `CancellationError` when the task is cancelled.
    func embed(_ texts: [String]) async throws -> [[Float]]

    /// Embeds search queries, to be compared with vectors from ``embed(_:)``.
    ///
    /// Symmetric models (all-MiniLM-L6-v2) embed queries like documents, the default. Models
    /// trained with instructions (multilingual-e5: `query: ` against `passage: `) override it.
    /// - Throws: `EmbeddingError`, or `CancellationError` when the task is cancelled.
    func embedQueries(_ texts: [String]) async throws -> [[Float]]
}

extension Embedder {
    /// The number of components of every vector this embedder returns.
    public var dimension: Int { manifest.dimension }

    /// Embeds one text.
    public func embed(_ text: String) async throws -> [Float] {
        try await embed([text])[0]
    }

    /// Embeds queries like documents: the behaviour of symmetric models.
    public func embedQueries(_ texts: [String]) async throws -> [[Float]] {
        try await embed(texts)
    }

    /// Embeds one query.
    public func embedQuery(_ text: String) async throws -> [Float] {
        try await embedQueries([text])[0]
    }
}

/// A description of an embedding model, precise enough to tell whether two vectors are comparable.
public struct EmbeddingManifest: Codable, Hashable, Sendable {
    /// The model's name, for example `sentence-transformers/all-MiniLM-L6-v2`.
    public var modelID: String
    /// A checksum of the weights (hex SHA-256 of the weights file for built-in models).
    public var checksum: String
    /// Number of components of each vector.
    public var dimension: Int
    /// How token vectors become one vector, for example `mean`.
    public var pooling: String
    /// Whether vectors are scaled to unit L2 norm.
    public var normalized: Bool
    /// Longest input, in model tokens, before truncation (or, for models that embed long texts
    /// in windows, the window).
    public var maxSequenceLength: Int
    /// The instruction put before every text whose vector ``embed`` returns (multilingual-e5:
    /// `passage: `); `nil` for models without one. Part of the identity: vectors of the same
    /// model with another prefix are not comparable, and a store refuses them.
    public var inputPrefix: String?

    public init(
        modelID: String, checksum: String, dimension: Int, pooling: String, normalized: Bool,
        maxSequenceLength: Int, inputPrefix: String? = nil
    ) {
        self.modelID = modelID
        self.checksum = checksum
        self.dimension = dimension
        self.pooling = pooling
        self.normalized = normalized
        self.maxSequenceLength = maxSequenceLength
        self.inputPrefix = inputPrefix
    }
}
