/// How a store compares vectors; frozen in the file when the store is created. Lower distances
/// are more similar with either metric.
public enum DistanceMetric: String, Sendable, CaseIterable, Equatable {
    /// Euclidean distance, in `0...`.
    case l2
    /// Cosine distance, `1 - cos(a, b)`, in `0...2` (the default: what text-embedding models are
    /// trained for).
    case cosine
}
