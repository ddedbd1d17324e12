import Foundation
import TroveSQLite
import TroveVectors

/// Something derived from a collection's table that must agree with it (ARCHITECTURE.md, "Derived
/// indexes and the change log"):
/// kept by SQLite inside the writing transaction (FTS5, B-tree, later R*Tree), or kept in memory
/// and brought up to date from the change log before each query (vectors, later adjacency).
///
/// A new kind of index is one new conformance; ``DerivedIndexSet`` does the catch-up for all of
/// them at once: one read of the log per query, whatever the number of indexes.
protocol DerivedIndex: AnyObject {
    /// A name for reports (`verify`, `explain`).
    var name: String { get }
    /// The columns an in-memory index reads for each changed row; empty for SQLite-maintained
    /// indexes, which need no catch-up.
    var columns: [String] { get }
    /// Whether the index has been built (in-memory indexes load lazily).
    var isLoaded: Bool { get }
    /// Forgets everything (before a rebuild).
    func reset()
    /// Applies the current state of one row: `statement` is positioned on a row whose columns
    /// from `firstColumn` are this index's ``DerivedIndex/columns``, or nil when the row no longer exists.
    func apply(rid: Int64, statement: Statement?, firstColumn: Int)
    /// Problems found comparing the index with the table (empty when healthy).
    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String]
    /// Rebuilds a SQLite-maintained index from the table (in-memory indexes rebuild through
    /// ``DerivedIndexSet``).
    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws
    /// Loads the index from something saved (an HNSW snapshot) instead of the table, when that is
    /// usable at this log state, and returns the change-log seq it reflects; the set then replays
    /// the log after that seq into it. Nil (the default): build from the table.
    func loadSaved(_ connection: Connection, maxSeq: Int64, floor: Int64) throws -> Int64?
    /// Called once after each pass that applied rows to this index (an index that inserts in
    /// batches, such as HNSW, inserts them here).
    func finishApplying(_ pass: DerivedIndexPass)
    /// Called after ``reset()`` before a build from the table of about `rows` rows, so the index
    /// can allocate once instead of growing.
    func reserve(rows: Int)
}

extension DerivedIndex {
    func loadSaved(_ connection: Connection, maxSeq: Int64, floor: Int64) throws -> Int64? { nil }
    func finishApplying(_ pass: DerivedIndexPass) {}
    func reserve(rows: Int) {}
}

/// Why rows were applied to an in-memory index.
enum DerivedIndexPass {
    /// Built from the table.
    case build
    /// A query replayed the log (changes by raw SQL, other connections, other processes).
    case replay
    /// The writer applied what it had just committed.
    case commit
}

/// An in-memory index of one vector field, searched by the query's vector legs.
protocol VectorFieldSearching: DerivedIndex {
    var field: String { get }
    var dimension: Int { get }
    var metric: DistanceMetric { get }
    var count: Int { get }
    /// A short description of how a search runs, for `explain`.
    var strategy: String { get }
    /// How a search for `k` among `matching` candidates (nil: every row) runs, for `explain`:
    /// the same decision ``search(_:k:among:options:table:)`` makes.
    func plan(k: Int, matching: Int?, options: VectorSearchOptions) -> String
    /// The k nearest rows (by row id), among `candidates` when given; `table` reads the field's
    /// stored vectors on the query's connection, for indexes that keep none in memory.
    func search(
        _ query: [Float], k: Int, among candidates: [Int64]?, options: VectorSearchOptions,
        table: TableVectors
    )
        throws
        -> [Neighbor]
    /// Forgets the in-memory index, so the next catch-up that needs it loads it again (while
    /// the set's other indexes stay as they are); caller holds the set's lock exclusively.
    func unload()
}

/// A query's choices for its vector legs (``Query/exact(_:)``, ``Query/efSearch(_:)``).
struct VectorSearchOptions {
    /// Scan exactly, even where the index is approximate.
    var exact = false
    /// The HNSW candidate list size (nil: the index's own).
    var efSearch: Int? = nil
}

extension VectorFieldSearching {
    var name: String { "vector(\(field))" }
    var columns: [String] { ["\"\(field)\""] }

    func vector(from statement: Statement?, column: Int) -> [Float]? {
        statement?.withBlob(at: column) { bytes in
            bytes.flatMap { VectorBlob.vector($0, dimension: dimension) }
        }
    }

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard isLoaded else { return [] }
        let stored =
            try connection.scalar(
                "SELECT count(*) FROM \(layout.table) WHERE \"\(field)\" IS NOT NULL")?.int64Value
            ?? 0
        return Int(stored) == count
            ? [] : ["\(name): \(count) vectors in memory, \(stored) in the table"]
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {}
}
