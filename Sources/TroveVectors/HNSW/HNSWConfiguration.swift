/// How an `HNSWIndex` stores the vectors its graph walk reads.
///
/// - `none`: float32 (4 bytes per dimension).
/// - `int8`: scalar quantization, one signed byte per dimension with a per-vector scale
///   (about 4x smaller); the walk uses an exact int8 inner product.
/// - `binary`: one sign bit per dimension (32x smaller); the walk uses Hamming distance.
///
/// In the quantized modes the best candidates of the walk are re-scored with the float32
/// vectors, so recall stays close to float32's; how many is
/// `HNSWConfiguration.defaultRescoreFactor(for:)` per result unless set. The float32 vectors are kept by the index for
/// that unless `HNSWConfiguration.storesFullPrecision` is false (int8 only), in which case the
/// caller supplies them (see `HNSWIndex.memoryUsage` for the split).
///
/// ```swift
/// let config = HNSWConfiguration(quantization: .int8)
/// ```
public enum HNSWQuantization: String, Codable, Sendable, CaseIterable {
    case none, int8, binary
}

/// The parameters of an `HNSWIndex` (Malkov & Yashunin 2018, "Efficient and robust approximate
/// nearest neighbor search using Hierarchical Navigable Small World graphs").
///
/// Defaults and how they compare:
///
/// | parameter | Trove | hnswlib | faiss `IndexHNSWFlat` |
/// |---|---|---|---|
/// | `m` (links per node on upper layers; 2·M on layer 0) | 16 | 16 | 32 |
/// | `efConstruction` | 200 | 200 | 40 |
/// | `efSearch` | 64 | 10 | 16 |
///
/// `m = 16, efConstruction = 200` match hnswlib's and the benchmarks' settings (a good graph
/// for 384-d sentence embeddings). `efSearch` defaults higher than both peers because their
/// defaults give recall@10 well below 0.9 on such data; 64 gives about 0.97 on the benchmark set
/// (see BENCHMARKS.md) and callers who need speed can lower it per query.
///
/// ```swift
/// var config = HNSWConfiguration()
/// config.efSearch = 128
/// let index = try HNSWIndex(dimension: 384, metric: .cosine, configuration: config)
/// ```
public struct HNSWConfiguration: Codable, Sendable, Hashable {
    /// Links per node on the upper layers (`M`); layer 0 keeps up to `2 * m`.
    public var m: Int
    /// The candidate list size while inserting (`efConstruction`).
    public var efConstruction: Int
    /// The default candidate list size while searching (`efSearch`); at least `k` is used.
    public var efSearch: Int
    /// The seed of the level generator: the same seed and insertion order give the same graph.
    public var seed: UInt64
    /// How the walked vectors are stored.
    public var quantization: HNSWQuantization
    /// In quantized modes, how many walk candidates per requested result are re-scored with
    /// float32 vectors (the walk's candidate list is at least `k * rescoreFactor`). Defaults to
    /// `defaultRescoreFactor(for: quantization)`.
    public var rescoreFactor: Int
    /// Whether the index keeps a float32 copy of every vector (for re-scoring, exact scans and
    /// `vector(for:)`). `false` is allowed with `.int8` only: the index then holds just the int8
    /// codes (about 0.26x the float32 bytes), builds its graph from code distances, and
    /// re-scores with float32 vectors supplied by the caller
    /// (`search(_:k:efSearch:rescoringWith:)`), e.g. read from the store's table.
    public var storesFullPrecision: Bool = true
    /// Deleted nodes are repaired in a batch once they reach this fraction of the nodes
    /// (0 = only on `repairDeletions()`). Not stored in snapshots.
    public var repairFraction: Double = 0.05

    /// Creates a configuration; see the type's documentation for the defaults.
    ///
    /// - Parameter rescoreFactor: `nil` (the default) takes `defaultRescoreFactor(for: quantization)`.
    public init(
        m: Int = 16, efConstruction: Int = 200, efSearch: Int = 64, seed: UInt64 = 100,
        quantization: HNSWQuantization = .none, rescoreFactor: Int? = nil
    ) {
        self.m = m
        self.efConstruction = efConstruction
        self.efSearch = efSearch
        self.seed = seed
        self.quantization = quantization
        self.rescoreFactor = rescoreFactor ?? Self.defaultRescoreFactor(for: quantization)
    }

    /// The re-scoring factor each quantization gets by default, chosen so that the default
    /// `efSearch` (64) reaches recall@10 >= 0.9 against the exact scan on 2,000 random 32-d
    /// vectors (TroveVectorsTests, "HNSW quantization defaults"):
    ///
    /// - `none`: 4 (unused: a float32 walk needs no re-scoring).
    /// - `int8`: 4; int8 codes rank almost as float32 does, so the walk's own list suffices.
    /// - `binary`: 32; sign bits rank coarsely (a 32-d vector has 33 possible Hamming distances),
    ///   so the walk keeps `32 * k` candidates (320 for k = 10) for float32 re-scoring.
    ///
    /// For more recall raise `efSearch` (the walk's list is `max(efSearch, k * rescoreFactor)`),
    /// or `rescoreFactor` for quantized walks; both cost time linearly.
    public static func defaultRescoreFactor(for quantization: HNSWQuantization) -> Int {
        switch quantization {
        case .none, .int8: return 4
        case .binary: return 32
        }
    }

    private enum CodingKeys: String, CodingKey {
        case m, efConstruction, efSearch, seed, quantization, rescoreFactor, storesFullPrecision,
            repairFraction
    }

    /// Decodes a configuration; keys added after the first release (`storesFullPrecision`,
    /// `repairFraction`) take their defaults when absent, so older encodings still decode.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            m: try c.decode(Int.self, forKey: .m),
            efConstruction: try c.decode(Int.self, forKey: .efConstruction),
            efSearch: try c.decode(Int.self, forKey: .efSearch),
            seed: try c.decode(UInt64.self, forKey: .seed),
            quantization: try c.decode(HNSWQuantization.self, forKey: .quantization),
            rescoreFactor: try c.decode(Int.self, forKey: .rescoreFactor))
        storesFullPrecision = try c.decodeIfPresent(Bool.self, forKey: .storesFullPrecision) ?? true
        repairFraction = try c.decodeIfPresent(Double.self, forKey: .repairFraction) ?? 0.05
    }

    /// Checks the parameters are usable.
    /// - Throws: `VectorIndexError.invalidConfiguration` naming the bad parameter.
    public func validate() throws {
        guard (2...256).contains(m) else {
            throw VectorIndexError.invalidConfiguration("m must be in 2...256, got \(m)")
        }
        guard (1...100_000).contains(efConstruction) else {
            throw VectorIndexError.invalidConfiguration(
                "efConstruction must be in 1...100000, got \(efConstruction)")
        }
        guard (1...100_000).contains(efSearch) else {
            throw VectorIndexError.invalidConfiguration(
                "efSearch must be in 1...100000, got \(efSearch)")
        }
        guard (0...1).contains(repairFraction) else {
            throw VectorIndexError.invalidConfiguration(
                "repairFraction must be in 0...1, got \(repairFraction)")
        }
        guard (1...1_000).contains(rescoreFactor) else {
            throw VectorIndexError.invalidConfiguration(
                "rescoreFactor must be in 1...1000, got \(rescoreFactor)")
        }
        guard storesFullPrecision || quantization == .int8 else {
            throw VectorIndexError.invalidConfiguration(
                "storesFullPrecision = false needs int8 quantization (the graph is built from the codes)"
            )
        }
    }
}

/// Errors of the vector indexes: bad parameters and snapshots that cannot be trusted.
///
/// ```swift
/// do { _ = try HNSWIndex(snapshot: bytes) }
/// catch VectorIndexError.corrupt(let reason) { print("rebuilding:", reason) }
/// ```
public enum VectorIndexError: Error, Equatable, Sendable {
    /// A parameter is out of range.
    case invalidConfiguration(String)
    /// The data does not start with the snapshot magic.
    case notASnapshot
    /// The snapshot was written by a format version this build does not read.
    case unsupportedVersion(UInt32)
    /// The snapshot is shorter than its header says.
    case truncated(expected: Int, actual: Int)
    /// The snapshot's checksum or structure is wrong.
    case corrupt(String)
}

extension VectorIndexError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidConfiguration(let why): return "invalid index configuration: \(why)"
        case .notASnapshot: return "not an HNSW snapshot (bad magic)"
        case .unsupportedVersion(let v): return "unsupported HNSW snapshot version \(v)"
        case .truncated(let expected, let actual):
            return "HNSW snapshot truncated: expected \(expected) bytes, found \(actual)"
        case .corrupt(let why): return "corrupt HNSW snapshot: \(why)"
        }
    }
}
