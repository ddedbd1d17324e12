import Foundation
import TroveSQLite
import TroveVectors

/// How a vector search found its answer, and why (see ``Collection/explain(topK:filter:exact:)``).
///
/// ```swift
/// let plan = try await docs.explain(topK: 10, filter: SearchFilter(source: "manual"))
/// print(plan)   // "exactScan on hnsw(...): 312 matching rows: an exact scan is cheaper than any walk"
/// ```
public struct SearchPlan: Sendable, Hashable, CustomStringConvertible {
    /// The strategies a vector search can take.
    public enum Strategy: String, Sendable, Hashable {
        /// Exact distances to every vector, or to every row passing the filter.
        case exactScan
        /// An unfiltered HNSW walk.
        case graph
        /// An HNSW walk that traverses every node but returns only rows passing the filter
        /// (falling back to an exact scan if it cannot find `topK` of them).
        case filteredGraph
    }

    /// What ran.
    public var strategy: Strategy
    /// The collection's index kind.
    public var index: IndexKind
    /// Vectors in the in-memory index.
    public var indexedVectors: Int
    /// Rows passing the filter (including rows without a vector), nil without a filter.
    public var matchingRows: Int?
    /// Why, in words.
    public var reason: String

    /// Creates a plan description (the engine builds these; public for tests and tools).
    public init(strategy: Strategy, index: IndexKind, indexedVectors: Int, matchingRows: Int?, reason: String) {
        self.strategy = strategy
        self.index = index
        self.indexedVectors = indexedVectors
        self.matchingRows = matchingRows
        self.reason = reason
    }

    init(_ plan: HNSWFilterPlan, index: IndexKind, indexedVectors: Int, matchingRows: Int) {
        switch plan {
        case .exactScan(let why):
            self.init(strategy: .exactScan, index: index, indexedVectors: indexedVectors, matchingRows: matchingRows, reason: why)
        case .graphTraversal(let why):
            self.init(strategy: .filteredGraph, index: index, indexedVectors: indexedVectors, matchingRows: matchingRows, reason: why)
        }
    }

    /// "<strategy> on <index kind>: <reason>".
    public var description: String { "\(strategy.rawValue) on \(index): \(reason)" }
}

/// Vector search results together with the plan that produced them.
public struct ExplainedSearch: Sendable, Hashable {
    /// The hits, nearest first.
    public var results: [SearchResult]
    /// How they were found.
    public var plan: SearchPlan
}

/// The state of a collection's in-memory vector index.
///
/// ```swift
/// let stats = try await docs.indexStatistics()
/// if case .rebuilt(let why) = stats.origin { print("rebuilt:", why) }
/// ```
public struct IndexStatistics: Sendable, Hashable {
    /// Where the in-memory index came from.
    public enum Origin: Sendable, Hashable {
        /// Not loaded yet (indexes load on the first vector query or ``Collection/loadIndex()``).
        case notLoaded
        /// Read from the table (flat indexes always are).
        case table
        /// Loaded from the stored HNSW snapshot, then caught up from the change log.
        case snapshot
        /// Built from the table, because the snapshot was missing or could not be trusted.
        case rebuilt(reason: String)
    }

    /// The collection's index kind.
    public var kind: IndexKind
    /// Where the index came from.
    public var origin: Origin
    /// Vectors in the index.
    public var vectorCount: Int
    /// The change-log seq the index reflects.
    public var watermark: Int64
    /// The watermark of the stored snapshot this index descends from; nil when none (flat
    /// collections, or nothing saved since a rebuild).
    public var snapshotWatermark: Int64?
    /// Seconds spent loading (snapshot + replay) or rebuilding.
    public var loadSeconds: Double
    /// Rows replayed from the change log since the index was loaded.
    public var replayedRows: Int
}

extension Collection {
    /// Vector search returning the plan next to the hits, and stating whether it must be exact.
    ///
    /// On a flat collection every search is exact. On an HNSW collection `exact: false` walks
    /// the graph (approximate, fast) and `exact: true` scans the index's float32 vectors (the
    /// same answer as a flat collection would give, at O(n) cost). With a filter, an HNSW
    /// collection scans the matching rows exactly when they are few and walks the graph,
    /// skipping non-matching rows in the results, when they are many; either way exactly `topK`
    /// hits come back whenever `topK` rows match.
    ///
    /// ```swift
    /// let found = try await docs.searchExplained(vector: q, topK: 10, filter: SearchFilter(source: "manual"))
    /// print(found.plan.strategy, found.results.count)
    /// let truth = try await docs.searchExplained(vector: q, topK: 10, exact: true).results
    /// ```
    /// - Parameters:
    ///   - vector: the query; same dimension as the collection, finite components.
    ///   - topK: how many hits, 1 through ``maxTopK``.
    ///   - filter: which rows may compete, applied before ranking.
    ///   - exact: scan exactly even when the collection has an approximate index.
    ///   - efSearch: the HNSW candidate list size for this query (default: the collection's
    ///     `efSearch`); larger is slower and finds more of the true neighbours.
    /// - Throws: as ``search(vector:topK:filter:)``, and
    ///   ``TroveError/invalidConfiguration(_:)`` for an efSearch outside 1...100000.
    /// - Complexity: unfiltered HNSW: about O(efSearch · m · log n) distances; filtered: the
    ///   cheaper of O(matching) distances and a walk of about efSearch · n / matching nodes.
    public func searchExplained(
        vector: [Float], topK: Int = 10, filter: SearchFilter = SearchFilter(), exact: Bool = false, efSearch: Int? = nil
    ) async throws -> ExplainedSearch {
        try await database.withEngine(name) {
            try $0.searchVectorExplained(vector, topK: topK, filter: filter, exact: exact, efSearch: efSearch)
        }
    }

    /// The plan a vector search with these arguments would take (the filter is evaluated and
    /// the index caught up, but nothing is ranked).
    ///
    /// ```swift
    /// let plan = try await docs.explain(topK: 10, filter: SearchFilter(metadata: [.equals("lang", "de")]))
    /// ```
    public func explain(topK: Int = 10, filter: SearchFilter = SearchFilter(), exact: Bool = false) async throws -> SearchPlan {
        try await database.withEngine(name) { try $0.explainSearch(topK: topK, filter: filter, exact: exact) }
    }

    /// Writes the HNSW index's snapshot, with the change-log watermark it reflects, to the
    /// `<name>_index` table, so the next open loads it instead of rebuilding.
    ///
    /// Snapshots are also written automatically after API writes once 5,000 change-log entries
    /// are unsaved, and by ``Database/saveIndexes()``. On a flat collection this does nothing.
    ///
    /// ```swift
    /// try await docs.insertBatch(entries)
    /// try await docs.saveIndex()
    /// ```
    /// - Returns: the index statistics after saving.
    /// - Throws: `SQLiteError` (for example on a read-only database).
    /// - Complexity: O(n · (dimension + m)) bytes written.
    @discardableResult
    public func saveIndex() async throws -> IndexStatistics {
        try await database.withEngine(name) { engine in
            try engine.saveANN()
            return try engine.indexStatistics()
        }
    }

    /// Loads the vector index now (instead of on the first query) and catches it up with the
    /// table. An HNSW index that had to be rebuilt is saved right away when the database is
    /// writable, so the next open can load it.
    ///
    /// ```swift
    /// let stats = try await docs.loadIndex()
    /// print(stats.origin, stats.loadSeconds)
    /// ```
    @discardableResult
    public func loadIndex() async throws -> IndexStatistics {
        try await database.withEngine(name) { engine in
            if engine.configuration.index.isApproximate {
                let ann = try engine.catchUpANN()
                if engine.state.indexes.lock.read({ ann.savedWatermark == nil }), !engine.connection.isReadOnly,
                    !engine.connection.isInTransaction
                {
                    try engine.saveANN()
                }
            } else {
                try engine.catchUp()
            }
            return try engine.indexStatistics()
        }
    }

    /// Discards the in-memory index and any stored snapshot, rebuilds the index from the table
    /// and (for HNSW, on a writable database) saves the new snapshot. For repair tools; normal
    /// use never needs it, since a snapshot that fails a check is rebuilt automatically.
    ///
    /// ```swift
    /// let stats = try await docs.rebuildIndex()   // stats.origin == .rebuilt(reason: "rebuild requested")
    /// ```
    /// - Complexity: O(n) for flat; O(n · efConstruction · m · log n) / cores for HNSW.
    @discardableResult
    public func rebuildIndex() async throws -> IndexStatistics {
        try await database.withEngine(name) { engine in
            // Every built index is rebuilt from the table at the next catch-up.
            engine.state.indexes.invalidate()
            if engine.configuration.index.isApproximate {
                if !engine.connection.isReadOnly { try engine.snapshotStore.delete() }
                let ann = try engine.catchUpANN()
                engine.state.indexes.lock.write { ann.origin = .rebuilt(reason: "rebuild requested") }
                if !engine.connection.isReadOnly, !engine.connection.isInTransaction { try engine.saveANN() }
            } else {
                try engine.catchUp()
            }
            return try engine.indexStatistics()
        }
    }

    /// Where the vector index came from, its size and watermark.
    public func indexStatistics() async throws -> IndexStatistics {
        try await database.withEngine(name) { try $0.indexStatistics() }
    }
}

extension Database {
    /// Saves the snapshot of every open HNSW collection holding unsaved changes (call it when
    /// the app goes to the background or before it exits).
    ///
    /// ```swift
    /// try await database.saveIndexes()
    /// ```
    /// - Returns: the names of the collections saved.
    @discardableResult
    public func saveIndexes() throws -> [String] {
        var saved: [String] = []
        for (name, engine) in engines.sorted(by: { $0.key < $1.key }) {
            guard engine.hasUnsavedANNChanges else { continue }
            try engine.saveANN()
            saved.append(name)
        }
        return saved
    }
}
