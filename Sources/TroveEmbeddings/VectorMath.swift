// Element-wise math for the encoder: exp (softmax), erf (GELU), LayerNorm.
//
// Why not libm: expf/erff are opaque scalar calls; profiling the encoder showed them at about a
// fifth of the run time. These versions are branch-free scalar code with no calls, which the
// release build's loop vectoriser turns into SSE2 (default x86-64 target) or NEON code, and
// which stays reasonably fast in debug builds (explicit SIMD types are not: in a debug build
// every SIMD operation is a generic call, which made the test suite many times slower).

enum VectorMath {
    /// e^x, Cephes-style: x = n·ln2 + r with |r| ≤ ln2/2, a degree-6 polynomial for e^r, then
    /// the exponent bits set to n. Relative error about 2e-7 over the clamped range; inputs
    /// below -87.3 give about 1e-38 rather than 0.
    @inline(__always)
    static func exp(_ value: Float) -> Float {
        var x = value < -87.3 ? -87.3 : value
        x = x > 88.7 ? 88.7 : x
        // Round x·log2(e) to the nearest integer with the 1.5·2^23 trick (no SSE4.1 `round`).
        let t = x * 1.442_695_04 + 12_582_912
        let n = t - 12_582_912
        let nBits = Int32(bitPattern: t.bitPattern) &- 0x4B40_0000
        var r = x - n * 0.693_359_375
        r = r + n * 2.121_944_4e-4
        var p: Float = 1.987_569_15e-4
        p = p * r + 1.398_199_95e-3
        p = p * r + 8.333_451_9e-3
        p = p * r + 4.166_579_59e-2
        p = p * r + 1.666_666_55e-1
        p = p * r + 5.000_000_12e-1
        let y = p * (r * r) + r + 1
        let scale = Float(bitPattern: UInt32(bitPattern: (nBits &+ 127) &<< 23))
        return y * scale
    }

    /// erf(x), Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5e-7).
    @inline(__always)
    static func erf(_ x: Float) -> Float {
        let a = Float(bitPattern: x.bitPattern & 0x7FFF_FFFF)
        let t = 1 / (1 + 0.327_591_1 * a)
        var p: Float = 1.061_405_429
        p = p * t - 1.453_152_027
        p = p * t + 1.421_413_741
        p = p * t - 0.284_496_736
        p = p * t + 0.254_829_592
        let y = 1 - p * t * exp(-a * a)
        // Copy x's sign onto y (y ≥ 0), branch-free.
        return Float(bitPattern: y.bitPattern | (x.bitPattern & 0x8000_0000))
    }

    /// GELU in BERT's erf form, `x/2 · (1 + erf(x/√2))`, in place.
    static func gelu(_ values: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count {
            let x = values[i]
            values[i] = 0.5 * x * (1 + erf(x * 0.707_106_77))
        }
    }

    /// Row-wise softmax of `scale · row`, in place.
    static func softmaxRows(_ m: UnsafeMutablePointer<Float>, rows: Int, width: Int, scale: Float) {
        for r in 0..<rows {
            let row = m + r * width
            var maximum = -Float.infinity
            for j in 0..<width where row[j] > maximum { maximum = row[j] }
            // Separate loops: the exp loop vectorises, the sum (a strict-order reduction) does not.
            for j in 0..<width { row[j] = exp((row[j] - maximum) * scale) }
            var total: Float = 0
            for j in 0..<width { total += row[j] }
            let inverse = 1 / total
            for j in 0..<width { row[j] *= inverse }
        }
    }

    /// LayerNorm of one row, `(x - mean) / sqrt(var + eps) · weight + bias`, written to `out`
    /// (which may be `row` itself).
    static func layerNorm(
        _ row: UnsafePointer<Float>, width: Int, weight: UnsafePointer<Float>,
        bias: UnsafePointer<Float>,
        eps: Float, into out: UnsafeMutablePointer<Float>
    ) {
        // Four partial sums: shorter dependency chains than one running sum.
        var s0: Float = 0
        var s1: Float = 0
        var s2: Float = 0
        var s3: Float = 0
        var j = 0
        while j + 4 <= width {
            s0 += row[j]
            s1 += row[j + 1]
            s2 += row[j + 2]
            s3 += row[j + 3]
            j += 4
        }
        while j < width {
            s0 += row[j]
            j += 1
        }
        let mean = (s0 + s1 + s2 + s3) / Float(width)
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        j = 0
        while j + 4 <= width {
            let d0 = row[j] - mean
            let d1 = row[j + 1] - mean
            let d2 = row[j + 2] - mean
            let d3 = row[j + 3] - mean
            s0 += d0 * d0
            s1 += d1 * d1
            s2 += d2 * d2
            s3 += d3 * d3
            j += 4
        }
        while j < width {
            s0 += (row[j] - mean) * (row[j] - mean)
            j += 1
        }
        let inverse = 1 / ((s0 + s1 + s2 + s3) / Float(width) + eps).squareRoot()
        for k in 0..<width { out[k] = (row[k] - mean) * inverse * weight[k] + bias[k] }
    }
}
