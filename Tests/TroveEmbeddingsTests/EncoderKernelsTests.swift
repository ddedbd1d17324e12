import CTroveEncoderKernels
import Foundation
import Testing
import TroveTestSupport

@testable import TroveEmbeddings

/// The native encoder kernels (dispatched: AVX2/FMA where the CPU has them) and their portable
/// paths, each held to a scalar reference in Double.
@Suite("EncoderKernels")
struct EncoderKernelsTests {
    typealias Gemm = (
        Int, Int, Int, UnsafePointer<Float>?, Int, UnsafePointer<Float>?,
        UnsafeMutablePointer<Float>?, Int,
        UnsafePointer<Float>?, UnsafePointer<Float>?, Int, Int32, Int, Int
    ) -> Void

    static func geluReference(_ x: Double) -> Double {
        0.5 * x * (1 + Foundation.erf(x / 2.0.squareRoot()))
    }

    @Test("gemm on packed weights matches a scalar reference, with every epilogue and edge size")
    func gemm() {
        var rng = SeededGenerator(seed: 21)
        let gemms: [(String, Gemm)] = [
            ("dispatched", trove_enc_gemm), ("portable", trove_enc_portable_gemm),
        ]
        // Rows around the 6-row tile and the 48-row block, columns around the 16-wide panel,
        // depths around the 384-step k block.
        let shapes = [
            (1, 1, 1), (5, 15, 7), (6, 16, 8), (7, 17, 33), (13, 40, 385), (49, 33, 64),
            (50, 48, 800),
            (12, 384, 24),
        ]
        for (m, n, k) in shapes {
            let a = rng.vector(dimension: m * (k + 3))  // lda = k + 3: A read with a stride
            let w = rng.vector(dimension: n * k)
            let bias = rng.vector(dimension: n)
            let residual = rng.vector(dimension: m * n)
            let start = rng.vector(dimension: m * n)
            let packed = w.withUnsafeBufferPointer {
                MatrixMultiplier.pack($0.baseAddress!, ldb: k, transposeB: true, n: n, k: k)
            }
            defer { packed.deallocate() }
            var product = [Double](repeating: 0, count: m * n)
            for i in 0..<m {
                for j in 0..<n {
                    for p in 0..<k {
                        product[i * n + j] += Double(a[i * (k + 3) + p]) * Double(w[j * k + p])
                    }
                }
            }
            for flags in 0..<16 {
                let accumulate = flags & 1 != 0
                let gelu = flags & 2 != 0
                let useBias = flags & 4 != 0
                let useResidual = flags & 8 != 0
                var expected = [Double](repeating: 0, count: m * n)
                for i in 0..<m {
                    for j in 0..<n {
                        var s = product[i * n + j] + (accumulate ? Double(start[i * n + j]) : 0)
                        if useBias { s += Double(bias[j]) }
                        if useResidual { s += Double(residual[i * n + j]) }
                        expected[i * n + j] = gelu ? Self.geluReference(s) : s
                    }
                }
                let cFlags = Int32(
                    (accumulate ? TROVE_ENC_ACCUMULATE : 0) | (gelu ? TROVE_ENC_GELU : 0))
                for (name, function) in gemms {
                    let panels = (n + 15) / 16
                    // All panels at once, and split in two ranges as the threads do.
                    for split in Set([0, panels / 2]) {
                        var c = start
                        a.withUnsafeBufferPointer { a in
                            bias.withUnsafeBufferPointer { bias in
                                residual.withUnsafeBufferPointer { residual in
                                    c.withUnsafeMutableBufferPointer { c in
                                        for (first, last) in [(0, split), (split, panels)]
                                        where first < last {
                                            function(
                                                m, n, k, a.baseAddress, k + 3, packed,
                                                c.baseAddress, n,
                                                useBias ? bias.baseAddress : nil,
                                                useResidual ? residual.baseAddress : nil,
                                                n, cFlags, first, last)
                                        }
                                    }
                                }
                            }
                        }
                        var worst: Double = 0
                        for index in c.indices {
                            worst = max(worst, abs(Double(c[index]) - expected[index]))
                        }
                        // Float accumulation over k terms of size <= 1.
                        #expect(
                            worst < 2e-6 * Double(k) + 1e-5,
                            "\(name) \(m)x\(n)x\(k) flags \(flags): \(worst)")
                    }
                }
            }
        }
    }

    @Test(
        "gemm (dispatched: AVX-512 where the CPU has it) equals the AVX2 path bit for bit, every epilogue and edge"
    )
    func gemmMatchesAVX2() {
        var rng = SeededGenerator(seed: 512)
        // Rows around the 12-row tile and the 48-row block, columns around the 16-wide panel,
        // depths around the 256-step k block.
        let shapes = [
            (1, 1, 1), (11, 17, 7), (12, 16, 300), (13, 40, 257), (25, 33, 513), (49, 48, 64),
            (60, 384, 384),
        ]
        for (m, n, k) in shapes {
            let a = rng.vector(dimension: m * (k + 3))
            let w = rng.vector(dimension: n * k)
            let bias = rng.vector(dimension: n)
            let residual = rng.vector(dimension: m * n)
            let start = rng.vector(dimension: m * n)
            let packed = w.withUnsafeBufferPointer {
                MatrixMultiplier.pack($0.baseAddress!, ldb: k, transposeB: true, n: n, k: k)
            }
            defer { packed.deallocate() }
            let panels = (n + 15) / 16
            for flags in 0..<16 {
                let cFlags = Int32(
                    (flags & 1 != 0 ? TROVE_ENC_ACCUMULATE : 0)
                        | (flags & 2 != 0 ? TROVE_ENC_GELU : 0))
                var results: [[Float]] = []
                for function in [trove_enc_avx2_gemm, trove_enc_gemm] as [Gemm] {
                    var c = start
                    c.withUnsafeMutableBufferPointer { c in
                        // Split in two panel ranges, as the threads do.
                        for (first, last) in [(0, panels / 2), (panels / 2, panels)]
                        where first < last {
                            function(
                                m, n, k, a, k + 3, packed, c.baseAddress, n,
                                flags & 4 != 0 ? bias : nil,
                                flags & 8 != 0 ? residual : nil, n, cFlags, first, last)
                        }
                    }
                    results.append(c)
                }
                #expect(
                    results[0].map(\.bitPattern) == results[1].map(\.bitPattern),
                    "\(m)x\(n)x\(k) flags \(flags)")
            }
        }
    }

    @Test("fused attention matches softmax(scale·QKᵀ)·V in Double")
    func attention() {
        var rng = SeededGenerator(seed: 22)
        typealias Attention = (
            UnsafePointer<Float>?, UnsafePointer<Float>?, UnsafePointer<Float>?, Int, Int, Int,
            Float,
            UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?, Int
        ) -> Void
        let functions: [(String, Attention)] = [
            ("dispatched", trove_enc_attention), ("portable", trove_enc_portable_attention),
        ]
        // Head sizes: multiples of 8 (the wide path, one and several 32-column blocks) and not.
        for (length, headSize) in [
            (1, 8), (2, 32), (3, 32), (5, 40), (8, 32), (9, 64), (17, 12), (33, 32), (86, 32),
        ] {
            let ld = 3 * headSize + 5
            let q = rng.vector(dimension: length * ld).map { $0 * 3 }
            let k = rng.vector(dimension: length * ld).map { $0 * 3 }
            let v = rng.vector(dimension: length * ld)
            let scale = 1 / Float(headSize).squareRoot()
            var expected = [Double](repeating: 0, count: length * headSize)
            for i in 0..<length {
                var scores = (0..<length).map { j in
                    (0..<headSize).reduce(0.0) {
                        $0 + Double(q[i * ld + $1]) * Double(k[j * ld + $1])
                    } * Double(scale)
                }
                let maximum = scores.max()!
                scores = scores.map { Foundation.exp($0 - maximum) }
                let total = scores.reduce(0, +)
                for d in 0..<headSize {
                    expected[i * headSize + d] =
                        (0..<length).reduce(0.0) { $0 + scores[$1] * Double(v[$1 * ld + d]) }
                        / total
                }
            }
            for (name, function) in functions {
                var scratch = [Float](
                    repeating: .nan, count: trove_enc_attention_scratch(length, headSize))
                // Output rows with a stride, NaN between them: nothing outside a row is written.
                let ldo = headSize + 3
                var out = [Float](repeating: .nan, count: length * ldo)
                function(q, k, v, ld, length, headSize, scale, &scratch, &out, ldo)
                var worst: Double = 0
                for i in 0..<length {
                    for d in 0..<headSize {
                        worst = max(
                            worst, abs(Double(out[i * ldo + d]) - expected[i * headSize + d]))
                    }
                    for d in headSize..<ldo { #expect(out[i * ldo + d].isNaN) }
                }
                #expect(worst < 1e-5, "\(name) length \(length) head \(headSize): \(worst)")
            }
        }
    }

    @Test("LayerNorm matches the Swift reference")
    func layerNorm() {
        var rng = SeededGenerator(seed: 23)
        for width in [1, 7, 8, 16, 17, 31, 384] {
            let rows = 3
            let x = rng.vector(dimension: rows * width).map { $0 * 4 + 1 }
            let w = rng.vector(dimension: width)
            let b = rng.vector(dimension: width)
            var expected = [Float](repeating: 0, count: rows * width)
            for r in 0..<rows {
                x.withUnsafeBufferPointer { x in
                    expected.withUnsafeMutableBufferPointer { out in
                        VectorMath.layerNorm(
                            x.baseAddress! + r * width, width: width, weight: w, bias: b,
                            eps: 1e-12,
                            into: out.baseAddress! + r * width)
                    }
                }
            }
            for portable in [false, true] {
                var out = [Float](repeating: .nan, count: rows * width)
                if portable {
                    trove_enc_portable_layer_norm(x, rows, width, w, b, 1e-12, &out)
                } else {
                    trove_enc_layer_norm(x, rows, width, w, b, 1e-12, &out)
                }
                #expect(
                    maxAbsDifference(out, expected) < 1e-5, "width \(width) portable \(portable)")
            }
        }
    }

    @Test("GELU matches the erf form within 5e-7 relative to |x| + 1")
    func gelu() {
        var values = stride(from: Float(-9), to: 9, by: 0.0131).map { $0 }
        let inputs = values
        trove_enc_gelu(&values, values.count)
        for (x, y) in zip(inputs, values) {
            #expect(
                abs(Double(y) - Self.geluReference(Double(x))) <= 5e-7 * (Double(abs(x)) + 1),
                "x = \(x)")
        }
    }

    @Test("packing lays out panels of 16 columns, k-major, zero-padded", arguments: [false, true])
    func pack(_ transposed: Bool) {
        var rng = SeededGenerator(seed: 24)
        let n = 21
        let k = 5
        let b = rng.vector(dimension: n * k)
        let packed = b.withUnsafeBufferPointer {
            MatrixMultiplier.pack(
                $0.baseAddress!, ldb: transposed ? k : n, transposeB: transposed, n: n, k: k)
        }
        defer { packed.deallocate() }
        #expect(trove_enc_packed_count(n, k) == 32 * k)
        for panel in 0..<2 {
            for p in 0..<k {
                for j in 0..<16 {
                    let column = panel * 16 + j
                    let value =
                        column < n ? (transposed ? b[column * k + p] : b[p * n + column]) : 0
                    #expect(packed[(panel * k + p) * 16 + j] == value)
                }
            }
        }
    }
}
