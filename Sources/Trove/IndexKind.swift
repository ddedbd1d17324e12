import Foundation
import TroveVectors

/// The kind of vector index a collection keeps in memory; part of its frozen configuration
/// (reopening with another kind or other parameters throws ``TroveError/schemaMismatch(collection:details:)``).
///
/// Configurations stored before this field existed decode as ``flat``.
///
/// ```swift
/// let config = CollectionConfiguration(dimension: 384, index: .hnsw(quantization: .int8))
/// let docs = try await database.collection("docs", configuration: config)
/// ```
public enum IndexKind: Codable, Hashable, Sendable {
    /// Exact search: a SIMD scan over every vector (or over the filter's candidates).
    /// Right up to about 100,000 vectors.
    case flat
    /// Approximate search with an HNSW graph (`TroveVectors.HNSWIndex`), kept in step with the
    /// table through the change log and persisted as a snapshot in the `<name>_index` table.
    ///
    /// - Parameters:
    ///   - m: links per node (2·m on layer 0), 2...256; hnswlib's default 16.
    ///   - efConstruction: candidate list size while inserting; 200 as hnswlib.
    ///   - efSearch: default candidate list size while searching (at least k is used).
    ///   - quantization: what the walk reads: float32 (`.none`), `.int8` or `.binary`; the best
    ///     candidates are always re-scored with float32 vectors.
    case hnsw(m: Int = 16, efConstruction: Int = 200, efSearch: Int = 64, quantization: HNSWQuantization = .none)

    /// Whether this is an approximate (HNSW) index.
    public var isApproximate: Bool {
        if case .hnsw = self { return true }
        return false
    }

    /// The `HNSWConfiguration` of an HNSW kind, nil for ``flat``.
    public var hnswConfiguration: HNSWConfiguration? {
        guard case .hnsw(let m, let efConstruction, let efSearch, let quantization) = self else { return nil }
        return HNSWConfiguration(m: m, efConstruction: efConstruction, efSearch: efSearch, quantization: quantization)
    }

    /// Checks the parameters.
    /// - Throws: ``TroveError/invalidConfiguration(_:)`` naming the bad parameter.
    func validate() throws {
        guard let configuration = hnswConfiguration else { return }
        do {
            try configuration.validate()
        } catch {
            throw TroveError.invalidConfiguration("index: \(error)")
        }
    }
}

extension IndexKind: CustomStringConvertible {
    /// `flat`, or `hnsw(m: …, efConstruction: …, efSearch: …, quantization: …)`.
    public var description: String {
        switch self {
        case .flat: return "flat"
        case .hnsw(let m, let efConstruction, let efSearch, let quantization):
            return "hnsw(m: \(m), efConstruction: \(efConstruction), efSearch: \(efSearch), quantization: \(quantization.rawValue))"
        }
    }
}
