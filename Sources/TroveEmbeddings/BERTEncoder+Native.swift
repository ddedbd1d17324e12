import CTroveEncoderKernels
import Foundation

/// The dense weights of every layer, packed once at load for the native kernels
/// (`trove_enc_pack`: panels of 16 output columns, k-major).
///
/// Owns one 64-byte-aligned allocation of about 4·(4H² + 2HI) bytes per layer plus the fused
/// query/key/value bias (42.5 MB for all-MiniLM-L6-v2). The mapped file pages of these weights
/// are read once here and then given back (``MappedPages/release(_:byteCount:)``), so the packed copy does not
/// double the resident memory: only the word embeddings and the small vectors stay mapped in.
final class PackedEncoderWeights: @unchecked Sendable {
    // @unchecked Sendable: the buffer is written only in init and read-only afterwards; it lives
    // as long as this object, which the encoder keeps.

    struct Layer {
        /// Query, key and value weights as one 3H-column operand, and their 3H biases.
        let queryKeyValue, queryKeyValueBias: UnsafePointer<Float>
        let attentionOutput, intermediate, output: UnsafePointer<Float>
    }

    let layers: [Layer]
    /// The size of the packed copy, in bytes.
    let byteCount: Int
    private let storage: UnsafeMutableRawPointer

    init(_ layers: [BERTEncoder.Layer], hiddenSize h: Int, intermediateSize i: Int) {
        let qkvCount = trove_enc_packed_count(3 * h, h)
        let squareCount = trove_enc_packed_count(h, h)
        let intermediateCount = trove_enc_packed_count(i, h)
        let outputCount = trove_enc_packed_count(h, i)
        // Each part rounded to 16 floats so every panel stays 64-byte aligned.
        func rounded(_ n: Int) -> Int { (n + 15) / 16 * 16 }
        let perLayer =
            rounded(qkvCount) + rounded(3 * h) + rounded(squareCount) + rounded(intermediateCount)
            + rounded(outputCount)
        byteCount = max(perLayer * layers.count, 1) * 4
        storage = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        let base = storage.bindMemory(to: Float.self, capacity: byteCount / 4)
        // The three H×H projections stacked into one 3H×H matrix (a temporary copy, 1.8 MB).
        let stacked = UnsafeMutablePointer<Float>.allocate(capacity: 3 * h * h)
        defer { stacked.deallocate() }
        var cursor = base
        func take(_ count: Int) -> UnsafeMutablePointer<Float> {
            defer { cursor += rounded(count) }
            return cursor
        }
        self.layers = layers.map { layer in
            let qkv = take(qkvCount)
            let qkvBias = take(3 * h)
            stacked.update(from: layer.query, count: h * h)
            (stacked + h * h).update(from: layer.key, count: h * h)
            (stacked + 2 * h * h).update(from: layer.value, count: h * h)
            trove_enc_pack(stacked, h, 1, 3 * h, h, qkv)
            qkvBias.update(from: layer.queryBias, count: h)
            (qkvBias + h).update(from: layer.keyBias, count: h)
            (qkvBias + 2 * h).update(from: layer.valueBias, count: h)
            let attentionOutput = take(squareCount)
            trove_enc_pack(layer.attentionOutput, h, 1, h, h, attentionOutput)
            let intermediate = take(intermediateCount)
            trove_enc_pack(layer.intermediate, h, 1, i, h, intermediate)
            let output = take(outputCount)
            trove_enc_pack(layer.output, i, 1, h, i, output)
            for (weight, count) in [
                (layer.query, h * h), (layer.key, h * h), (layer.value, h * h),
                (layer.attentionOutput, h * h), (layer.intermediate, i * h), (layer.output, h * i),
            ] {
                MappedPages.release(weight, byteCount: count * 4)
            }
            return Layer(
                queryKeyValue: qkv, queryKeyValueBias: qkvBias, attentionOutput: attentionOutput,
                intermediate: intermediate, output: output)
        }
    }

    deinit { storage.deallocate() }
}

extension BERTEncoder {
    /// The forward pass on the native kernels: like ``forward(_:offsets:tokens:threads:into:)``,
    /// with query, key and value in one multiply, one fused kernel per attention head, and
    /// bias, residual and GELU inside the multiplies.
    func forwardNative(
        _ sequences: [[Int32]], offsets: [Int], tokens t: Int, threads: Int,
        packed: PackedEncoderWeights,
        into x: UnsafeMutablePointer<Float>
    ) {
        let c = configuration
        let h = c.hiddenSize
        let inter = c.intermediateSize
        let heads = c.numAttentionHeads
        let headSize = h / heads
        let maxLength = sequences.map(\.count).max() ?? 0
        let eps = c.layerNormEps

        // Scratch, owned by this call: qkv (t·3h), context and sum (t·h each), intermediate
        // (t·inter), one head's attention scratch (about maxLength·(headSize + 4)). About 4.4 MB
        // for 16 texts of 86 tokens.
        let attentionCount = trove_enc_attention_scratch(maxLength, headSize)
        let scratch = UnsafeMutablePointer<Float>.allocate(
            capacity: 5 * t * h + t * inter + attentionCount)
        defer { scratch.deallocate() }
        let qkv = scratch
        let context = qkv + 3 * t * h
        let sum = context + t * h
        let intermediate = sum + t * h
        let attention = intermediate + t * inter

        embedTokens(sequences, offsets: offsets, into: x)
        let scale = 1 / Float(headSize).squareRoot()
        for (n, layer) in layers.enumerated() {
            let weights = packed.layers[n]
            Self.gemm(
                x, rows: t, inputs: h, packed: weights.queryKeyValue,
                bias: weights.queryKeyValueBias,
                outputs: 3 * h, threads: threads, into: qkv)
            for (s, sequence) in sequences.enumerated() {
                let rows = qkv + offsets[s] * 3 * h
                for head in 0..<heads {
                    let column = head * headSize
                    trove_enc_attention(
                        rows + column, rows + h + column, rows + 2 * h + column, 3 * h,
                        sequence.count, headSize,
                        scale, attention, context + offsets[s] * h + column, h)
                }
            }
            Self.gemm(
                context, rows: t, inputs: h, packed: weights.attentionOutput,
                bias: layer.attentionOutputBias,
                residual: x, outputs: h, threads: threads, into: sum)
            trove_enc_layer_norm(
                sum, t, h, layer.attentionNormWeight, layer.attentionNormBias, eps, x)
            Self.gemm(
                x, rows: t, inputs: h, packed: weights.intermediate, bias: layer.intermediateBias,
                outputs: inter, gelu: true, threads: threads, into: intermediate)
            Self.gemm(
                intermediate, rows: t, inputs: inter, packed: weights.output,
                bias: layer.outputBias,
                residual: x, outputs: h, threads: threads, into: sum)
            trove_enc_layer_norm(sum, t, h, layer.outputNormWeight, layer.outputNormBias, eps, x)
        }
    }

    /// `out = GELU?(input · Wᵀ + bias + residual)` on packed weights; with `threads > 1` the
    /// panels (blocks of 16 output columns) are shared out between threads.
    private static func gemm(
        _ input: UnsafePointer<Float>, rows: Int, inputs: Int, packed: UnsafePointer<Float>,
        bias: UnsafePointer<Float>, residual: UnsafePointer<Float>? = nil, outputs: Int,
        gelu: Bool = false,
        threads: Int, into out: UnsafeMutablePointer<Float>
    ) {
        let flags = gelu ? Int32(TROVE_ENC_GELU) : 0
        let panels = (outputs + 15) / 16
        let parts = min(threads, panels)
        if parts <= 1 {
            trove_enc_gemm(
                rows, outputs, inputs, input, inputs, packed, out, outputs, bias, residual, outputs,
                flags, 0, panels)
            return
        }
        // A few rows (a single query): the cost is streaming the weights, so each thread takes
        // a block of panels, that is a block of weight rows.
        let operands = PanelSplit(
            input: input, packed: packed, bias: bias, residual: residual, out: out)
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            trove_enc_gemm(
                rows, outputs, inputs, operands.input, inputs, operands.packed, operands.out,
                outputs, operands.bias,
                operands.residual, outputs, flags, panels * part / parts,
                panels * (part + 1) / parts)
        }
    }

    /// The operands of a panel-split multiply, passed to the worker threads.
    private struct PanelSplit: @unchecked Sendable {
        // @unchecked Sendable: everything but `out` is only read; each thread writes its own
        // disjoint block of columns of `out`; concurrentPerform returns after every thread is
        // done, so no pointer outlives the buffers it points into.
        let input, packed, bias: UnsafePointer<Float>
        let residual: UnsafePointer<Float>?
        let out: UnsafeMutablePointer<Float>
    }
}
