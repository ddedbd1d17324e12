import Foundation

/// The state of a vector field's in-memory index.
///
/// ```swift
/// let stats = try await items.indexStatistics(field: "embedding")
/// if case .rebuilt(let why) = stats.origin { print("rebuilt:", why) }
/// ```
public struct IndexStatistics: Sendable, Hashable {
    /// Where the in-memory index came from.
    public enum Origin: Sendable, Hashable {
        /// Not loaded yet (indexes load on the first query that needs them, or
        /// ``DocumentCollection/loadIndex(field:)``).
        case notLoaded
        /// Loaded from the stored snapshot (an HNSW graph, a flat index's matrix), then caught up
        /// from the change log.
        case snapshot
        /// Built from the table, because the snapshot was missing or could not be trusted (or a
        /// rebuild was asked for).
        case rebuilt(reason: String)
    }

    /// The field's index kind.
    public var kind: IndexKind
    /// Where the index came from.
    public var origin: Origin
    /// Vectors in the index.
    public var vectorCount: Int
    /// The change-log seq the index reflects.
    public var watermark: Int64
    /// The watermark of the stored snapshot this index descends from; nil when nothing was
    /// saved since a rebuild.
    public var snapshotWatermark: Int64?
    /// Seconds spent loading (snapshot + replay) or rebuilding.
    public var loadSeconds: Double
    /// Rows replayed from the change log since the index was loaded.
    public var replayedRows: Int
}
