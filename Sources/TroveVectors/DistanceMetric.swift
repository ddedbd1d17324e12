/// How two vectors are compared. Every metric is expressed as a *distance*: smaller is closer.
///
/// - `cosine`: `1 - cos(a, b)`, in `0...2`. Indexes store L2-normalised copies and scan with a
///   dot product, so cosine costs the same as `dot`.
/// - `l2`: the Euclidean distance `sqrt(Σ (aᵢ - bᵢ)²)`. Scans rank by the squared distance and
///   take the square root only of the results.
/// - `dot`: `-(a · b)`, so that the largest inner product is the nearest.
///
/// ```swift
/// let metric = DistanceMetric.cosine
/// let d = metric.distance([1, 0], [0, 1])   // 1.0
/// let s = metric.score(distance: d)         // 0.0 (the cosine)
/// ```
public enum DistanceMetric: String, Codable, Sendable, CaseIterable {
    case cosine, l2, dot
}

extension DistanceMetric {
    /// A similarity for display (bigger is closer): cosine → cos, dot → a·b, l2 → -distance.
    ///
    /// - Parameter distance: a distance produced by this metric.
    /// - Returns: the matching similarity.
    @inlinable
    public func score(distance: Float) -> Float {
        switch self {
        case .cosine: return 1 - distance
        case .dot: return -distance
        case .l2: return -distance
        }
    }

    /// The distance between two vectors of equal length under this metric (SIMD kernels).
    ///
    /// For `cosine` neither vector needs to be normalised; a zero vector has distance 1 to anything.
    ///
    /// ```swift
    /// DistanceMetric.l2.distance([0, 0], [3, 4])   // 5.0
    /// ```
    /// - Parameters:
    ///   - a: the first vector.
    ///   - b: the second vector, `b.count == a.count`.
    /// - Returns: the distance (smaller is closer).
    /// - Complexity: O(n) in the dimension.
    public func distance(_ a: [Float], _ b: [Float]) -> Float {
        precondition(
            a.count == b.count, "vectors of different dimensions: \(a.count) and \(b.count)")
        switch self {
        case .cosine: return DistanceKernels.cosineDistance(a, b)
        case .l2: return DistanceKernels.l2(a, b)
        case .dot: return -DistanceKernels.dot(a, b)
        }
    }
}

/// One search result: an external row id and its distance to the query (smaller = closer).
///
/// cosine: `1 - cos(a, b)`; l2: Euclidean distance; dot: `-(a·b)`.
///
/// ```swift
/// let hit = Neighbor(id: 42, distance: 0.12)
/// let similarity = DistanceMetric.cosine.score(distance: hit.distance)   // 0.88
/// ```
public struct Neighbor: Hashable, Sendable {
    /// The external row id.
    public var id: Int64
    /// The distance to the query under the index's metric (smaller is closer).
    public var distance: Float

    /// Creates a result.
    /// - Parameters:
    ///   - id: the external row id.
    ///   - distance: its distance to the query.
    @inlinable
    public init(id: Int64, distance: Float) {
        self.id = id
        self.distance = distance
    }
}

extension Neighbor: CustomStringConvertible {
    public var description: String { "(\(id), \(distance))" }
}
