import TroveVectors

/// A deliberately naive exact k-nearest-neighbour oracle: a dictionary of vectors, distances
/// computed in `Double` one element at a time, a full sort by (distance, id). Slow and obviously
/// right, so indexes (flat, HNSW, the store) can be held to it.
///
/// ```swift
/// var oracle = ExactOracle(metric: .cosine)
/// oracle.upsert(id: 1, vector: [1, 0])
/// let expected = oracle.search([1, 0.1], k: 10)
/// #expect(ExactOracle.mismatch(index.search([1, 0.1], k: 10), expected, oracle: oracle, query: [1, 0.1]) == nil)
/// ```
public struct ExactOracle: Sendable {
    public let metric: DistanceMetric
    public private(set) var vectors: [Int64: [Float]] = [:]

    public init(metric: DistanceMetric) { self.metric = metric }

    public var count: Int { vectors.count }

    public mutating func upsert(id: Int64, vector: [Float]) { vectors[id] = vector }

    @discardableResult
    public mutating func remove(id: Int64) -> Bool { vectors.removeValue(forKey: id) != nil }

    /// The metric's distance computed in Double (cosine: of the raw, un-normalised vectors).
    public func distance(_ a: [Float], _ b: [Float]) -> Double {
        precondition(a.count == b.count)
        var ab = 0.0
        var aa = 0.0
        var bb = 0.0
        var l2 = 0.0
        for i in a.indices {
            let x = Double(a[i])
            let y = Double(b[i])
            ab += x * y
            aa += x * x
            bb += y * y
            l2 += (x - y) * (x - y)
        }
        switch metric {
        case .dot: return -ab
        case .l2: return l2.squareRoot()
        case .cosine:
            let denominator = (aa * bb).squareRoot()
            return denominator > 0 ? 1 - ab / denominator : 1
        }
    }

    /// The exact top-k among the ids accepted by `isIncluded`, nearest first, ties by smaller id.
    public func search(_ query: [Float], k: Int, where isIncluded: (Int64) -> Bool = { _ in true })
        -> [Neighbor]
    {
        guard k > 0 else { return [] }
        let scored = vectors.compactMap { id, v -> (Double, Int64)? in
            isIncluded(id) ? (distance(query, v), id) : nil
        }
        return scored.sorted { $0 < $1 }.prefix(k).map { Neighbor(id: $0.1, distance: Float($0.0)) }
    }

    /// The fraction of `expected` ids found in `actual` (recall@k).
    public static func recall(_ actual: [Neighbor], _ expected: [Neighbor]) -> Double {
        guard !expected.isEmpty else { return 1 }
        let truth = Set(expected.map(\.id))
        return Double(actual.filter { truth.contains($0.id) }.count) / Double(expected.count)
    }

    /// Checks that `actual` is a correct exact answer, allowing for Float rounding: same length,
    /// distinct ids, each reported distance equal (within `tolerance`) to the oracle's distance
    /// of that id, and the distance at every rank equal to the expected one within `tolerance`
    /// (so near-ties may swap, nothing else may). Returns a description of the first mismatch.
    public func mismatch(
        _ actual: [Neighbor], expected: [Neighbor], query: [Float], tolerance: Double = 1e-4
    ) -> String? {
        guard actual.count == expected.count else {
            return "count \(actual.count) != expected \(expected.count)"
        }
        guard Set(actual.map(\.id)).count == actual.count else {
            return "duplicate ids in \(actual)"
        }
        for (rank, (a, e)) in zip(actual, expected).enumerated() {
            guard let v = vectors[a.id] else { return "rank \(rank): unknown id \(a.id)" }
            let scale = max(1, abs(Double(e.distance)))
            let truth = distance(query, v)
            if abs(truth - Double(a.distance)) > tolerance * scale {
                return "rank \(rank): id \(a.id) reported \(a.distance), true distance \(truth)"
            }
            if abs(Double(a.distance) - Double(e.distance)) > tolerance * scale {
                return
                    "rank \(rank): distance \(a.distance) (id \(a.id)) != expected \(e.distance) (id \(e.id))"
            }
        }
        for i in actual.indices.dropFirst() where actual[i - 1].distance > actual[i].distance {
            return "not sorted at rank \(i)"
        }
        return nil
    }
}
