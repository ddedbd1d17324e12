import Foundation
import TroveSQLite
import TroveVectors

/// The exact (flat) in-memory index of one vector field: a SIMD scan over every vector, or over
/// the filter's candidates.
///
/// Memory: 4 × dimension bytes per document with a vector, plus the id map.
final class FlatVectorIndex: VectorFieldSearching {
    let field: String
    let dimension: Int
    let metric: DistanceMetric
    private(set) var index: FlatIndex?

    init(field: String, dimension: Int, metric: DistanceMetric) {
        self.field = field
        self.dimension = dimension
        self.metric = metric
    }

    var isLoaded: Bool { index != nil }
    var count: Int { index?.count ?? 0 }
    var strategy: String { "exact \(metric) scan (\(dimension)-d)" }

    func reset() { index = FlatIndex(dimension: dimension, metric: metric) }
    func unload() { index = nil }
    func reserve(rows: Int) { index?.reserveCapacity(rows) }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        if let vector = vector(from: statement, column: firstColumn) {
            index!.upsert(id: rid, vector: vector)
        } else {
            _ = index!.remove(id: rid)
        }
    }

    func plan(k: Int, matching: Int?, options: VectorSearchOptions) -> String {
        "exact scan: " + (matching.map { "the \($0) candidates" } ?? "all \(count) vectors") + " (\(metric), \(dimension)-d)"
    }

    /// Always exact: `options` change nothing here.
    func search(_ query: [Float], k: Int, among candidates: [Int64]?, options: VectorSearchOptions, table: TableVectors) -> [Neighbor] {
        guard let index else { return [] }
        if let candidates { return index.search(query, k: k, among: candidates) }
        return index.search(query, k: k)
    }

    /// Every stored vector against the one in memory, bit for bit: missing, stale, and vectors
    /// without a row. The index stores vectors as it prepares them (normalised under cosine), so
    /// each stored one goes through the same preparation first. Nothing when not loaded.
    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard let index else { return [] }
        var missing = 0, stale = 0, stored = 0
        var expected = FlatIndex(dimension: dimension, metric: metric)
        let statement = try connection.prepare(
            "SELECT \(layout.rid), \"\(field)\" FROM \(layout.table) WHERE \"\(field)\" IS NOT NULL")
        try statement.forEachRow { row in
            guard let vector = vector(from: row, column: 1) else { return }
            stored += 1
            expected.upsert(id: 0, vector: vector)
            switch index.vector(for: row.int64(at: 0)) {
            case nil: missing += 1
            case let indexed? where indexed != expected.vector(for: 0): stale += 1
            default: break
            }
        }
        let extra = index.count - (stored - missing)
        guard missing > 0 || stale > 0 || extra > 0 else { return [] }
        return ["\(name): vector index disagrees with the table: \(missing) vectors missing, \(stale) stale, \(extra) without a row"]
    }
}
