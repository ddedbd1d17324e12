#if canImport(NaturalLanguage)
    import Foundation
    import NaturalLanguage

    /// An ``Embedder`` backed by Apple's built-in sentence embedding (`NLEmbedding`), for apps that
    /// prefer the system model to shipping all-MiniLM-L6-v2. Apple platforms only.
    ///
    /// Its vectors are not comparable with ``BERTEmbedder``'s: the manifest names the language and
    /// the system model revision, so a store refuses to mix them.
    ///
    /// ```swift
    /// if let embedder = NLEmbeddingEmbedder(language: .english) {
    ///     let vector = try await embedder.embed("dentist on Tuesday")
    /// }
    /// ```
    public final class NLEmbeddingEmbedder: Embedder, @unchecked Sendable {
        // @unchecked Sendable: NLEmbedding is not documented as thread-safe, so every use of it goes
        // through `lock`; the other stored properties are immutable.
        private let embedding: NLEmbedding
        private let lock = NSLock()

        /// Describes the system model: language, revision and dimension.
        public let manifest: EmbeddingManifest

        /// The system sentence embedding for a language, or nil when the OS has none for it.
        ///
        /// - Parameter language: For example `.english`.
        public init?(language: NLLanguage) {
            guard let embedding = NLEmbedding.sentenceEmbedding(for: language) else { return nil }
            self.embedding = embedding
            manifest = EmbeddingManifest(
                modelID: "apple.NLEmbedding.sentence.\(language.rawValue)",
                checksum: "revision-\(embedding.revision)", dimension: embedding.dimension,
                pooling: "NLEmbedding",
                normalized: true, maxSequenceLength: 0)  // Apple does not publish the input limit
        }

        /// Embeds texts one by one, scaled to unit length; checks for cancellation between texts.
        ///
        /// - Throws: ``EmbeddingError/textNotEmbeddable(_:)`` when the system model returns no
        ///   vector (for example for empty text), or `CancellationError`.
        public func embed(_ texts: [String]) async throws -> [[Float]] {
            var vectors: [[Float]] = []
            vectors.reserveCapacity(texts.count)
            for text in texts {
                try Task.checkCancellation()
                lock.lock()
                let raw = embedding.vector(for: text)
                lock.unlock()
                guard let raw else {
                    throw EmbeddingError.textNotEmbeddable(String(text.prefix(80)))
                }
                var vector = raw.map { Float($0) }
                Pooling.normalize(&vector)
                vectors.append(vector)
            }
            return vectors
        }
    }
#endif
