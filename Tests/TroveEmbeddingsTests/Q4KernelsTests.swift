import CTroveEncoderKernels
import Foundation
import Testing
import TroveTestSupport

/// The 4-bit kernels (q4_kernels.c): the dispatched multiply (AVX2 where the CPU has it) and its
/// portable path against a scalar reference in Double written from the format's definition.
@Suite("Q4Kernels")
struct Q4KernelsTests {
    /// Random Q4_0 blocks: random codes, scales of random halves in a plausible range.
    static func randomBlocks(rows: Int, columns: Int, rng: inout SeededGenerator) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<(rows * columns / 32) {
            let scale = Float16(Float.random(in: 0.001...0.05, using: &rng))
            let bits = scale.bitPattern
            bytes += [UInt8(bits & 0xFF), UInt8(bits >> 8)]
            for _ in 0..<16 { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
        }
        return bytes
    }

    /// Weight i of a row of blocks, from the format's definition: d · (q − 8).
    static func weight(_ blocks: [UInt8], row: Int, columns: Int, _ i: Int) -> Double {
        let block = (row * columns + i) / 32
        let j = i % 32
        let base = block * 18
        let d = Double(
            Float(Float16(bitPattern: UInt16(blocks[base]) | UInt16(blocks[base + 1]) << 8)))
        let byte = blocks[base + 2 + j % 16]
        let q = j < 16 ? Int(byte & 0x0F) : Int(byte >> 4)
        return d * Double(q - 8)
    }

    @Test("half to float agrees with Float16 for all 65,536 bit patterns")
    func halfToFloat() {
        for bits in 0...UInt16.max {
            let expected = Float(Float16(bitPattern: bits))
            let got = trove_q4_half_to_float(bits)
            if expected.isNaN {
                #expect(got.isNaN)
            } else if got != expected {
                Issue.record("half \(bits): \(got) != \(expected)")
                return
            }
        }
    }

    @Test("dequantize gives d · (q − 8) in the documented nibble order")
    func dequantize() {
        var rng = SeededGenerator(seed: 4)
        let blocks = Self.randomBlocks(rows: 3, columns: 64, rng: &rng)
        var out = [Float](repeating: 0, count: 192)
        trove_q4_dequantize(blocks, 192, &out)
        for i in 0..<192 {
            #expect(Double(out[i]) == Self.weight(blocks, row: 0, columns: 192, i))
        }
    }

    @Test("Q8 quantization: scale max|x|/127, codes rounded half to even, block sums")
    func quantize() {
        var x = [Float](repeating: 0, count: 64)
        // Block 0: max |x| = 127, so the scale is 1 and the codes are x rounded half to even.
        x[0] = 127
        x[1] = 2.5
        x[2] = 3.5
        x[3] = -2.5
        x[4] = 0.49
        x[5] = -126.6
        // Block 1: a negative largest magnitude.
        x[40] = -2
        x[41] = 1
        var q = [Int8](repeating: 0, count: 64)
        var d = [Float](repeating: 0, count: 2)
        var s = [Int32](repeating: 0, count: 2)
        trove_q8_quantize(x, 1, 64, &q, &d, &s)
        #expect(d[0] == 1 && d[1] == 2 / 127)
        #expect(Array(q[0..<6]) == [127, 2, 4, -2, 0, -127])
        #expect(q[40] == -127 && q[41] == 64)
        #expect(s[0] == 127 + 2 + 4 - 2 - 127 && s[1] == -127 + 64)
        // An all-zero block: scale 0, codes 0.
        var zeros = [Float](repeating: 0, count: 32)
        trove_q8_quantize(&zeros, 1, 32, &q, &d, &s)
        #expect(d[0] == 0 && q[0..<32].allSatisfy { $0 == 0 } && s[0] == 0)
    }

    typealias MatMul = (
        UnsafePointer<UInt8>?, UnsafePointer<Float>?, UnsafePointer<Int8>?, UnsafePointer<Float>?,
        UnsafePointer<Int32>?, Int, Int, Int, Int, UnsafeMutablePointer<Float>?, Int
    ) -> Void

    @Test(
        "matmul (dispatched and portable) matches the Double reference for every output count 1-70 and e5's shapes"
    )
    func matmul() {
        var rng = SeededGenerator(seed: 15)
        let kernels: [(String, MatMul)] = [
            ("dispatched", trove_q4_matmul), ("portable", trove_q4_portable_matmul),
        ]
        var shapes: [(rows: Int, outputs: Int, inputs: Int)] = (1...70).map {
            (($0 % 5) + 1, $0, 32 * (($0 % 3) + 1))
        }
        shapes += [(20, 384, 384), (3, 1536, 384), (7, 384, 1536)]
        for (rows, outputs, inputs) in shapes {
            let blocks = Self.randomBlocks(rows: outputs, columns: inputs, rng: &rng)
            let x = (0..<(rows * inputs)).map { _ in Float.random(in: -3...3, using: &rng) }
            let bias = (0..<outputs).map { _ in Float.random(in: -1...1, using: &rng) }
            var q = [Int8](repeating: 0, count: rows * inputs)
            var d = [Float](repeating: 0, count: rows * inputs / 32)
            var s = [Int32](repeating: 0, count: rows * inputs / 32)
            trove_q8_quantize(x, rows, inputs, &q, &d, &s)
            // The reference: the dequantized weights times the dequantized activations, in Double.
            var expected = [Double](repeating: 0, count: rows * outputs)
            for t in 0..<rows {
                for o in 0..<outputs {
                    var acc = Double(bias[o])
                    for i in 0..<inputs {
                        acc +=
                            Self.weight(blocks, row: o, columns: inputs, i)
                            * Double(d[t * inputs / 32 + i / 32])
                            * Double(q[t * inputs + i])
                    }
                    expected[t * outputs + o] = acc
                }
            }
            for (name, kernel) in kernels {
                // Written with a wider stride, in two output ranges (as two threads would).
                let stride = outputs + 3
                var y = [Float](repeating: .nan, count: rows * stride)
                let split = outputs / 2
                kernel(blocks, bias, q, d, s, rows, inputs, 0, split, &y, stride)
                kernel(blocks, bias, q, d, s, rows, inputs, split, outputs, &y, stride)
                for t in 0..<rows {
                    for o in 0..<outputs {
                        let e = expected[t * outputs + o]
                        let got = Double(y[t * stride + o])
                        if !(abs(got - e) <= 1e-4 * max(1, abs(e))) {
                            Issue.record(
                                "\(name) \(rows)×\(outputs)×\(inputs) [\(t)][\(o)]: \(got) vs \(e)")
                            return
                        }
                    }
                    #expect(y[t * stride + outputs].isNaN, "wrote past its outputs")
                }
            }
            // Without bias.
            var y = [Float](repeating: 0, count: rows * outputs)
            trove_q4_matmul(blocks, nil, q, d, s, rows, inputs, 0, outputs, &y, outputs)
            #expect(
                abs(Double(y[0]) - (expected[0] - Double(bias[0]))) <= 1e-4
                    * max(1, abs(expected[0])))
        }
    }
}
