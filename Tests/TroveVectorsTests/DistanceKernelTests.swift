import Testing
import TroveTestSupport

@testable import TroveVectors

@Suite("DistanceKernels")
struct DistanceKernelTests {
    static let dimensions = Array(1...70) + [384, 768, 1536]

    // SIMD sums in a different order than the scalar loop; the error bound grows with n and
    // with the magnitude of the terms, so the tolerance is relative to Σ|aᵢbᵢ|.
    static func close(_ x: Float, _ y: Float, magnitude: Float) -> Bool {
        abs(x - y) <= 1e-5 * max(1, magnitude)
    }

    @Test("SIMD kernels equal the scalar reference", arguments: dimensions)
    func simdMatchesScalar(dimension: Int) {
        var rng = SeededGenerator(seed: UInt64(dimension))
        for _ in 0..<5 {
            let a = rng.vector(dimension: dimension).map { $0 * 3 }
            let b = rng.vector(dimension: dimension)
            let magnitude = zip(a, b).reduce(Float(0)) { $0 + abs($1.0 * $1.1) }
            let l2magnitude = zip(a, b).reduce(Float(0)) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
            #expect(
                Self.close(
                    DistanceKernels.dot(a, b), ScalarDistanceKernels.dot(a, b), magnitude: magnitude
                ))
            #expect(
                Self.close(
                    DistanceKernels.l2Squared(a, b), ScalarDistanceKernels.l2Squared(a, b),
                    magnitude: l2magnitude))
            #expect(
                Self.close(
                    DistanceKernels.l2(a, b), ScalarDistanceKernels.l2(a, b),
                    magnitude: l2magnitude.squareRoot()))
            #expect(
                Self.close(
                    DistanceKernels.cosineDistance(a, b),
                    ScalarDistanceKernels.cosineDistance(a, b), magnitude: 1))
        }
    }

    @Test("Kernels on known values")
    func knownValues() {
        #expect(DistanceKernels.dot([1, 2, 3], [4, 5, 6]) == 32)
        #expect(DistanceKernels.l2Squared([1, 2, 3], [4, 5, 6]) == 27)
        #expect(DistanceKernels.l2([0, 0], [3, 4]) == 5)
        #expect(abs(DistanceKernels.cosineDistance([1, 0], [0, 1]) - 1) < 1e-6)
        #expect(abs(DistanceKernels.cosineDistance([2, 0], [5, 0])) < 1e-6)
        #expect(DistanceKernels.cosineDistance([0, 0], [1, 1]) == 1)
    }

    @Test("normalize gives unit length and leaves zero alone")
    func normalize() {
        var v: [Float] = [3, 4]
        DistanceKernels.normalize(&v)
        #expect(abs(v[0] - 0.6) < 1e-6 && abs(v[1] - 0.8) < 1e-6)
        var zero: [Float] = [0, 0, 0]
        DistanceKernels.normalize(&zero)
        #expect(zero == [0, 0, 0])
    }

    @Test("Metric distances and scores", arguments: DistanceMetric.allCases)
    func metricScore(metric: DistanceMetric) {
        let a: [Float] = [1, 2]
        let b: [Float] = [2, 1]
        let d = metric.distance(a, b)
        switch metric {
        case .cosine:
            #expect(abs(metric.score(distance: d) - 0.8) < 1e-6)
        case .dot:
            #expect(d == -4 && metric.score(distance: d) == 4)
        case .l2:
            #expect(abs(d - Float(2).squareRoot()) < 1e-6 && metric.score(distance: d) == -d)
        }
    }
}

@Suite("TopK")
struct TopKTests {
    @Test("Keeps the k smallest, ties by smaller id", arguments: [0, 1, 5, 50, 200])
    func selection(k: Int) {
        var rng = SeededGenerator(seed: 9)
        var top = TopK(k: k)
        var all: [Neighbor] = []
        for id in Int64(0)..<150 {
            // Few distinct distances so ties are common.
            let d = Float(Int.random(in: 0..<20, using: &rng))
            all.append(Neighbor(id: id, distance: d))
        }
        for n in all.shuffled(using: &rng) { top.insert(id: n.id, distance: n.distance) }
        let expected = all.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }.prefix(k)
        #expect(top.sortedResults() == Array(expected))
    }
}

@Suite("NativeKernels")
struct NativeKernelTests {
    @Test(
        "Run-time dispatched kernels equal the scalar reference",
        arguments: DistanceKernelTests.dimensions)
    func nativeMatchesScalar(dimension: Int) {
        var rng = SeededGenerator(seed: 1000 + UInt64(dimension))
        let rowCount = 5
        let q = rng.vector(dimension: dimension)
        let rows = (0..<rowCount).map { _ in rng.vector(dimension: dimension) }
        let flat = rows.flatMap { $0 }
        var dots = [Float](repeating: 0, count: rowCount)
        var l2s = dots
        q.withUnsafeBufferPointer { qp in
            flat.withUnsafeBufferPointer { fp in
                dots.withUnsafeMutableBufferPointer { out in
                    NativeKernels.dotRows(
                        qp.baseAddress!, fp.baseAddress!, rowCount: rowCount, count: dimension,
                        into: out.baseAddress!)
                }
                l2s.withUnsafeMutableBufferPointer { out in
                    NativeKernels.l2SquaredRows(
                        qp.baseAddress!, fp.baseAddress!, rowCount: rowCount, count: dimension,
                        into: out.baseAddress!)
                }
            }
        }
        for (r, row) in rows.enumerated() {
            let magnitude = zip(q, row).reduce(Float(0)) { $0 + abs($1.0 * $1.1) }
            let single = q.withUnsafeBufferPointer { a in
                row.withUnsafeBufferPointer { b in
                    (
                        NativeKernels.dot(a.baseAddress!, b.baseAddress!, count: dimension),
                        NativeKernels.l2Squared(a.baseAddress!, b.baseAddress!, count: dimension)
                    )
                }
            }
            let refDot = ScalarDistanceKernels.dot(q, row)
            let refL2 = ScalarDistanceKernels.l2Squared(q, row)
            #expect(DistanceKernelTests.close(dots[r], refDot, magnitude: magnitude))
            #expect(DistanceKernelTests.close(single.0, refDot, magnitude: magnitude))
            #expect(DistanceKernelTests.close(l2s[r], refL2, magnitude: refL2))
            #expect(DistanceKernelTests.close(single.1, refL2, magnitude: refL2))
        }
        // Runs of rows read side by side: 3 runs of 2 rows, 2 rows apart, over rows 0...4 (the
        // runs overlap when stride < count; the layout must hold all the same).
        for (runLength, stride, streams) in [(2, 2, 2), (1, 2, 3), (2, 1, 3), (5, 0, 1)] {
            var sDots = [Float](repeating: 0, count: runLength * streams)
            var sL2s = sDots
            q.withUnsafeBufferPointer { qp in
                flat.withUnsafeBufferPointer { fp in
                    sDots.withUnsafeMutableBufferPointer { out in
                        NativeKernels.dotRowStreams(
                            qp.baseAddress!, fp.baseAddress!, rowCount: runLength, stride: stride,
                            streams: streams, count: dimension, into: out.baseAddress!)
                    }
                    sL2s.withUnsafeMutableBufferPointer { out in
                        NativeKernels.l2SquaredRowStreams(
                            qp.baseAddress!, fp.baseAddress!, rowCount: runLength,
                            stride: stride, streams: streams, count: dimension,
                            into: out.baseAddress!)
                    }
                }
            }
            for j in 0..<streams {
                for r in 0..<runLength {
                    let row = rows[j * stride + r]
                    let magnitude = zip(q, row).reduce(Float(0)) { $0 + abs($1.0 * $1.1) }
                    let refL2 = ScalarDistanceKernels.l2Squared(q, row)
                    #expect(
                        DistanceKernelTests.close(
                            sDots[j * runLength + r], ScalarDistanceKernels.dot(q, row),
                            magnitude: magnitude))
                    #expect(
                        DistanceKernelTests.close(sL2s[j * runLength + r], refL2, magnitude: refL2))
                }
            }
        }
        // Rows picked by slot: out of order, repeated, more slots than the prefetch distance; as
        // one run and as 2 or 3 runs side by side.
        let slots: [UInt32] = [4, 0, 3, 3, 1, 2, 4, 0, 2]
        for (runLength, stride, streams) in [(9, 0, 1), (4, 4, 2), (3, 3, 3), (2, 3, 3)] {
            var gDots = [Float](repeating: 0, count: runLength * streams)
            var gL2s = gDots
            q.withUnsafeBufferPointer { qp in
                flat.withUnsafeBufferPointer { fp in
                    gDots.withUnsafeMutableBufferPointer { out in
                        NativeKernels.dotGather(
                            qp.baseAddress!, fp.baseAddress!, slots: slots, slotCount: runLength,
                            stride: stride, streams: streams, count: dimension,
                            into: out.baseAddress!)
                    }
                    gL2s.withUnsafeMutableBufferPointer { out in
                        NativeKernels.l2SquaredGather(
                            qp.baseAddress!, fp.baseAddress!, slots: slots,
                            slotCount: runLength, stride: stride, streams: streams,
                            count: dimension, into: out.baseAddress!)
                    }
                }
            }
            for j in 0..<streams {
                for r in 0..<runLength {
                    let row = rows[Int(slots[j * stride + r])]
                    let magnitude = zip(q, row).reduce(Float(0)) { $0 + abs($1.0 * $1.1) }
                    let refL2 = ScalarDistanceKernels.l2Squared(q, row)
                    #expect(
                        DistanceKernelTests.close(
                            gDots[j * runLength + r], ScalarDistanceKernels.dot(q, row),
                            magnitude: magnitude))
                    #expect(
                        DistanceKernelTests.close(gL2s[j * runLength + r], refL2, magnitude: refL2))
                }
            }
        }
        // int8 dot is exact; Hamming equals a bit-by-bit count.
        let a8 = (0..<dimension).map { _ in Int8.random(in: -128...127, using: &rng) }
        let b8 = (0..<dimension).map { _ in Int8.random(in: -128...127, using: &rng) }
        let ref8 = zip(a8, b8).reduce(Int32(0)) { $0 + Int32($1.0) * Int32($1.1) }
        #expect(NativeKernels.dotInt8(a8, b8, count: dimension) == ref8)
        let words = (dimension + 63) / 64
        let wa = (0..<words).map { _ in rng.next() }
        let wb = (0..<words).map { _ in rng.next() }
        var bits = 0
        for w in 0..<words {
            for bit in 0..<64 where (wa[w] >> bit) & 1 != (wb[w] >> bit) & 1 { bits += 1 }
        }
        #expect(NativeKernels.hamming(wa, wb, words: words) == UInt32(bits))
    }
}
