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

    func search(_ query: [Float], k: Int, among candidates: [Int64]?, table: TableVectors) throws -> [Neighbor] {
        guard let index else { return [] }
        guard !configuration.storesFullPrecision else {
            guard let candidates else { return index.search(query, k: k) }
            return index.search(query, k: k, candidates: Set(candidates)).results
        }
        guard let candidates else {
            var failure: (any Error)?
            let hits = index.search(query, k: k, efSearch: nil) { rid in
                do { return try table.vector(rid: rid) } catch {
                    failure = failure ?? error
                    return nil
                }
            }
            if let failure { throw failure }
            return hits
        }
        switch CollectionEngine.codesOnlyPlan(matching: candidates.count, total: index.count, k: k, efSearch: index.efSearch) {
        case .exactScan:
            return try table.exactSearch(query, k: k, among: candidates)
        case .graphTraversal:
            // The filtered walk ranks by code distances; widen it and let the table's vectors pick the k.
            let allowed = Set(candidates)
            let wide = k * configuration.rescoreFactor
            let found = index.search(query, k: wide, efSearch: max(index.efSearch, wide), where: allowed.contains)
            return try table.exactSearch(query, k: k, among: found.map(\.id))
        }
    }
}
