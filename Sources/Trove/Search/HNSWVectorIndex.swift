import Foundation
import TroveSQLite
import TroveVectors

/// An HNSW graph (Malkov & Yashunin 2018) over one vector field, approximate; a filtered search
/// plans its own strategy (an exact scan of few candidates, a filter-aware walk for many).
///
/// Memory: the float32 vectors (or int8 codes plus float32 for re-scoring, or in codes-only
/// mode the int8 codes alone) and about 2·M links per node on layer 0.
///
/// Codes-only (`.hnsw(quantization: .int8, keepsFloatVectors: false)`): the codes steer the walk
/// and every exact distance (re-scoring the walk's best, exact scans of few candidates) reads the
/// field's vector from the table, as codes-only search collections do.
final class HNSWVectorIndex: VectorFieldSearching {
    let field: String
    let dimension: Int
    let metric: DistanceMetric
    let configuration: HNSWConfiguration
    private(set) var index: HNSWIndex?

    init(field: String, dimension: Int, metric: DistanceMetric, configuration: HNSWConfiguration) {
        self.field = field
        self.dimension = dimension
        self.metric = metric
        self.configuration = configuration
    }

    var isLoaded: Bool { index != nil }
    var count: Int { index?.count ?? 0 }
    var strategy: String {
        configuration.storesFullPrecision
            ? "HNSW walk (M \(configuration.m), efSearch \(configuration.efSearch), \(configuration.quantization)); exact scan when the filter leaves few candidates"
            : "HNSW walk over int8 codes only (M \(configuration.m), efSearch \(configuration.efSearch)), best candidates re-scored from the table; exact scan of the table's vectors when the filter leaves few candidates"
    }

    func reset() {
        // The configuration was validated with the schema, so this cannot fail.
        index = try! HNSWIndex(dimension: dimension, metric: metric, configuration: configuration)
    }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        if let vector = vector(from: statement, column: firstColumn) {
            index!.insert(id: rid, vector: vector)
        } else {
            _ = index!.remove(id: rid)
        }
    }

    func search(_ query: [Float], k: Int, among candidates: [Int64]?, options: VectorSearchOptions, table: TableVectors) throws
        -> [Neighbor]
    {
        guard let index else { return [] }
        let efSearch = options.efSearch ?? index.efSearch
        guard !options.exact else {
            // The true neighbours: the index's own float32 vectors, or the table's in codes-only mode.
            guard configuration.storesFullPrecision else { return try table.exactSearch(query, k: k, among: candidates) }
            return candidates.map { index.search(query, k: k, among: $0) } ?? index.exactSearch(query, k: k)
        }
        guard !configuration.storesFullPrecision else {
            guard let candidates else { return index.search(query, k: k, efSearch: efSearch) }
            return index.search(query, k: k, candidates: Set(candidates), efSearch: efSearch).results
        }
        guard let candidates else {
            var failure: (any Error)?
            let hits = index.search(query, k: k, efSearch: efSearch) { rid in
                do { return try table.vector(rid: rid) } catch {
                    failure = failure ?? error
                    return nil
                }
            }
            if let failure { throw failure }
            return hits
        }
        switch Self.codesOnlyPlan(matching: candidates.count, total: index.count, k: k, efSearch: efSearch) {
        case .exactScan:
            return try table.exactSearch(query, k: k, among: candidates)
        case .graphTraversal:
            // The filtered walk ranks by code distances; widen it and let the table's vectors pick the k.
            let allowed = Set(candidates)
            let wide = k * configuration.rescoreFactor
            let found = index.search(query, k: wide, efSearch: max(efSearch, wide), where: allowed.contains)
            return try table.exactSearch(query, k: k, among: found.map(\.id))
        }
    }

    /// `HNSWIndex.plan(matching:total:k:efSearch:)` for a codes-only index, whose exact scan reads
    /// every matching row's vector from the table: about 16 times the per-row cost of the
    /// in-memory scan (BENCHMARKS.md, "In the store"). The in-memory rule scans while
    /// matching² ≤ 16 · ef · total and always up to 2,048 rows; dividing the scan's side by 16
    /// gives matching² ≤ ef · total and always up to 128 rows.
    static func codesOnlyPlan(matching: Int, total: Int, k: Int, efSearch: Int) -> HNSWFilterPlan {
        let ef = Double(max(efSearch, k)), m = Double(matching), n = Double(max(total, 1))
        let percent = (100 * m / n * 10).rounded() / 10
        let walked = Int(ef * n / max(m, 1))
        if matching <= 128 || m * m <= ef * n {
            return .exactScan(
                "\(matching) of \(total) rows match (\(percent)%): reading their vectors from the table beats walking ~\(walked) nodes")
        }
        return .graphTraversal(
            "\(matching) of \(total) rows match (\(percent)%): a filtered walk over int8 codes visits ~\(walked) nodes "
                + "instead of reading \(matching) vectors from the table")
    }
}
