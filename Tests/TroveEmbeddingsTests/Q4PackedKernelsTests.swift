import CTroveEncoderKernels
import Foundation
import Testing
import TroveTestSupport

/// The AVX-512 kernels of the e5 encoder (q4_packed.c, accurate_math.c, the AVX2 quantize)
/// against their portable paths: the packed multiply and the quantize bit for bit; GELU against
/// the correctly rounded erf; attention against the libm path. On a CPU without AVX-512 the
/// dispatched functions are the portable ones and the comparisons still hold.
@Suite("Q4PackedKernels")
struct Q4PackedKernelsTests {
    typealias PackedMatMul = (
        UnsafePointer<UInt8>?, UnsafePointer<Float>?, UnsafePointer<Int8>?, UnsafePointer<Float>?,
        UnsafePointer<Int32>?, Int, Int, Int, Int, UnsafeMutablePointer<Float>?, Int
    ) -> Void

    @Test("the packed size is the file's blocks rounded up to groups of 16 rows")
    func packedSize() {
        #expect(trove_q4_packed_bytes(384, 384) == 384 * 384 / 32 * 18)
        #expect(trove_q4_packed_bytes(1, 64) == 16 * 2 * 18)
        #expect(trove_q4_packed_bytes(17, 32) == 32 * 18)
    }

    @Test(
        "packed matmul (dispatched and portable) equals the file-layout portable kernel bit for bit, any shape and output range"
    )
    func packedMatmul() {
        var rng = SeededGenerator(seed: 1515)
        let kernels: [(String, PackedMatMul)] = [
            ("dispatched", trove_q4_packed_matmul), ("portable", trove_q4_packed_portable_matmul),
        ]
        // Token counts around the 8-token tile, output counts around the 16-row group, e5's shapes.
        var shapes: [(rows: Int, outputs: Int, inputs: Int)] = (1...40).map {
            ($0 % 19 + 1, $0 * 3 % 41 + 1, 32 * ($0 % 4 + 1))
        }
        shapes += [(15, 384, 384), (17, 1536, 384), (9, 384, 1536), (33, 48, 64)]
        for (rows, outputs, inputs) in shapes {
            let blocks = Q4KernelsTests.randomBlocks(rows: outputs, columns: inputs, rng: &rng)
            let x = (0..<(rows * inputs)).map { _ in Float.random(in: -3...3, using: &rng) }
            let bias = (0..<outputs).map { _ in Float.random(in: -1...1, using: &rng) }
            var q = [Int8](repeating: 0, count: rows * inputs)
            var d = [Float](repeating: 0, count: rows * inputs / 32)
            var s = [Int32](repeating: 0, count: rows * inputs / 32)
            trove_q8_quantize(x, rows, inputs, &q, &d, &s)
            var packed = [UInt8](repeating: 0xAA, count: trove_q4_packed_bytes(outputs, inputs))
            trove_q4_pack(blocks, outputs, inputs, &packed)
            let stride = outputs + 5
            for withBias in [true, false] {
                var expected = [Float](repeating: .nan, count: rows * stride)
                trove_q4_portable_matmul(
                    blocks, withBias ? bias : nil, q, d, s, rows, inputs, 0, outputs, &expected,
                    stride)
                for (name, kernel) in kernels {
                    // Three output ranges, split off the groups of 16 (as uneven threads would).
                    var y = [Float](repeating: .nan, count: rows * stride)
                    let cuts = [0, outputs / 3, outputs * 2 / 3 + 1, outputs].map {
                        min($0, outputs)
                    }
                    for (begin, end) in zip(cuts, cuts.dropFirst()) {
                        kernel(
                            packed, withBias ? bias : nil, q, d, s, rows, inputs, begin, end, &y,
                            stride)
                    }
                    for t in 0..<rows {
                        for o in 0..<outputs
                        where y[t * stride + o].bitPattern != expected[t * stride + o].bitPattern {
                            Issue.record(
                                "\(name) \(rows)×\(outputs)×\(inputs) [\(t)][\(o)]: \(y[t * stride + o]) vs \(expected[t * stride + o])"
                            )
                            return
                        }
                        #expect(y[t * stride + outputs].isNaN, "\(name) wrote past its outputs")
                    }
                }
            }
        }
    }

    @Test("Q8 quantize (dispatched) equals the portable path bit for bit: codes, scales, sums")
    func quantize() {
        var rng = SeededGenerator(seed: 88)
        let rows = 23
        let n = 1536
        var x = (0..<(rows * n)).map { _ in Float.random(in: -4...4, using: &rng) }
        // An all-zero block, exact halves (rounded to even), one huge and one tiny block.
        for i in 0..<32 { x[i] = 0 }
        for i in 32..<64 { x[i] = Float(i - 48) + 0.5 }
        x[64] = 127  // block 2: scale 1, so the halves below stay halves
        for i in 65..<96 { x[i] = Float(i % 7) - 2.5 }
        for i in 96..<128 { x[i] *= 1e6 }
        for i in 128..<160 { x[i] *= 1e-30 }
        var q0 = [Int8](repeating: 0, count: rows * n)
        var q1 = q0
        var d0 = [Float](repeating: 0, count: rows * n / 32)
        var d1 = d0
        var s0 = [Int32](repeating: 0, count: rows * n / 32)
        var s1 = s0
        trove_q8_portable_quantize(x, rows, n, &q0, &d0, &s0)
        trove_q8_quantize(x, rows, n, &q1, &d1, &s1)
        #expect(q0 == q1)
        #expect(d0.map(\.bitPattern) == d1.map(\.bitPattern))
        #expect(s0 == s1)
        #expect(Array(q1[65..<72]) == [0, 0, 2, 2, 4, -2, -2], "halves round to even")
    }

    @Test(
        "GELU (dispatched) is 0.5·x·(1 + erf(x/√2)) with erf correctly rounded; the portable path is libm's"
    )
    func gelu() {
        var rng = SeededGenerator(seed: 9)
        var x = (0..<100_000).map { _ in Float.random(in: -8...8, using: &rng) }
        x += (-3000...3000).map { Float($0) * 1e-3 } + [0, -0, 1e-30, -1e-30, 5.6, -5.6, 40, -40]
        var y = x
        var portable = x
        trove_q4_gelu(&y, y.count)
        trove_q4_portable_gelu(&portable, portable.count)
        var mismatches = 0
        for (i, value) in x.enumerated() {
            let z = value * Float(0.70710678118654752440)
            let correctlyRounded = 0.5 * value * (1 + Float(erf(Double(z))))
            let libm = 0.5 * value * (1 + erff(z))
            #expect(portable[i].bitPattern == libm.bitPattern)
            if trove_q4_accurate_wide() != 0 {
                // AVX-512 here: the double-precision erf, rounded once.
                if y[i].bitPattern != correctlyRounded.bitPattern { mismatches += 1 }
            } else if y[i].bitPattern != libm.bitPattern {
                mismatches += 1
            }
        }
        #expect(mismatches == 0, "\(mismatches) of \(x.count) values differ")
    }

    @Test(
        "attention (dispatched) matches the libm path to float rounding for lengths 1-100",
        arguments: [16, 32, 24])
    func attention(headSize: Int) {
        var rng = SeededGenerator(seed: UInt64(headSize))
        for length in [1, 2, 7, 15, 16, 17, 31, 33, 100] {
            let ld = 3 * headSize + 5
            let qkv = (0..<(length * ld)).map { _ in Float.random(in: -3...3, using: &rng) }
            var scratch = [Float](
                repeating: 0, count: trove_enc_attention_scratch(length, headSize))
            var expected = [Float](repeating: 0, count: length * headSize)
            var got = expected
            qkv.withUnsafeBufferPointer { m in
                let q = m.baseAddress!
                let k = q + headSize
                let v = q + 2 * headSize
                trove_q4_portable_attention(
                    q, k, v, ld, length, headSize, 0.17, &scratch, &expected, headSize)
                trove_q4_attention(q, k, v, ld, length, headSize, 0.17, &scratch, &got, headSize)
            }
            var identical = 0
            for i in 0..<(length * headSize) {
                if got[i].bitPattern == expected[i].bitPattern { identical += 1 }
                // expf and the correctly rounded exp differ by an ulp in ~0.1% of scores.
                #expect(
                    abs(got[i] - expected[i]) <= 1e-5 * max(1, abs(expected[i])),
                    "length \(length) [\(i)]")
            }
            // Everything but exp is computed in the same order: almost all outputs are identical.
            #expect(
                identical * 10 >= length * headSize * 9,
                "only \(identical) of \(length * headSize) identical")
        }
    }
}
