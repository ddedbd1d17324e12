import Foundation
import TroveVectors

/// The kind of vector index a collection keeps in memory; part of its frozen configuration
/// (reopening with another kind or other parameters throws ``TroveError/schemaMismatch(collection:details:)``).
///
/// Configurations stored before this field existed decode as ``flat``.
///
/// ```swift
/// let config = CollectionConfiguration(dimension: 384, index: .hnsw(quantization: .int8))
/// let docs = try await SearchCollection("docs", in: database, configuration: config)
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
    ///     candidates are always re-scored with float32 vectors. A quantized walk keeps at least
    ///     `k × HNSWConfiguration.defaultRescoreFactor(for:)` candidates (4 for int8, 32 for
    ///     binary), so each quantization reaches recall@10 >= 0.9 with the defaults on 2,000 random
    ///     32-d vectors. For more recall, raise `efSearch` (the walk keeps
    ///     `max(efSearch, k × factor)` candidates; search time grows with it).
    ///   - keepsFloatVectors: whether the index keeps its own float32 copy of every vector (the
    ///     default). `false` is allowed with `.int8` only: the index then holds just the int8 codes
    ///     and the graph (about a third of the float32 index's memory at 384 dimensions), re-scores
    ///     its best candidates with vectors read from the table, and exact searches
    ///     (`exact: true`, or a filter's few candidates) read their vectors from the table too —
    ///     smaller in memory, slower for exact scans over many rows.
    case hnsw(
        m: Int = 16, efConstruction: Int = 200, efSearch: Int = 64,
        quantization: HNSWQuantization = .none,
        keepsFloatVectors: Bool = true)

    /// Whether this is an approximate (HNSW) index.
    public var isApproximate: Bool {
        if case .hnsw = self { return true }
        return false
    }

    /// The `HNSWConfiguration` of an HNSW kind, nil for ``flat``.
    public var hnswConfiguration: HNSWConfiguration? {
        guard
            case .hnsw(
                let m, let efConstruction, let efSearch, let quantization, let keepsFloatVectors) =
                self
        else { return nil }
        var configuration = HNSWConfiguration(
            m: m, efConstruction: efConstruction, efSearch: efSearch, quantization: quantization)
        configuration.storesFullPrecision = keepsFloatVectors
        return configuration
    }

    /// Whether exact scans and re-scoring must read float32 vectors from the table
    /// (`.hnsw(..., keepsFloatVectors: false)`).
    var readsVectorsFromTable: Bool {
        if case .hnsw(_, _, _, _, let keepsFloatVectors) = self { return !keepsFloatVectors }
        return false
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
        case .hnsw(let m, let efConstruction, let efSearch, let quantization, let keepsFloatVectors):
            return
                "hnsw(m: \(m), efConstruction: \(efConstruction), efSearch: \(efSearch), quantization: \(quantization.rawValue)"
                + (keepsFloatVectors ? ")" : ", keepsFloatVectors: false)")
        }
    }
}

extension IndexKind {
    // The stored form is the one Swift synthesised before `keepsFloatVectors` existed:
    // `"flat"` as `{"flat": {}}`, HNSW as `{"hnsw": {"m": …, "efConstruction": …, "efSearch": …,
    // "quantization": …}}`. The new key is written only when false, so every configuration stored
    // before it existed still reads back (and compares) the same.
    private enum Kind: String, CodingKey { case flat, hnsw }
    private enum HNSWKey: String, CodingKey {
        case m, efConstruction, efSearch, quantization, keepsFloatVectors
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Kind.self)
        guard container.allKeys.count == 1, let kind = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath,
                    debugDescription: "an index kind has exactly one key: flat or hnsw"))
        }
        switch kind {
        case .flat:
            self = .flat
        case .hnsw:
            let fields = try container.nestedContainer(keyedBy: HNSWKey.self, forKey: .hnsw)
            self = .hnsw(
                m: try fields.decode(Int.self, forKey: .m),
                efConstruction: try fields.decode(Int.self, forKey: .efConstruction),
                efSearch: try fields.decode(Int.self, forKey: .efSearch),
                quantization: try fields.decode(HNSWQuantization.self, forKey: .quantization),
                keepsFloatVectors: try fields.decodeIfPresent(Bool.self, forKey: .keepsFloatVectors)
                    ?? true)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Kind.self)
        switch self {
        case .flat:
            _ = container.nestedContainer(keyedBy: HNSWKey.self, forKey: .flat)
        case .hnsw(let m, let efConstruction, let efSearch, let quantization, let keepsFloatVectors):
            var fields = container.nestedContainer(keyedBy: HNSWKey.self, forKey: .hnsw)
            try fields.encode(m, forKey: .m)
            try fields.encode(efConstruction, forKey: .efConstruction)
            try fields.encode(efSearch, forKey: .efSearch)
            try fields.encode(quantization, forKey: .quantization)
            if !keepsFloatVectors { try fields.encode(false, forKey: .keepsFloatVectors) }
        }
    }
}
