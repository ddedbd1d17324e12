import Foundation

/// The built-in embedder: a sentence-transformers BERT model (all-MiniLM-L6-v2 by default) run
/// in Swift on the device, with mean pooling and L2 normalisation.
///
/// Loads a sentence-transformers folder: `config.json`, `vocab.txt`, `model.safetensors`,
/// `1_Pooling/config.json` and `sentence_bert_config.json`. Install the default model with
/// `trove model install all-MiniLM-L6-v2`; it goes to ``defaultModelDirectory``.
///
/// ```swift
/// let embedder = try BERTEmbedder(modelDirectory: BERTEmbedder.defaultModelDirectory)
/// let vectors = try await embedder.embed(["pick up paneer", "dentist on tuesday"])
/// // vectors[0].count == 384, unit length
/// ```
///
/// Several batches run at once, one per task, up to `parallelism` tasks (one per core by
/// default); a single batch is split across the tasks. Texts are packed without padding, so a
/// text's vector does not depend on the batch it is in.
public final class BERTEmbedder: Embedder {
    /// The model description the store records.
    public let manifest: EmbeddingManifest
    /// The tokenizer built from the model's `vocab.txt`, truncating at `max_seq_length`.
    public let tokenizer: WordPieceTokenizer
    /// The encoder built from `config.json` and `model.safetensors`.
    public let encoder: BERTEncoder
    /// How many texts go through the encoder at once.
    public let batchSize: Int
    /// How many batches are encoded at once (or tasks share a lone batch).
    public let parallelism: Int

    /// The checksum of the weights of the default model, as pinned by `trove model install`.
    public static let allMiniLML6v2Checksum =
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

    /// The files a model folder must contain, in the order they are checked.
    public static let requiredFiles = [
        "config.json", "vocab.txt", "model.safetensors", "1_Pooling/config.json",
        "sentence_bert_config.json",
    ]

    /// Loads a sentence-transformers model folder.
    ///
    /// - Parameters:
    ///   - modelDirectory: The folder, for example ``defaultModelDirectory``.
    ///   - backend: Matrix multiply implementation; ``MatrixBackend/preferred`` (the native
    ///     AVX2/FMA kernels where the CPU has them, else the platform BLAS; `TROVE_BLAS=none`
    ///     forces Swift) by default. ``MatrixBackend/native`` packs the dense weights at load
    ///     (about 42 MB for MiniLM, replacing their mapped pages in resident memory).
    ///   - batchSize: Texts encoded together (default 32).
    ///   - parallelism: Batches encoded at once, or tasks sharing a lone batch (default: the
    ///     number of active cores). With more than one, OpenBLAS is set to one thread per call so
    ///     the tasks do not oversubscribe cores.
    /// - Throws: ``EmbeddingError/missingModelFile(path:)`` naming the first missing file (its
    ///   description says to run `trove model install all-MiniLM-L6-v2`), or another ``EmbeddingError``
    ///   when a file is malformed or the model is not a supported BERT.
    /// - Complexity: Reads the vocabulary and the safetensors header; the weights are mapped,
    ///   not read. The weights checksum comes from the `model.safetensors.sha256` file that
    ///   `trove model install` writes, else it is computed (about a second for 90 MB).
    public init(
        modelDirectory: URL, backend: MatrixBackend = .preferred, batchSize: Int = 32,
        parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws {
        precondition(batchSize > 0 && parallelism > 0, "batchSize and parallelism must be positive")
        var isDirectory: ObjCBool = false
        guard
            FileManager.default.fileExists(atPath: modelDirectory.path, isDirectory: &isDirectory),
            isDirectory.boolValue
        else {
            throw EmbeddingError.missingModelFile(path: modelDirectory.path)
        }
        for name in Self.requiredFiles {
            let path = modelDirectory.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path) else {
                throw EmbeddingError.missingModelFile(path: path)
            }
        }
        func url(_ name: String) -> URL { modelDirectory.appendingPathComponent(name) }

        let sentenceConfig = try Self.decode(
            SentenceBERTConfiguration.self, from: url("sentence_bert_config.json"))
        let pooling = try Self.decode(PoolingConfiguration.self, from: url("1_Pooling/config.json"))
        guard pooling.meanTokens, !pooling.clsToken, !pooling.maxTokens, !pooling.meanSqrtLenTokens
        else {
            throw EmbeddingError.unsupportedModel(reason: "only mean pooling is implemented")
        }
        let configuration = try BERTEncoder.Configuration(contentsOf: url("config.json"))
        guard pooling.wordEmbeddingDimension == configuration.hiddenSize else {
            throw EmbeddingError.invalidModelFile(
                path: url("1_Pooling/config.json").path,
                reason:
                    "word_embedding_dimension \(pooling.wordEmbeddingDimension) differs from hidden_size"
            )
        }
        let maxLength = min(sentenceConfig.maxSeqLength, configuration.maxPositionEmbeddings)
        guard maxLength >= 2 else {
            throw EmbeddingError.invalidModelFile(
                path: url("sentence_bert_config.json").path, reason: "max_seq_length < 2")
        }
        tokenizer = try WordPieceTokenizer(
            vocabularyFile: url("vocab.txt"), maxSequenceLength: maxLength)
        let weights = try SafeTensorsFile(url: url("model.safetensors"))
        encoder = try BERTEncoder(configuration: configuration, weights: weights, backend: backend)
        self.batchSize = batchSize
        self.parallelism = parallelism
        if encoder.backend == .blas, let blas = OpenBLAS.shared, let setThreads = blas.setNumThreads
        {
            // Process-wide OpenBLAS setting: one BLAS thread per task when tasks already fill the cores.
            setThreads(Int32(parallelism > 1 ? 1 : ProcessInfo.processInfo.activeProcessorCount))
        }

        let checksum = try Self.weightsChecksum(modelDirectory: modelDirectory)
        manifest = EmbeddingManifest(
            modelID: checksum == Self.allMiniLML6v2Checksum
                ? "sentence-transformers/all-MiniLM-L6-v2" : modelDirectory.lastPathComponent,
            checksum: checksum, dimension: configuration.hiddenSize, pooling: "mean",
            normalized: true,
            maxSequenceLength: maxLength)
    }

    /// Embeds texts, `batchSize` at a time and up to `parallelism` batches at once, checking for
    /// cancellation before each batch starts.
    ///
    /// - Parameter texts: Any texts; empty text gives the vector of `[CLS] [SEP]`. Texts longer
    ///   than `maxSequenceLength` tokens are truncated, as the reference does.
    /// - Returns: One unit-length vector of ``Embedder/dimension`` components per text, in order.
    /// - Throws: `CancellationError` when the task is cancelled.
    /// - Complexity: Linear in the number of tokens (quadratic within each text for attention).
    public func embed(_ texts: [String]) async throws -> [[Float]] {
        let batchCount = (texts.count + batchSize - 1) / batchSize
        if batchCount <= 1 || parallelism <= 1 {
            // One batch (a query, a few texts): split it across the cores.
            var vectors: [[Float]] = []
            vectors.reserveCapacity(texts.count)
            var start = 0
            while start < texts.count {
                try Task.checkCancellation()
                let end = min(start + batchSize, texts.count)
                let ids = texts[start..<end].map { tokenizer.encode($0) }
                vectors += await embed(tokenIDs: ids)
                start = end
            }
            return vectors
        }
        // Several batches: up to `parallelism` whole batches at once, one per task, each task
        // tokenizing its own. Splitting every batch instead left a core idle while the other
        // finished its half and while the next batch was tokenized (about 10% of the cores).
        let wordPiece = tokenizer
        let encoder = self.encoder
        let size = batchSize
        return try await withThrowingTaskGroup(of: (Int, [[Float]]).self) { group in
            var results = [[[Float]]](repeating: [], count: batchCount)
            var next = 0
            func addNext() {
                let index = next
                let start = index * size
                let batch = Array(texts[start..<min(start + size, texts.count)])
                next += 1
                group.addTask { (index, encoder.embed(batch.map { wordPiece.encode($0) })) }
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

    /// Embeds already-tokenised sequences as one batch, split across ``parallelism`` tasks.
    ///
    /// - Parameter tokenIDs: Sequences from ``tokenizer``.
    /// - Returns: One unit-length vector per sequence, in order.
    public func embed(tokenIDs: [[Int32]]) async -> [[Float]] {
        let parts = Self.split(tokenIDs, into: min(parallelism, tokenIDs.count))
        // One part (a single query): let the dense layers split their columns across the cores.
        if parts.count <= 1 { return encoder.embed(tokenIDs, threads: parallelism) }
        let encoder = self.encoder
        return await withTaskGroup(of: (Int, [[Float]]).self) { group in
            for (index, range) in parts.enumerated() {
                let part = Array(tokenIDs[range])
                group.addTask { (index, encoder.embed(part)) }
            }
            var results = [[[Float]]](repeating: [], count: parts.count)
            for await (index, vectors) in group { results[index] = vectors }
            return results.flatMap { $0 }
        }
    }

    /// Contiguous ranges with about equal token counts (the encoder's cost is about linear in tokens).
    static func split(_ sequences: [[Int32]], into requestedParts: Int) -> [Range<Int>] {
        let parts = min(requestedParts, sequences.count)
        guard parts > 1 else { return sequences.isEmpty ? [] : [0..<sequences.count] }
        let total = sequences.reduce(0) { $0 + $1.count }
        var ranges: [Range<Int>] = []
        var start = 0
        var accumulated = 0
        for (index, sequence) in sequences.enumerated() {
            accumulated += sequence.count
            let target = total * (ranges.count + 1) / parts
            let partsAfterThis = parts - ranges.count - 1
            let sequencesAfterThis = sequences.count - index - 1
            // Cut at the token target, or when every remaining sequence must start a part.
            if partsAfterThis > 0, sequencesAfterThis >= partsAfterThis,
                accumulated >= target || sequencesAfterThis == partsAfterThis
            {
                ranges.append(start..<(index + 1))
                start = index + 1
            }
        }
        if start < sequences.count { ranges.append(start..<sequences.count) }
        return ranges
    }

    /// The weights' SHA-256: from the sidecar `model.safetensors.sha256` when it is not older than
    /// the weights, else computed from the file.
    static func weightsChecksum(modelDirectory: URL) throws -> String {
        try SHA256.weightsChecksum(modelDirectory.appendingPathComponent("model.safetensors"))
    }

    static func decode<T: Decodable>(_ type: T.Type, from url: URL) throws -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(contentsOf: url)) } catch {
            throw EmbeddingError.invalidModelFile(path: url.path, reason: "\(error)")
        }
    }
}

/// `sentence_bert_config.json`: the longest input before truncation.
struct SentenceBERTConfiguration: Decodable {
    let maxSeqLength: Int
    enum CodingKeys: String, CodingKey { case maxSeqLength = "max_seq_length" }
}
