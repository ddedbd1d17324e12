import Foundation
import TroveSQLite
import TroveVectors

extension CollectionEngine {
    /// An API write that leaves the index this many change-log entries past its saved snapshot
    /// saves a new one. Half the entries a log prune keeps (``logKeep``), so the saved watermark
    /// stays above the pruned floor while this connection does the writing.
    static let annAutosaveChanges: Int64 = 5_000

    var snapshotStore: ANNSnapshotStore { ANNSnapshotStore(connection: connection, schema: schema) }

    /// A stored vector the HNSW index can hold (``CollectionHNSWIndex/vector(_:column:schema:)``).
    func annVector(_ statement: Statement, column: Int) -> [Float]? {
        CollectionHNSWIndex.vector(statement, column: column, schema: schema)
    }

    /// After an API write committed: saves a snapshot once enough has changed since the last.
    func autosaveANNIfNeeded() {
        guard let ann = state.ann else { return }
        let due = state.indexes.lock.read {
            ann.isLoaded && state.indexes.currentWatermarkLocked - (ann.savedWatermark ?? Int64.min / 2) >= Self.annAutosaveChanges
        }
        // Best effort: the rows are committed; a failed save only means a slower next open.
        if due { _ = try? saveANN() }
    }

    // MARK: Saving

    /// Writes the index's snapshot with its watermark, in one write transaction (so nobody can
    /// write between the catch-up and the save).
    ///
    /// - Returns: the saved watermark and size, or nil for a flat collection (nothing to save).
    @discardableResult
    func saveANN() throws -> (watermark: Int64, bytes: Int)? {
        guard let ann = state.ann else { return nil }
        return try connection.transaction(.immediate) {
            try state.indexes.withExclusiveIndexes(connection, loading: [ann]) { scope in
                let bytes = ann.index!.snapshot()
                try snapshotStore.write(bytes, watermark: scope.maxSeq)
                ann.savedWatermark = scope.maxSeq
                return (scope.maxSeq, bytes.count)
            }
        }
    }

    /// Whether the in-memory index holds changes its stored snapshot lacks.
    var hasUnsavedANNChanges: Bool {
        guard let ann = state.ann else { return false }
        return state.indexes.lock.read { ann.isLoaded && ann.savedWatermark != state.indexes.currentWatermarkLocked }
    }

    // MARK: Searching

    /// The k nearest rows passing the filter and the plan that found them. Flat collections
    /// always scan exactly; HNSW collections walk the graph unless `exact` is set, and with a
    /// filter let `HNSWIndex.plan` choose between scanning the candidates and a filtered walk.
    func plannedNeighbors(
        _ query: [Float], k: Int, filter: SearchFilter, exact: Bool, efSearch: Int? = nil
    ) throws -> (neighbors: [Neighbor], plan: SearchPlan) {
        try validate(vector: query)
        if let efSearch, !(1...100_000).contains(efSearch) {
            throw TroveError.invalidConfiguration("efSearch must be in 1...100000, got \(efSearch)")
        }
        let kind = configuration.index
        guard kind.isApproximate else {
            let index = try catchUp()
            if let ids = try candidates(filter) {
                return (index.search(query, k: k, among: ids), SearchPlan(
                    strategy: .exactScan, index: kind, indexedVectors: index.count, matchingRows: ids.count,
                    reason: "flat index: exact scan over the \(ids.count) rows passing the filter"))
            }
            return (index.search(query, k: k), SearchPlan(
                strategy: .exactScan, index: kind, indexedVectors: index.count, matchingRows: nil,
                reason: "flat index: exact scan over all \(index.count) vectors"))
        }
        let index = try catchUpANN().index!
        let total = index.count
        let ids = try candidates(filter)
        // A codes-only index (`keepsFloatVectors: false`) holds no float32 vectors: every exact
        // distance then comes from the table (the truth; the codes only steer the walk).
        let fromTable = kind.readsVectorsFromTable
        func exactScan(among ids: [Int64]?) throws -> [Neighbor] {
            if fromTable { return try tableExactSearch(query, k: k, among: ids) }
            return ids.map { index.search(query, k: k, among: $0) } ?? index.exactSearch(query, k: k)
        }
        if exact {
            return (try exactScan(among: ids), SearchPlan(
                strategy: .exactScan, index: kind, indexedVectors: total, matchingRows: ids?.count,
                reason: "exact requested: scan over " + (fromTable ? "the table's vectors of " : "")
                    + (ids.map { "the \($0.count) rows passing the filter" } ?? "all \(total) vectors")))
        }
        guard let ids else {
            let ef = max(efSearch ?? index.efSearch, k)
            guard fromTable else {
                return (index.search(query, k: k, efSearch: efSearch), SearchPlan(
                    strategy: .graph, index: kind, indexedVectors: total, matchingRows: nil,
                    reason: "no filter: HNSW walk with efSearch \(ef)"))
            }
            var failure: (any Error)?
            let results = index.search(query, k: k, efSearch: efSearch) { id in
                do { return try self.tableVector(id: id) } catch {
                    failure = failure ?? error
                    return nil
                }
            }
            if let failure { throw failure }
            return (results, SearchPlan(
                strategy: .graph, index: kind, indexedVectors: total, matchingRows: nil,
                reason: "no filter: HNSW walk over int8 codes with efSearch \(ef), best candidates re-scored from the table"))
        }
        // The filter's ids are distinct (one per row), so the plan can be made from the array and
        // a Set built only for the walk, which tests membership per visited node.
        let ef = efSearch ?? index.efSearch
        let plan = filterPlan(matching: ids.count, total: total, k: k, efSearch: ef)
        let results: [Neighbor]
        switch plan {
        case .exactScan: results = try exactScan(among: ids)
        case .graphTraversal:
            let allowed = Set(ids)
            if fromTable {
                // The filtered walk ranks by code distances; widen it as the unfiltered walk does
                // and let the table's vectors pick the k.
                let wide = k * index.configuration.rescoreFactor
                let found = index.search(query, k: wide, efSearch: max(ef, wide), where: allowed.contains)
                results = try tableExactSearch(query, k: k, among: found.map(\.id))
            } else {
                results = index.search(query, k: k, efSearch: ef, where: allowed.contains)
            }
        }
        return (results, SearchPlan(plan, index: kind, indexedVectors: total, matchingRows: ids.count))
    }

    /// The filter plan for this collection's HNSW index: ``codesOnlyPlan(matching:total:k:efSearch:)``
    /// when exact scans read the table, else `HNSWIndex.plan(matching:total:k:efSearch:)`.
    func filterPlan(matching: Int, total: Int, k: Int, efSearch: Int) -> HNSWFilterPlan {
        configuration.index.readsVectorsFromTable
            ? Self.codesOnlyPlan(matching: matching, total: total, k: k, efSearch: efSearch)
            : HNSWIndex.plan(matching: matching, total: total, k: k, efSearch: efSearch)
    }

    /// `HNSWIndex.plan(matching:total:k:efSearch:)` for a codes-only index, whose exact scan reads
    /// every matching row's vector from the table: about 16 times the per-row cost of the
    /// in-memory scan (measured on 58,029 × 384: 1.5-3 µs against 0.12-0.18 µs per row;
    /// BENCHMARKS.md, "In the store"). The in-memory rule scans while matching² ≤ 16 · ef · total
    /// and always up to 2,048 rows; dividing the scan's side by 16 gives matching² ≤ ef · total
    /// and always up to 128 rows.
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

    /// A row's stored vector as the index would take it (``annVector(_:column:)``), or nil.
    func tableVector(id: Int64) throws -> [Float]? {
        let statement = try connection.cachedStatement("SELECT embedding FROM \(schema.table) WHERE id = ?")
        var vector: [Float]?
        try statement.forEachRow([.integer(id)]) { row in vector = annVector(row, column: 0) }
        return vector
    }

    /// The exact k nearest among `ids` (every row when nil), from the table's float32 vectors.
    ///
    /// - Complexity: one statement with an indexed lookup per id, or one pass over the table;
    ///   O(n · dimension).
    func tableExactSearch(_ query: [Float], k: Int, among ids: [Int64]?) throws -> [Neighbor] {
        let metric = configuration.metric
        var top = TopK(k: k)
        if let ids {
            // One statement for all the ids (a lookup each by primary key), not one per id.
            let statement = try connection.cachedStatement(
                "SELECT id, embedding FROM \(schema.table) WHERE id IN (SELECT value FROM json_each(?))")
            try statement.forEachRow([.text(Self.jsonArray(ids))]) { row in
                if let vector = annVector(row, column: 1) {
                    _ = top.insert(id: row.int64(at: 0), distance: metric.distance(query, vector))
                }
            }
        } else {
            let statement = try connection.prepare(
                "SELECT id, embedding FROM \(schema.table) WHERE embedding IS NOT NULL")
            try statement.forEachRow { row in
                if let vector = annVector(row, column: 1) {
                    _ = top.insert(id: row.int64(at: 0), distance: metric.distance(query, vector))
                }
            }
        }
        return top.sortedResults()
    }

    /// The plan a search with this filter would use, without ranking anything.
    func explainSearch(topK: Int, filter: SearchFilter, exact: Bool) throws -> SearchPlan {
        try check(topK: topK)
        return try inSearchScope(loading: [state.vectors]) {
            let kind = configuration.index
            let ids = try candidates(filter)
            guard kind.isApproximate else {
                let count = try catchUp().count
                return SearchPlan(
                    strategy: .exactScan, index: kind, indexedVectors: count, matchingRows: ids?.count,
                    reason: ids.map { "flat index: exact scan over the \($0.count) rows passing the filter" }
                        ?? "flat index: exact scan over all \(count) vectors")
            }
            let index = try catchUpANN().index!
            let total = index.count
            if exact {
                return SearchPlan(
                    strategy: .exactScan, index: kind, indexedVectors: total, matchingRows: ids?.count,
                    reason: "exact requested: scan over \(ids.map { "the \($0.count) rows passing the filter" } ?? "all \(total) vectors")")
            }
            guard let ids else {
                return SearchPlan(
                    strategy: .graph, index: kind, indexedVectors: total, matchingRows: nil,
                    reason: "no filter: HNSW walk with efSearch \(max(index.efSearch, topK))")
            }
            let plan = filterPlan(matching: ids.count, total: total, k: topK, efSearch: index.efSearch)
            return SearchPlan(plan, index: kind, indexedVectors: total, matchingRows: ids.count)
        }
    }

    /// Vector search with a chosen exactness, returning the plan next to the results.
    func searchVectorExplained(
        _ query: [Float], topK: Int, filter: SearchFilter, exact: Bool, efSearch: Int? = nil
    ) throws -> ExplainedSearch {
        try check(topK: topK)
        return try inSearchScope(loading: [state.vectors]) {
            let (neighbors, plan) = try plannedNeighbors(query, k: topK, filter: filter, exact: exact, efSearch: efSearch)
            let stored = try self.rows(for: neighbors.map(\.id))
            let results = neighbors.enumerated().compactMap { offset, neighbor -> SearchResult? in
                guard let row = stored[neighbor.id] else { return nil }
                return SearchResult(
                    id: neighbor.id, content: row.content, source: row.source, metadata: row.metadata,
                    score: Double(configuration.metric.score(distance: neighbor.distance)),
                    distance: Double(neighbor.distance), vectorRank: offset + 1)
            }
            return ExplainedSearch(results: results, plan: plan)
        }
    }

    // MARK: Statistics

    func indexStatistics() throws -> IndexStatistics {
        let kind = configuration.index
        return state.indexes.lock.read {
            let watermark = max(state.indexes.currentWatermarkLocked, 0)
            guard let ann = state.ann else {
                let flat = state.flat
                return IndexStatistics(
                    kind: kind, origin: flat.isLoaded ? .table : .notLoaded, vectorCount: flat.count,
                    watermark: flat.isLoaded ? watermark : 0, snapshotWatermark: nil, loadSeconds: 0, replayedRows: 0)
            }
            guard let index = ann.index else {
                return IndexStatistics(
                    kind: kind, origin: .notLoaded, vectorCount: 0, watermark: 0, snapshotWatermark: nil,
                    loadSeconds: 0, replayedRows: 0)
            }
            return IndexStatistics(
                kind: kind, origin: ann.origin, vectorCount: index.count, watermark: watermark,
                snapshotWatermark: ann.savedWatermark, loadSeconds: ann.loadSeconds, replayedRows: ann.replayedRows)
        }
    }
}
