import CTroveEncoderKernels
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The BERT encoder forward pass in Swift, with mean pooling and L2 normalisation on top.
///
/// Word + position + token-type embeddings and LayerNorm, then `numHiddenLayers` layers of
/// multi-head self-attention and a GELU (erf form) feed-forward network, each followed by a
/// residual connection and LayerNorm (Devlin et al. 2019). Sequences of a batch are packed one
/// after another without padding: every dense layer works row by row, and attention runs per
/// sequence over its own tokens only, which is exactly what the reference's padding mask computes
/// (masked keys get weight zero). A text's vector therefore does not depend on its batch.
///
/// ```swift
/// let weights = try SafeTensorsFile(url: dir.appendingPathComponent("model.safetensors"))
/// let encoder = try BERTEncoder(configuration: .init(contentsOf: dir.appendingPathComponent("config.json")),
///                               weights: weights)
/// let vectors = encoder.embed([[101, 7592, 2088, 102]])
/// ```
public final class BERTEncoder: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable after init; the pointers point into
    // `weights`' read-only mapping or `packed`'s buffer, which this object keeps alive. `embed`
    // allocates its own scratch per call, so concurrent calls share nothing mutable.

    /// The fields of a Hugging Face BERT `config.json` that the forward pass uses.
    public struct Configuration: Codable, Sendable, Equatable {
        public var vocabSize: Int
        public var hiddenSize: Int
        public var numHiddenLayers: Int
        public var numAttentionHeads: Int
        public var intermediateSize: Int
        public var maxPositionEmbeddings: Int
        public var typeVocabSize: Int
        public var layerNormEps: Float
        public var hiddenAct: String

        enum CodingKeys: String, CodingKey {
            case vocabSize = "vocab_size"
            case hiddenSize = "hidden_size"
            case numHiddenLayers = "num_hidden_layers"
            case numAttentionHeads = "num_attention_heads"
            case intermediateSize = "intermediate_size"
            case maxPositionEmbeddings = "max_position_embeddings"
            case typeVocabSize = "type_vocab_size"
            case layerNormEps = "layer_norm_eps"
            case hiddenAct = "hidden_act"
        }

        /// Reads and validates a `config.json`.
        ///
        /// - Throws: ``EmbeddingError/missingModelFile(path:)``,
        ///   ``EmbeddingError/invalidModelFile(path:reason:)`` or ``EmbeddingError/unsupportedModel(reason:)``.
        public init(contentsOf url: URL) throws {
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw EmbeddingError.missingModelFile(path: url.path)
            }
            do {
                self = try JSONDecoder().decode(Configuration.self, from: Data(contentsOf: url))
            } catch {
                throw EmbeddingError.invalidModelFile(path: url.path, reason: "\(error)")
            }
            try validate()
        }

        func validate() throws {
            guard hiddenAct == "gelu" else {
                throw EmbeddingError.unsupportedModel(reason: "hidden_act \(hiddenAct)")
            }
            guard hiddenSize > 0, numAttentionHeads > 0, hiddenSize % numAttentionHeads == 0 else {
                throw EmbeddingError.unsupportedModel(
                    reason: "hidden_size \(hiddenSize) with \(numAttentionHeads) heads")
            }
            guard numHiddenLayers > 0, intermediateSize > 0, vocabSize > 0,
                maxPositionEmbeddings > 0,
                typeVocabSize > 0
            else {
                throw EmbeddingError.unsupportedModel(reason: "non-positive size in config.json")
            }
        }
    }

    // Pointers into the mapped weights file (no copies; 4·params bytes of the file).
    struct Layer {
        let query, queryBias, key, keyBias, value, valueBias: UnsafePointer<Float>
        let attentionOutput, attentionOutputBias, attentionNormWeight,
            attentionNormBias: UnsafePointer<Float>
        let intermediate, intermediateBias, output, outputBias, outputNormWeight,
            outputNormBias: UnsafePointer<Float>
    }

    /// The model's configuration.
    public let configuration: Configuration
    /// Which matrix multiply implementation this encoder uses.
    public var backend: MatrixBackend { multiplier.backend }

    private let weights: SafeTensorsFile
    private let multiplier: MatrixMultiplier
    private let wordEmbeddings, positionEmbeddings, tokenTypeEmbeddings: UnsafePointer<Float>
    private let embeddingNormWeight, embeddingNormBias: UnsafePointer<Float>
    let layers: [Layer]
    /// The dense weights packed for the native kernels; nil on the other backends.
    private let packed: PackedEncoderWeights?

    /// Binds the encoder to its weights, checking that every tensor exists with the right shape.
    ///
    /// - Parameters:
    ///   - configuration: The model's `config.json`.
    ///   - weights: The model's `model.safetensors` (names with or without a `bert.` prefix).
    ///   - backend: Matrix multiply implementation; ``MatrixBackend/preferred`` by default.
    /// - Throws: ``EmbeddingError/missingTensor(name:)`` or ``EmbeddingError/tensorMismatch(name:reason:)``.
    public init(
        configuration: Configuration, weights: SafeTensorsFile, backend: MatrixBackend = .preferred
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.weights = weights
        multiplier = MatrixMultiplier(backend: backend)
        let prefix =
            weights.tensors["embeddings.word_embeddings.weight"] == nil
                && weights.tensors["bert.embeddings.word_embeddings.weight"] != nil ? "bert." : ""
        func tensor(_ name: String, _ shape: [Int]) throws -> UnsafePointer<Float> {
            let buffer = try weights.floats(prefix + name, shape: shape)
            return buffer.baseAddress ?? UnsafePointer(bitPattern: MemoryLayout<Float>.alignment)!
        }
        let h = configuration.hiddenSize
        let i = configuration.intermediateSize
        wordEmbeddings = try tensor(
            "embeddings.word_embeddings.weight", [configuration.vocabSize, h])
        positionEmbeddings = try tensor(
            "embeddings.position_embeddings.weight", [configuration.maxPositionEmbeddings, h])
        tokenTypeEmbeddings = try tensor(
            "embeddings.token_type_embeddings.weight", [configuration.typeVocabSize, h])
        embeddingNormWeight = try tensor("embeddings.LayerNorm.weight", [h])
        embeddingNormBias = try tensor("embeddings.LayerNorm.bias", [h])
        layers = try (0..<configuration.numHiddenLayers).map { n in
            let p = "encoder.layer.\(n)."
            return Layer(
                query: try tensor(p + "attention.self.query.weight", [h, h]),
                queryBias: try tensor(p + "attention.self.query.bias", [h]),
                key: try tensor(p + "attention.self.key.weight", [h, h]),
                keyBias: try tensor(p + "attention.self.key.bias", [h]),
                value: try tensor(p + "attention.self.value.weight", [h, h]),
                valueBias: try tensor(p + "attention.self.value.bias", [h]),
                attentionOutput: try tensor(p + "attention.output.dense.weight", [h, h]),
                attentionOutputBias: try tensor(p + "attention.output.dense.bias", [h]),
                attentionNormWeight: try tensor(p + "attention.output.LayerNorm.weight", [h]),
                attentionNormBias: try tensor(p + "attention.output.LayerNorm.bias", [h]),
                intermediate: try tensor(p + "intermediate.dense.weight", [i, h]),
                intermediateBias: try tensor(p + "intermediate.dense.bias", [i]),
                output: try tensor(p + "output.dense.weight", [h, i]),
                outputBias: try tensor(p + "output.dense.bias", [h]),
                outputNormWeight: try tensor(p + "output.LayerNorm.weight", [h]),
                outputNormBias: try tensor(p + "output.LayerNorm.bias", [h]))
        }
        // Packing reads the dense weights once, at load; the forward pass then
        // never touches their mapped pages.
        packed =
            multiplier.backend == .native
            ? PackedEncoderWeights(layers, hiddenSize: h, intermediateSize: i) : nil
    }

    /// Runs the encoder on token-id sequences and returns one mean-pooled, unit-length vector each.
    ///
    /// Runs on the calling thread, except that with `threads > 1` the dense layers of a small
    /// batch (a single query) split their output columns across that many threads.
    /// ``BERTEmbedder`` splits larger batches across cores itself.
    ///
    /// - Parameters:
    ///   - sequences: Token ids (as from ``WordPieceTokenizer/encode(_:)``), each non-empty, at
    ///     most `maxPositionEmbeddings` long, every id below `vocabSize`.
    ///   - threads: Threads for the dense layers when the batch has at most 64 tokens.
    /// - Returns: `sequences.count` vectors of `hiddenSize` components with unit L2 norm.
    /// - Complexity: O(T·P + Σ L²·H) for T tokens in total, P parameters per token, sequences of
    ///   length L and hidden size H. Scratch memory: about T·(5H + I) floats.
    public func embed(_ sequences: [[Int32]], threads: Int = 1) -> [[Float]] {
        if sequences.isEmpty { return [] }
        let h = configuration.hiddenSize
        var offsets: [Int] = []
        var total = 0
        for sequence in sequences {
            precondition(
                !sequence.isEmpty && sequence.count <= configuration.maxPositionEmbeddings,
                "a sequence must have 1...\(configuration.maxPositionEmbeddings) tokens")
            offsets.append(total)
            total += sequence.count
        }
        let states = UnsafeMutablePointer<Float>.allocate(capacity: total * h)
        defer { states.deallocate() }
        let threads = total <= 64 ? threads : 1
        if let packed {
            forwardNative(
                sequences, offsets: offsets, tokens: total, threads: threads, packed: packed,
                into: states)
        } else {
            forward(sequences, offsets: offsets, tokens: total, threads: threads, into: states)
        }
        return sequences.indices.map { s in
            var vector = [Float](repeating: 0, count: h)
            vector.withUnsafeMutableBufferPointer { out in
                Pooling.mean(
                    states + offsets[s] * h, rows: sequences[s].count, width: h,
                    into: out.baseAddress!)
            }
            Pooling.normalize(&vector)
            return vector
        }
    }

    /// The last hidden states of packed sequences, `tokens × hiddenSize`, written to `x`.
    func forward(
        _ sequences: [[Int32]], offsets: [Int], tokens t: Int, threads: Int,
        into x: UnsafeMutablePointer<Float>
    ) {
        let c = configuration
        let h = c.hiddenSize
        let inter = c.intermediateSize
        let heads = c.numAttentionHeads
        let headSize = h / heads
        let maxLength = sequences.map(\.count).max() ?? 0
        let eps = c.layerNormEps

        // Scratch, owned by this call: q, k, v, context, sum (t·h each), intermediate (t·inter),
        // attention scores (maxLength²). About 4.5 MB for 32 texts of 84 tokens.
        let scratch = UnsafeMutablePointer<Float>.allocate(
            capacity: 5 * t * h + t * inter + maxLength * maxLength)
        defer { scratch.deallocate() }
        let q = scratch
        let k = q + t * h
        let v = k + t * h
        let context = v + t * h
        let sum = context + t * h
        let intermediate = sum + t * h
        let scores = intermediate + t * inter

        embedTokens(sequences, offsets: offsets, into: x)

        let scale = 1 / Float(headSize).squareRoot()
        for layer in layers {
            linear(
                x, rows: t, threads: threads, inputs: h, weight: layer.query, bias: layer.queryBias,
                outputs: h, into: q
            )
            linear(
                x, rows: t, threads: threads, inputs: h, weight: layer.key, bias: layer.keyBias,
                outputs: h, into: k)
            linear(
                x, rows: t, threads: threads, inputs: h, weight: layer.value, bias: layer.valueBias,
                outputs: h, into: v
            )
            for (s, sequence) in sequences.enumerated() {
                let length = sequence.count
                let base = offsets[s] * h
                for head in 0..<heads {
                    let column = base + head * headSize
                    // scores = Q·Kᵀ over this sequence's own tokens: the padding mask, exactly.
                    multiplier.multiply(
                        m: length, n: length, k: headSize, a: q + column, lda: h, b: k + column,
                        ldb: h,
                        transposeB: true, c: scores, ldc: length)
                    VectorMath.softmaxRows(scores, rows: length, width: length, scale: scale)
                    multiplier.multiply(
                        m: length, n: headSize, k: length, a: scores, lda: length, b: v + column,
                        ldb: h,
                        transposeB: false, c: context + column, ldc: h)
                }
            }
            linear(
                context, rows: t, threads: threads, inputs: h, weight: layer.attentionOutput,
                bias: layer.attentionOutputBias,
                outputs: h, residual: x, into: sum)
            Self.normalizeRows(
                sum, rows: t, width: h,
                weight: layer.attentionNormWeight, bias: layer.attentionNormBias, eps: eps, into: x)
            linear(
                x, rows: t, threads: threads, inputs: h, weight: layer.intermediate,
                bias: layer.intermediateBias,
                outputs: inter, into: intermediate)
            VectorMath.gelu(intermediate, count: t * inter)
            linear(
                intermediate, rows: t, threads: threads, inputs: inter, weight: layer.output,
                bias: layer.outputBias,
                outputs: h, residual: x, into: sum)
            Self.normalizeRows(
                sum, rows: t, width: h,
                weight: layer.outputNormWeight, bias: layer.outputNormBias, eps: eps, into: x)
        }
    }

    /// Embeddings: word + position + token type 0, then LayerNorm, one row per token into `x`.
    func embedTokens(_ sequences: [[Int32]], offsets: [Int], into x: UnsafeMutablePointer<Float>) {
        let c = configuration
        let h = c.hiddenSize
        for (s, sequence) in sequences.enumerated() {
            for (position, id) in sequence.enumerated() {
                precondition(
                    id >= 0 && Int(id) < c.vocabSize, "token id \(id) outside the vocabulary")
                let row = x + (offsets[s] + position) * h
                let word = wordEmbeddings + Int(id) * h
                let pos = positionEmbeddings + position * h
                for j in 0..<h { row[j] = word[j] + pos[j] + tokenTypeEmbeddings[j] }
                if packed != nil {
                    trove_enc_layer_norm(
                        row, 1, h, embeddingNormWeight, embeddingNormBias, c.layerNormEps, row)
                } else {
                    VectorMath.layerNorm(
                        row, width: h, weight: embeddingNormWeight, bias: embeddingNormBias,
                        eps: c.layerNormEps,
                        into: row)
                }
            }
        }
    }

    /// `out = input · weightᵀ + bias (+ residual)` (PyTorch `Linear`): the bias and residual are
    /// written first and the product accumulated onto them, saving a pass over `out`.
    private func linear(
        _ input: UnsafePointer<Float>, rows: Int, threads: Int, inputs: Int,
        weight: UnsafePointer<Float>,
        bias: UnsafePointer<Float>, outputs: Int, residual: UnsafePointer<Float>? = nil,
        into out: UnsafeMutablePointer<Float>
    ) {
        for r in 0..<rows {
            let row = out + r * outputs
            if let residual {
                let res = residual + r * outputs
                for j in 0..<outputs { row[j] = res[j] + bias[j] }
            } else {
                row.update(from: bias, count: outputs)
            }
        }
        let parts = outputs % (8 * threads) == 0 ? threads : 1
        if parts <= 1 {
            multiplier.multiply(
                m: rows, n: outputs, k: inputs, a: input, lda: inputs, b: weight, ldb: inputs,
                transposeB: true, c: out, ldc: outputs, accumulate: true)
            return
        }
        // A few rows: the cost is streaming (and BLAS-packing) the weights, so each thread takes
        // a block of output columns, that is a block of weight rows.
        let width = outputs / parts
        let multiplier = self.multiplier
        let operands = ColumnSplit(input: input, weight: weight, out: out)
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let first = part * width
            multiplier.multiply(
                m: rows, n: width, k: inputs, a: operands.input, lda: inputs,
                b: operands.weight + first * inputs, ldb: inputs,
                transposeB: true, c: operands.out + first, ldc: outputs, accumulate: true)
        }
    }

    /// The operands of a column-split multiply, passed to the worker threads.
    private struct ColumnSplit: @unchecked Sendable {
        // @unchecked Sendable: `input` and `weight` are only read; each thread writes its own
        // disjoint block of columns of `out`; concurrentPerform returns after every thread is done,
        // so no pointer outlives the buffers it points into.
        let input: UnsafePointer<Float>
        let weight: UnsafePointer<Float>
        let out: UnsafeMutablePointer<Float>
    }

    /// LayerNorm of every row of `sum`, written to `out`.
    private static func normalizeRows(
        _ sum: UnsafeMutablePointer<Float>, rows: Int, width: Int, weight: UnsafePointer<Float>,
        bias: UnsafePointer<Float>, eps: Float, into out: UnsafeMutablePointer<Float>
    ) {
        for r in 0..<rows {
            VectorMath.layerNorm(
                sum + r * width, width: width, weight: weight, bias: bias, eps: eps,
                into: out + r * width)
        }
    }
}
