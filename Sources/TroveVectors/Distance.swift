/// SIMD distance kernels over contiguous `Float` memory.
///
/// Written with `SIMD8<Float>` and four independent accumulators (32 floats per iteration) so
/// the loads and multiply-adds of consecutive iterations overlap; the tail that is not a
/// multiple of 8 is handled with scalar code, so any dimension works. They compile to SSE on
/// the default x86-64 target and to NEON on arm64. `ScalarDistanceKernels` holds the
/// reference implementations the tests compare against.
///
/// ```swift
/// let a: [Float] = [1, 2, 3], b: [Float] = [4, 5, 6]
/// DistanceKernels.dot(a, b)           // 32
/// DistanceKernels.l2Squared(a, b)     // 27
/// ```
public enum DistanceKernels {
    /// The inner product `Σ aᵢ bᵢ` of two vectors of `count` floats.
    ///
    /// - Parameters:
    ///   - a: the first vector's first element.
    ///   - b: the second vector's first element.
    ///   - count: the number of elements in each.
    /// - Returns: the inner product.
    /// - Complexity: O(count).
    @inlinable @inline(__always)
    public static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int)
        -> Float
    {
        var s0 = SIMD8<Float>()
        var s1 = SIMD8<Float>()
        var s2 = SIMD8<Float>()
        var s3 = SIMD8<Float>()
        let ra = UnsafeRawPointer(a)
        let rb = UnsafeRawPointer(b)
        var i = 0
        // Byte offsets: 8 floats = 32 bytes per SIMD8 load.
        while i + 32 <= count {
            let o = i &* 4
            s0 +=
                ra.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            s1 +=
                ra.loadUnaligned(fromByteOffset: o &+ 32, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: o &+ 32, as: SIMD8<Float>.self)
            s2 +=
                ra.loadUnaligned(fromByteOffset: o &+ 64, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: o &+ 64, as: SIMD8<Float>.self)
            s3 +=
                ra.loadUnaligned(fromByteOffset: o &+ 96, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: o &+ 96, as: SIMD8<Float>.self)
            i &+= 32
        }
        while i + 8 <= count {
            let o = i &* 4
            s0 +=
                ra.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            i &+= 8
        }
        var result = ((s0 + s1) + (s2 + s3)).sum()
        while i < count {
            result += a[i] * b[i]
            i &+= 1
        }
        return result
    }

    /// The squared Euclidean distance `Σ (aᵢ - bᵢ)²` of two vectors of `count` floats.
    ///
    /// - Parameters:
    ///   - a: the first vector's first element.
    ///   - b: the second vector's first element.
    ///   - count: the number of elements in each.
    /// - Returns: the squared distance.
    /// - Complexity: O(count).
    @inlinable @inline(__always)
    public static func l2Squared(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int)
        -> Float
    {
        var s0 = SIMD8<Float>()
        var s1 = SIMD8<Float>()
        var s2 = SIMD8<Float>()
        var s3 = SIMD8<Float>()
        let ra = UnsafeRawPointer(a)
        let rb = UnsafeRawPointer(b)
        var i = 0
        while i + 32 <= count {
            let o = i &* 4
            let d0 =
                ra.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            let d1 =
                ra.loadUnaligned(fromByteOffset: o &+ 32, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: o &+ 32, as: SIMD8<Float>.self)
            let d2 =
                ra.loadUnaligned(fromByteOffset: o &+ 64, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: o &+ 64, as: SIMD8<Float>.self)
            let d3 =
                ra.loadUnaligned(fromByteOffset: o &+ 96, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: o &+ 96, as: SIMD8<Float>.self)
            s0 += d0 * d0
            s1 += d1 * d1
            s2 += d2 * d2
            s3 += d3 * d3
            i &+= 32
        }
        while i + 8 <= count {
            let o = i &* 4
            let d =
                ra.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            s0 += d * d
            i &+= 8
        }
        var result = ((s0 + s1) + (s2 + s3)).sum()
        while i < count {
            let d = a[i] - b[i]
            result += d * d
            i &+= 1
        }
        return result
    }

    /// The squared L2 norm `Σ aᵢ²`.
    ///
    /// - Parameters:
    ///   - a: the vector's first element.
    ///   - count: the number of elements.
    /// - Returns: the squared norm.
    /// - Complexity: O(count).
    @inlinable
    public static func normSquared(_ a: UnsafePointer<Float>, count: Int) -> Float {
        dot(a, a, count: count)
    }

    /// The inner product of two arrays of equal length.
    ///
    /// ```swift
    /// DistanceKernels.dot([1, 2], [3, 4])   // 11
    /// ```
    /// - Complexity: O(n).
    public static func dot(_ a: [Float], _ b: [Float]) -> Float {
        precondition(a.count == b.count, "vectors of different dimensions")
        return a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in dot(pa.baseAddress!, pb.baseAddress!, count: a.count)
            }
        }
    }

    /// The squared Euclidean distance of two arrays of equal length.
    ///
    /// ```swift
    /// DistanceKernels.l2Squared([0, 0], [3, 4])   // 25
    /// ```
    /// - Complexity: O(n).
    public static func l2Squared(_ a: [Float], _ b: [Float]) -> Float {
        precondition(a.count == b.count, "vectors of different dimensions")
        return a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                l2Squared(pa.baseAddress!, pb.baseAddress!, count: a.count)
            }
        }
    }

    /// The Euclidean distance of two arrays of equal length.
    ///
    /// ```swift
    /// DistanceKernels.l2([0, 0], [3, 4])   // 5
    /// ```
    /// - Complexity: O(n).
    public static func l2(_ a: [Float], _ b: [Float]) -> Float {
        l2Squared(a, b).squareRoot()
    }

    /// The cosine distance `1 - a·b / (|a| |b|)` of two arrays of equal length; 1 when either is zero.
    ///
    /// ```swift
    /// DistanceKernels.cosineDistance([1, 0], [1, 1])   // ≈ 0.2929
    /// ```
    /// - Complexity: O(n).
    public static func cosineDistance(_ a: [Float], _ b: [Float]) -> Float {
        precondition(a.count == b.count, "vectors of different dimensions")
        return a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                guard let x = pa.baseAddress, let y = pb.baseAddress else { return 1 }
                let ab = dot(x, y, count: a.count)
                let aa = dot(x, x, count: a.count)
                let bb = dot(y, y, count: a.count)
                let denominator = (aa * bb).squareRoot()
                return denominator > 0 ? 1 - ab / denominator : 1
            }
        }
    }

    /// Scales `v` to unit L2 norm in place; a zero vector is left unchanged.
    ///
    /// ```swift
    /// var v: [Float] = [3, 4]
    /// DistanceKernels.normalize(&v)   // [0.6, 0.8]
    /// ```
    /// - Complexity: O(n).
    public static func normalize(_ v: inout [Float]) {
        v.withUnsafeMutableBufferPointer { normalize($0) }
    }

    /// Scales the floats in `v` to unit L2 norm in place; a zero vector stays zero.
    public static func normalize(_ v: UnsafeMutableBufferPointer<Float>) {
        let n = v.count
        guard n > 0 else { return }
        let norm = dot(UnsafePointer(v.baseAddress!), UnsafePointer(v.baseAddress!), count: n)
            .squareRoot()
        guard norm > 0, norm.isFinite else { return }
        let inverse = 1 / norm
        for i in 0..<n { v[i] *= inverse }
    }
}

/// Scalar reference implementations of the distance kernels: one accumulator, one element at a
/// time, so their rounding is simple to reason about. Tests hold the SIMD kernels to these.
///
/// ```swift
/// ScalarDistanceKernels.dot([1, 2, 3], [4, 5, 6])   // 32
/// ```
public enum ScalarDistanceKernels {
    /// The inner product, one element at a time.
    /// - Complexity: O(n).
    public static func dot(_ a: [Float], _ b: [Float]) -> Float {
        precondition(a.count == b.count, "vectors of different dimensions")
        var s: Float = 0
        for i in a.indices { s += a[i] * b[i] }
        return s
    }

    /// The squared Euclidean distance, one element at a time.
    /// - Complexity: O(n).
    public static func l2Squared(_ a: [Float], _ b: [Float]) -> Float {
        precondition(a.count == b.count, "vectors of different dimensions")
        var s: Float = 0
        for i in a.indices {
            let d = a[i] - b[i]
            s += d * d
        }
        return s
    }

    /// The Euclidean distance, one element at a time.
    /// - Complexity: O(n).
    public static func l2(_ a: [Float], _ b: [Float]) -> Float { l2Squared(a, b).squareRoot() }

    /// The cosine distance `1 - cos(a, b)`; 1 when either vector is zero.
    /// - Complexity: O(n).
    public static func cosineDistance(_ a: [Float], _ b: [Float]) -> Float {
        let denominator = (dot(a, a) * dot(b, b)).squareRoot()
        return denominator > 0 ? 1 - dot(a, b) / denominator : 1
    }
}
