import Foundation
import TroveSQLite
import TroveVectors

/// A vector field read straight from the table on one connection: the exact answer when the
/// shared in-memory index must not be used (inside a write transaction) or keeps no float32
/// vectors (codes-only HNSW, whose re-scoring and exact scans read the truth from the table).
struct TableVectors {
    let connection: Connection
    let layout: DocumentLayout
    let field: String
    let dimension: Int
    let metric: DistanceMetric

    /// One row's vector, or nil when it has none (or a blob of the wrong length).
    func vector(rid: Int64) throws -> [Float]? {
        let statement = try connection.cachedStatement(
            "SELECT \"\(field)\" FROM \(layout.table) WHERE \(layout.rid) = ?")
        var vector: [Float]?
        try statement.forEachRow([.integer(rid)]) { row in vector = decode(row, column: 0) }
        return vector
    }

    /// The exact k nearest among `rids` (every row with a vector when nil) that `allows` accepts,
    /// scored by the flat index's kernels, so the answer equals the in-memory exact index's.
    ///
    /// - Complexity: one statement; a primary-key lookup per id, or one pass over the table.
    func exactSearch(
        _ query: [Float], k: Int, among rids: [Int64]?, allows: (Int64) -> Bool = { _ in true }
    ) throws
        -> [Neighbor]
    {
        var scratch = FlatIndex(dimension: dimension, metric: metric)
        let statement: Statement
        var bindings: [SQLValue] = []
        if let rids {
            statement = try connection.cachedStatement(
                "SELECT \(layout.rid), \"\(field)\" FROM \(layout.table) WHERE \(layout.rid) IN (SELECT value FROM json_each(?))"
            )
            bindings = [.text(SQLFragment.jsonArray(rids))]
        } else {
            statement = try connection.cachedStatement(
                "SELECT \(layout.rid), \"\(field)\" FROM \(layout.table) WHERE \"\(field)\" IS NOT NULL"
            )
        }
        try statement.forEachRow(bindings) { row in
            let rid = row.int64(at: 0)
            guard allows(rid), let vector = decode(row, column: 1) else { return }
            scratch.upsert(id: rid, vector: vector)
        }
        return scratch.search(query, k: k)
    }

    private func decode(_ row: Statement, column: Int) -> [Float]? {
        row.withBlob(at: column) { $0.flatMap { VectorBlob.vector($0, dimension: dimension) } }
    }
}
