import CTroveKernels

/// The kernels the indexes use on their hot paths: the C AVX2/FMA versions when the CPU has
/// them (chosen at run time, see `CTroveKernels.h`), otherwise the Swift SIMD kernels
/// (SSE2 on a default x86-64 build, NEON on arm64).
///
/// Why C at all: a library cannot raise its users' compile target, and on the default x86-64
/// target Swift's `SIMD8<Float>` becomes pairs of SSE instructions without FMA. Measured in
/// BENCHMARKS.md.
enum NativeKernels {
    /// Whether the wide (AVX2/FMA) C kernels are used.
    static let wide: Bool = {
        #if arch(x86_64)
            return trove_kernels_wide() != 0
        #else
            return false
        #endif
    }()

    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
        wide ? trove_dot(a, b, count) : DistanceKernels.dot(a, b, count: count)
    }

    @inline(__always)
    static func l2Squared(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float
    {
        wide ? trove_l2sq(a, b, count) : DistanceKernels.l2Squared(a, b, count: count)
    }

    /// `out[r] = q · rows[r]` for `rowCount` contiguous rows of `count` floats.
    @inline(__always)
    static func dotRows(
        _ q: UnsafePointer<Float>, _ rows: UnsafePointer<Float>, rowCount: Int, count: Int,
        into out: UnsafeMutablePointer<Float>
    ) {
        if wide {
            trove_dot_rows(q, rows, rowCount, count, out)
        } else {
            portable(runLength: rowCount, into: out) {
                DistanceKernels.dot(q, rows + $0 &* count, count: count)
            }
        }
    }

    /// `out[r] = |q - rows[r]|²` for `rowCount` contiguous rows of `count` floats.
    @inline(__always)
    static func l2SquaredRows(
        _ q: UnsafePointer<Float>, _ rows: UnsafePointer<Float>, rowCount: Int, count: Int,
        into out: UnsafeMutablePointer<Float>
    ) {
        if wide {
            trove_l2sq_rows(q, rows, rowCount, count, out)
        } else {
            portable(runLength: rowCount, into: out) {
                DistanceKernels.l2Squared(q, rows + $0 &* count, count: count)
            }
        }
    }

    /// `out[j × rowCount + r] = q · rows[j × stride + r]` for `streams` runs of `rowCount` rows,
    /// `stride` rows apart, read side by side.
    @inline(__always)
    static func dotRowStreams(
        _ q: UnsafePointer<Float>, _ rows: UnsafePointer<Float>, rowCount: Int, stride: Int,
        streams: Int,
        count: Int, into out: UnsafeMutablePointer<Float>
    ) {
        if wide {
            trove_dot_rows_streams(q, rows, rowCount, stride, streams, count, out)
        } else {
            portable(runLength: rowCount, stride: stride, streams: streams, into: out) {
                DistanceKernels.dot(q, rows + $0 &* count, count: count)
            }
        }
    }

    /// `out[j × rowCount + r] = |q - rows[j × stride + r]|²`, laid out as `dotRowStreams`.
    @inline(__always)
    static func l2SquaredRowStreams(
        _ q: UnsafePointer<Float>, _ rows: UnsafePointer<Float>, rowCount: Int, stride: Int,
        streams: Int,
        count: Int, into out: UnsafeMutablePointer<Float>
    ) {
        if wide {
            trove_l2sq_rows_streams(q, rows, rowCount, stride, streams, count, out)
        } else {
            portable(runLength: rowCount, stride: stride, streams: streams, into: out) {
                DistanceKernels.l2Squared(q, rows + $0 &* count, count: count)
            }
        }
    }

    /// `out[j × slotCount + r] = q · rows[slots[j × stride + r]]` for `streams` runs of
    /// `slotCount` slots, `stride` slots apart in `slots`: rows picked by slot.
    @inline(__always)
    static func dotGather(
        _ q: UnsafePointer<Float>, _ base: UnsafePointer<Float>, slots: UnsafePointer<UInt32>,
        slotCount: Int,
        stride: Int = 0, streams: Int = 1, count: Int, into out: UnsafeMutablePointer<Float>
    ) {
        if wide {
            trove_dot_gather(q, base, slots, slotCount, stride, streams, count, out)
        } else {
            portable(runLength: slotCount, stride: stride, streams: streams, into: out) {
                DistanceKernels.dot(q, base + Int(slots[$0]) &* count, count: count)
            }
        }
    }

    /// `out[j × slotCount + r] = |q - rows[slots[j × stride + r]]|²`, laid out as `dotGather`.
    @inline(__always)
    static func l2SquaredGather(
        _ q: UnsafePointer<Float>, _ base: UnsafePointer<Float>, slots: UnsafePointer<UInt32>,
        slotCount: Int,
        stride: Int = 0, streams: Int = 1, count: Int, into out: UnsafeMutablePointer<Float>
    ) {
        if wide {
            trove_l2sq_gather(q, base, slots, slotCount, stride, streams, count, out)
        } else {
            portable(runLength: slotCount, stride: stride, streams: streams, into: out) {
                DistanceKernels.l2Squared(q, base + Int(slots[$0]) &* count, count: count)
            }
        }
    }

    /// The Swift path of the batch kernels: `out[j × runLength + r] = score(j × stride + r)` for
    /// `streams` runs of `runLength` items, `stride` items apart (the C kernels' layout).
    @inline(__always)
    private static func portable(
        runLength: Int, stride: Int = 0, streams: Int = 1, into out: UnsafeMutablePointer<Float>,
        _ score: (Int) -> Float
    ) {
        for r in 0..<runLength {
            for j in 0..<streams { out[j &* runLength &+ r] = score(j &* stride &+ r) }
        }
    }

    /// Exact int8 inner product.
    @inline(__always)
    static func dotInt8(_ a: UnsafePointer<Int8>, _ b: UnsafePointer<Int8>, count: Int) -> Int32 {
        trove_dot_i8(a, b, count)
    }

    /// Hamming distance of `words` 64-bit words.
    @inline(__always)
    static func hamming(_ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>, words: Int)
        -> UInt32
    {
        trove_hamming(a, b, words)
    }
}
